package experiment

import (
	"cmp"
	"errors"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/train"
)

// TestVaryAttackNeedsByzantine: a varied attack that no cell runs, for
// want of Byzantine nodes, is refused as train refuses --attack without
// --byzantine, naming the attack; attack=none and attacks that some cell
// runs are not.
func TestVaryAttackNeedsByzantine(t *testing.T) {
	base := train.Default()
	withB := base
	withB.Byzantine, withB.Attack = "2", "signflip"
	for _, tc := range []struct {
		name string
		base train.Config
		vary []Vary
		bad  string // in the refusal; "" for none
	}{
		{"no byzantine", base, []Vary{{"attack", []string{"signflip", "gauss"}}}, "signflip would run clean"},
		{"none and an attack", base, []Vary{{"attack", []string{"none", "gauss"}}}, "gauss would run clean"},
		{"only B = 0", base, []Vary{{"byzantine", []string{"0"}}, {"attack", []string{"ipm"}}}, "ipm would run clean"},
		{"none alone", base, []Vary{{"attack", []string{"none"}}}, ""},
		{"varied B", base, []Vary{{"byzantine", []string{"0", "2"}}, {"attack", []string{"signflip", "gauss"}}}, ""},
		{"given B", withB, []Vary{{"attack", []string{"none", "signflip", "gauss"}}}, ""},
	} {
		_, err := VaryCells([]Cell{{Configs: Seeds(tc.base, 1)}}, tc.vary)
		var ce *train.ConfigError
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.bad != "" && (!errors.As(err, &ce) || ce.Flag != "vary" || !strings.HasPrefix(ce.Value.(string), "attack=") ||
			!strings.Contains(err.Error(), tc.bad) || !strings.Contains(err.Error(), "--byzantine")):
			t.Errorf("%s: %v, want a --vary attack=… error saying %q", tc.name, err, tc.bad)
		}
	}
}

// TestGridKnobsApplyToTheirCells: a method knob given for a grid sets the
// cells whose method takes it, in compare's cells and where sweep varies
// algo; a varied knob is left for Validate to refuse where it does not
// apply.
func TestGridKnobsApplyToTheirCells(t *testing.T) {
	base := train.Default()
	base = base.WithKnob("period", 50).WithKnob("big-batch", 40).WithKnob("gamma", 0.1).WithKnob("rho", 10.0)
	check := func(what string, cells []Cell) {
		t.Helper()
		for _, c := range cells {
			for _, cfg := range c.Configs {
				got := [4]float64{float64(cmp.Or(cfg.Knobs.Int("period"), decentral.DefaultPeriod)), float64(cfg.Knobs.Int("big-batch")), cfg.Knobs.Float("gamma"), cfg.Rho}
				want := [4]float64{decentral.DefaultPeriod, 0, 0, 0}
				switch cfg.Algo {
				case decentral.DGET:
					want[0], want[1] = 50, 40
				case decentral.CHOCO:
					want[2] = 0.1
				case decentral.GTSTORM:
					want[3] = 10
				}
				if got != want {
					t.Errorf("%s: %s: period, big-batch, gamma, rho %v, want %v", what, c.Label, got, want)
				}
				if err := cfg.Validate(); err != nil {
					t.Errorf("%s: %s: %v", what, c.Label, err)
				}
			}
		}
	}
	algos := []string{decentral.DSGD, decentral.DGET, decentral.GTSTORM, decentral.CHOCO}
	check("compare", CompareCells(base, algos, []string{"iid"}, 1))
	// A compressor named in --algos is the cell's own: refused where it
	// does not apply, not dropped.
	named := CompareCells(base, []string{"choco:topk:0.1", "dsgd:topk:0.1"}, []string{"iid"}, 1)
	if cfg := named[0].Configs[0]; cfg.Knobs.String("compress") != "topk:0.1" || cfg.Knobs.Float("gamma") != 0.1 || cfg.Validate() != nil {
		t.Errorf("choco:topk:0.1: knobs %v, %v", cfg.Knobs, cfg.Validate())
	}
	if cfg := named[1].Configs[0]; cfg.Knobs.String("compress") != "topk:0.1" || cfg.Validate() == nil {
		t.Errorf("dsgd:topk:0.1: compress %q dropped or accepted", cfg.Knobs.String("compress"))
	}
	swept, err := VaryCells([]Cell{{Configs: Seeds(base, 1)}}, []Vary{{"algo", algos}, {"nodes", []string{"8", "10"}}})
	if err != nil {
		t.Fatal(err)
	}
	check("sweep --vary algo", swept)

	varied, err := VaryCells([]Cell{{Configs: Seeds(base, 1)}}, []Vary{{"algo", []string{"dsgd", "d-get"}}, {"period", []string{"10", "20"}}})
	if err != nil {
		t.Fatal(err)
	}
	if cfg := varied[0].Configs[0]; cfg.Algo != decentral.DSGD || cfg.Knobs.Int("period") != 10 || cfg.Validate() == nil {
		t.Errorf("%s: period %d, refused %v; want the varied period kept, and refused", varied[0].Label, cfg.Knobs.Int("period"), cfg.Validate())
	}
}

// TestStatKeepsZeroSpread: a figure over several seeds says "± 0" when
// they agree, so that it does not read as a single run; one seed has no
// spread to show.
func TestStatKeepsZeroSpread(t *testing.T) {
	sums := func(xs ...float64) []*train.Summary {
		out := make([]*train.Summary, len(xs))
		for i, x := range xs {
			out[i] = &train.Summary{Samples: int64(x)}
		}
		return out
	}
	samples := func(s *train.Summary) float64 { return float64(s.Samples) }
	for _, tc := range []struct {
		sums       []*train.Summary
		fmt, short string
	}{
		{sums(100010), "100010", "100010.00"},
		{sums(100010, 100010, 100010), "100010 ± 0", "100010.00 ± 0.00"},
		{sums(100, 300), "200 ± 141", "200.00 ± 141.42"},
	} {
		s := statOf(tc.sums, samples)
		if got := s.fmt("%.0f"); got != tc.fmt {
			t.Errorf("%d seeds: %q, want %q", len(tc.sums), got, tc.fmt)
		}
		if got := s.short(); got != tc.short {
			t.Errorf("%d seeds, short: %q, want %q", len(tc.sums), got, tc.short)
		}
	}
}
