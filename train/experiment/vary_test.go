package experiment

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/train"
)

// labels returns the cells' labels.
func labels(cells []Cell) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = c.Label
	}
	return out
}

// TestVaryCells: repeated --vary gives the cartesian product, the first
// outermost, after compare's own cells; a combination without lying nodes
// is one clean cell per rule, run once, whatever the attacks listed.
func TestVaryCells(t *testing.T) {
	base := train.Default()
	for _, tc := range []struct {
		name  string
		cells []Cell
		vary  []Vary
		want  []string
	}{
		{"one setting", []Cell{{Configs: Seeds(base, 2)}},
			[]Vary{{"rho", []string{"1", "10"}}},
			[]string{"rho=1", "rho=10"}},
		{"product", []Cell{{Configs: Seeds(base, 1)}},
			[]Vary{{"topology", []string{"er", "ring"}}, {"rho", []string{"1", "10"}}},
			[]string{"topology=er / rho=1", "topology=er / rho=10", "topology=ring / rho=1", "topology=ring / rho=10"}},
		{"after compare's cells", CompareCells(base, []string{"dsgd", "gt-storm"}, []string{"label"}, 1),
			[]Vary{{"topology", []string{"er", "ring"}}},
			[]string{"dsgd / label / topology=er", "dsgd / label / topology=ring", "gt-storm / label / topology=er", "gt-storm / label / topology=ring"}},
		{"study: one clean cell per rule", []Cell{{Configs: Seeds(base, 3)}},
			[]Vary{{"byzantine", []string{"0", "2"}}, {"attack", []string{"none", "signflip:1", "alie"}}, {"aggregate", []string{"mean", "clip"}}},
			[]string{"clean / aggregate=mean", "clean / aggregate=clip",
				"byzantine=2 / attack=signflip:1 / aggregate=mean", "byzantine=2 / attack=signflip:1 / aggregate=clip",
				"byzantine=2 / attack=alie / aggregate=mean", "byzantine=2 / attack=alie / aggregate=clip"}},
		{"attack outermost", []Cell{{Configs: Seeds(base, 1)}},
			[]Vary{{"attack", []string{"signflip", "gauss"}}, {"byzantine", []string{"0", "1"}}},
			[]string{"clean", "attack=signflip / byzantine=1", "attack=gauss / byzantine=1"}},
		{"attack none, then B", []Cell{{Configs: Seeds(base, 1)}},
			[]Vary{{"attack", []string{"none", "ipm"}}, {"byzantine", []string{"1", "3"}}},
			[]string{"clean", "attack=ipm / byzantine=1", "attack=ipm / byzantine=3"}},
	} {
		cells, err := VaryCells(tc.cells, tc.vary)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := labels(cells); !slices.Equal(got, tc.want) {
			t.Errorf("%s: cells\n%q\nwant\n%q", tc.name, got, tc.want)
		}
		for _, c := range cells {
			if len(c.Configs) != len(tc.cells[0].Configs) {
				t.Errorf("%s: %s has %d seeds", tc.name, c.Label, len(c.Configs))
			}
			for _, cfg := range c.Configs {
				if err := cfg.Validate(); err != nil {
					t.Errorf("%s: %s: %v", tc.name, c.Label, err)
				}
			}
		}
	}

	study, err := VaryCells([]Cell{{Configs: Seeds(base, 1)}},
		[]Vary{{"byzantine", []string{"0", "2"}}, {"attack", []string{"signflip:1"}}, {"aggregate", []string{"trim:1"}}})
	if err != nil {
		t.Fatal(err)
	}
	clean, attacked := study[0].Configs[0], study[1].Configs[0]
	if clean.Byzantine != "" || clean.Attack != "" || clean.Aggregate != "trim:1" || !slices.Equal(study[0].Vary, []string{"clean", "aggregate=trim:1"}) {
		t.Errorf("clean cell %+v, vary %q", clean, study[0].Vary)
	}
	if attacked.Byzantine != "2" || attacked.Attack != "signflip:1" {
		t.Errorf("attacked cell byzantine %q attack %q", attacked.Byzantine, attacked.Attack)
	}

	// Byzantine nodes without an attack are not clean: the grid refuses them.
	noAttack, err := VaryCells([]Cell{{Configs: Seeds(base, 1)}}, []Vary{{"byzantine", []string{"0", "2"}}})
	if err != nil || !slices.Equal(labels(noAttack), []string{"clean", "byzantine=2"}) || noAttack[1].Configs[0].Validate() == nil {
		t.Errorf("byzantine=0,2 without an attack: cells %q, %v", labels(noAttack), err)
	}

	for _, bad := range [][]Vary{
		{{"dampening", []string{"1"}}},
		{{"rho", []string{"1"}}, {"rho", []string{"2"}}},
		{{"rho", []string{"1", "1"}}},
		{{"rho", []string{"x"}}},
	} {
		_, err := VaryCells([]Cell{{Configs: Seeds(base, 1)}}, bad)
		var ce *train.ConfigError
		if !errors.As(err, &ce) || ce.Flag != "vary" {
			t.Errorf("VaryCells(%v): %v, want a --vary ConfigError", bad, err)
		}
	}
}

// TestParseVary: NAME=V1,V2,…, blanks dropped; anything else refused.
func TestParseVary(t *testing.T) {
	v, err := ParseVary("attack=none, signflip:1,,alie")
	if err != nil || v.Name != "attack" || !slices.Equal(v.Values, []string{"none", "signflip:1", "alie"}) {
		t.Errorf("ParseVary = %+v, %v", v, err)
	}
	// An MLP's widths and dropout rate stay in its value.
	v, err = ParseVary("model=mlp:64,32@0.5,mlp:16,8,cifar-cnn,mlp:4@0.25,2")
	if want := []string{"mlp:64,32@0.5", "mlp:16,8", "cifar-cnn", "mlp:4@0.25", "2"}; err != nil || !slices.Equal(v.Values, want) {
		t.Errorf("ParseVary = %+v, %v, want values %q", v, err, want)
	}
	// So do a ViT's and a CCT's numbers; a CCT's name ends at its tokenizer.
	v, err = ParseVary("model=vit:4,16,2,2,2,cct:2,2,1,16/3x2,2,cct:7/3x1,mnist-cnn,vit:7,8,1,2")
	if want := []string{"vit:4,16,2,2,2", "cct:2,2,1,16/3x2", "2", "cct:7/3x1", "mnist-cnn", "vit:7,8,1,2"}; err != nil || !slices.Equal(v.Values, want) {
		t.Errorf("ParseVary = %+v, %v, want values %q", v, err, want)
	}
	for _, bad := range []string{"", "rho", "rho=", "=1,2", "rho=,"} {
		if _, err := ParseVary(bad); err == nil {
			t.Errorf("ParseVary(%q) accepted", bad)
		}
	}
}

// TestRobustStudyGrid runs a small study (two seeds) on a8a: its clean
// cell runs once per rule, with no Byzantine nodes; the report has the
// attack × rule tables of accuracy and loss, which agree with the long
// table; and the figure draws every curve in its own colour and style.
func TestRobustStudyGrid(t *testing.T) {
	if raceEnabled {
		t.Skip("a Byzantine study: one goroutine's grid of runs, 5 to 10 times slower under -race: experiment starts no goroutines of its own, and TestRunGrid runs a grid, and the train tests the runs, under it")
	}
	needA8A(t)
	base := lrConfig(decentral.DSGD)
	base.Nodes, base.Iters, base.CheckpointEvery = 10, 20, 0
	cells, err := VaryCells(CompareCells(base, []string{decentral.DSGD}, []string{"iid"}, 2),
		[]Vary{{"byzantine", []string{"0", "2"}}, {"attack", []string{"signflip:1", "gauss:0.5"}}, {"aggregate", []string{"mean", "clip:0.01"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 6 {
		t.Fatalf("%d cells %q, want 6: a clean one per rule and two attacks per rule", len(cells), labels(cells))
	}
	out := t.TempDir()
	res, err := RunGrid(context.Background(), cells, out, train.Options{})
	if err != nil {
		t.Fatal(err)
	}
	md, _, err := WriteReport(out, "study", res, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"Honest nodes' test accuracy of x̄, attack × aggregation (dsgd / iid):",
		"Honest nodes' test loss of x̄, attack × aggregation (dsgd / iid):",
		"| attack | mean | clip:0.01 |", "| clean |", "| signflip:1, B = 2 |", "| gauss:0.5, B = 2 |",
		"| dsgd / iid / clean / aggregate=mean |",
	} {
		if !strings.Contains(md, w) {
			t.Errorf("report lacks %q:\n%s", w, md)
		}
	}
	if strings.Contains(md, "| algorithm |") {
		t.Errorf("a study's report has the algorithms × partitions table:\n%s", md)
	}
	entries, _ := os.ReadDir(out)
	var clean []string
	for _, e := range entries {
		if strings.Contains(e.Name(), "clean") {
			clean = append(clean, e.Name())
		}
	}
	if len(clean) != 2 {
		t.Errorf("clean run folders %q, want one per rule", clean)
	}
	sum, err := os.ReadFile(filepath.Join(out, "dsgd-iid-clean-aggregate-mean", "seed1", train.SummaryFile))
	if err != nil || strings.Contains(string(sum), `"attack"`) {
		t.Errorf("clean run's summary (%v) names an attack:\n%s", err, sum)
	}
	// The pivot's clean, mean cell is the long table's.
	acc := statOf(res[0].Summaries, func(s *train.Summary) float64 { return float64(s.FinalTestAcc) }).fmt("%.4f")
	if !strings.Contains(md, "| clean | "+acc+" |") {
		t.Errorf("pivot's clean / mean cell is not %s:\n%s", acc, md)
	}
	checkTableAgainstResults(t, out)
	seen := map[[2]int]string{}
	for _, c := range gridCurves(res, true) {
		key := [2]int{c.Colour, c.Style}
		if prev, dup := seen[key]; dup {
			t.Errorf("%s and %s are drawn alike", prev, c.Label)
		}
		seen[key] = c.Label
	}
}

// TestRobustPivotMarksFailures: a study's cell whose runs all diverged
// says so in the pivot, one whose runs partly diverged counts them.
func TestRobustPivotMarksFailures(t *testing.T) {
	cells, err := VaryCells([]Cell{{Configs: Seeds(train.Default(), 2)}},
		[]Vary{{"byzantine", []string{"0", "2"}}, {"attack", []string{"signflip"}}, {"aggregate", []string{"mean", "median"}}})
	if err != nil {
		t.Fatal(err)
	}
	ok := &train.Summary{FinalTestAcc: 0.9}
	bad := &train.Summary{Diverged: "after round 3"}
	runs := [][]*train.Summary{{ok, ok}, {ok, ok}, {bad, bad}, {bad, ok}}
	var res []CellResult
	for i, c := range cells {
		res = append(res, CellResult{Cell: c, Summaries: runs[i], Rows: make([][]train.Row, 2)})
	}
	md := Report("t", res, false)
	for _, w := range []string{"| signflip, B = 2 | diverged | 0.9000 (1 of 2 diverged) |", "| clean | 0.9000 ± 0.0000 | 0.9000 ± 0.0000 |"} {
		if !strings.Contains(md, w) {
			t.Errorf("report lacks %q:\n%s", w, md)
		}
	}
}
