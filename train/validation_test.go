package train

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
)

// TestGammaOnlyForCHOCO: γ is CHOCO's, so another algorithm refuses it, and
// compare's --gamma sets the CHOCO cells only.
func TestGammaOnlyForCHOCO(t *testing.T) {
	for _, c := range []struct {
		algo  string
		gamma float64
		ok    bool
	}{
		{decentral.CHOCO, 0.1, true},
		{decentral.CHOCO, 0, true},
		{decentral.DSGD, 0, true},
		{decentral.DSGD, 0.1, false},
		{decentral.GTSTORM, 0.5, false},
	} {
		cfg := Default()
		cfg.Algo, cfg.Gamma = c.algo, c.gamma
		err := cfg.Validate()
		var ce *ConfigError
		if c.ok != (err == nil) || !c.ok && (!errors.As(err, &ce) || ce.Flag != "gamma") {
			t.Errorf("%s with γ %v: %v", c.algo, c.gamma, err)
		}
	}
	base := Default()
	base.Gamma = 0.2
	for _, cell := range CompareCells(base, []string{"dsgd", "choco", "choco:topk:0.1"}, []string{"iid"}, 1) {
		want := 0.0
		if strings.HasPrefix(cell.Label, "choco") {
			want = 0.2
		}
		if g := cell.Configs[0].Gamma; g != want {
			t.Errorf("%s: γ %v, want %v", cell.Label, g, want)
		}
	}
}

// TestResolvedNamesCompressor: spellings of one compressor resolve to one
// setting, so that a grid sees them as the same cell.
func TestResolvedNamesCompressor(t *testing.T) {
	for spec, want := range map[string]string{
		"":          "",
		"none":      "",
		"qsgd:07":   "qsgd:7",
		"topk:0.10": "topk:0.1",
		"randk:1":   "randk:1",
		"sign":      "sign",
	} {
		cfg := Default()
		cfg.Algo, cfg.Compress = decentral.CHOCO, spec
		r, err := cfg.Resolved()
		if err != nil || r.Compress != want {
			t.Errorf("--compress %q resolves to %q (%v), want %q", spec, r.Compress, err, want)
		}
	}
}

// TestGridRefusesSameCells: cells that differ only in how a setting is
// spelt, or in a default spelt out, are one cell run twice: refused before
// anything runs.
func TestGridRefusesSameCells(t *testing.T) {
	choco := Default()
	choco.Algo = decentral.CHOCO
	sweep := func(param string, values ...string) []Cell {
		cells, err := SweepCells(choco, param, values, 1)
		if err != nil {
			t.Fatal(err)
		}
		return cells
	}
	for name, cells := range map[string][]Cell{
		"choco,choco:none":       CompareCells(Default(), []string{"choco", "choco:none"}, []string{"iid"}, 1),
		"qsgd:7,qsgd:07":         CompareCells(Default(), []string{"choco:qsgd:7", "choco:qsgd:07"}, []string{"iid"}, 1),
		"compress=topk:0.1,0.10": sweep("compress", "topk:0.1", "topk:0.10"),
		"gamma=0,default":        sweep("gamma", "0", "0.05"),
	} {
		out := filepath.Join(t.TempDir(), "grid")
		_, err := RunGrid(context.Background(), cells, out, Options{})
		var dup *DuplicateCellsError
		if !errors.As(err, &dup) {
			t.Errorf("%s: %v, want a DuplicateCellsError", name, err)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: the refused grid created %s", name, out)
		}
	}
}

// TestGridOnNetworkNeedsCompute: cells on a simulated network are charged
// one given compute time, not each its own measurement; and a network of
// no latency and unlimited bandwidth is no network.
func TestGridOnNetworkNeedsCompute(t *testing.T) {
	cells, err := NetworkCells(CompareCells(Default(), []string{"dsgd"}, []string{"iid"}, 1), []string{"1ms/1Gbit"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = RunGrid(context.Background(), cells, t.TempDir(), Options{})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Flag != "compute" {
		t.Errorf("grid on 1ms/1Gbit without --compute: %v, want a --compute error", err)
	}
	if _, err := NetworkCells(cells, []string{"0/0"}); err == nil || !strings.Contains(err.Error(), "0/0") {
		t.Errorf("--networks 0/0: %v, want refused", err)
	}
	withCompute := Default()
	withCompute.Compute = 0.001
	if _, err := NetworkCells(CompareCells(withCompute, []string{"dsgd"}, []string{"iid"}, 1), []string{"0/0"}); err != nil {
		t.Errorf("--networks 0/0 with --compute: %v (compute alone is a simulated network)", err)
	}
}

// TestBudgetBounds: the largest budget is named in the message.
func TestBudgetBounds(t *testing.T) {
	if b, err := ParseBudget("samples=4G"); err != nil || b.Samples != 4e9 {
		t.Errorf("samples=4G: %v, %v", b, err)
	}
	_, err := ParseBudget("samples=9223372036854775807")
	if err == nil || !strings.Contains(err.Error(), "4611686018427387904") {
		t.Errorf("samples=2⁶³−1: %v, want the bound named", err)
	}
}

// TestBigBatchWithinShare: a D-GET large batch larger than a node's share
// is refused, naming the share.
func TestBigBatchWithinShare(t *testing.T) {
	needA8A(t)
	cfg := lrConfig(decentral.DGET)
	cfg.BigBatch = 100000
	_, err := Train(context.Background(), cfg, Options{Out: t.TempDir()})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Flag != "big-batch" || !strings.Contains(ce.Want, "share") {
		t.Fatalf("--big-batch 100000: %v, want a --big-batch error naming the share", err)
	}
}

// TestTrainRefusesForeignFolder: a folder holding files a run does not
// write is refused, and with Overwrite run into with those files kept.
func TestTrainRefusesForeignFolder(t *testing.T) {
	needA8A(t)
	dir := t.TempDir()
	for _, ours := range []string{RankCheckpointFile(40), "ranks.txt", ".metrics.csv.tmp123"} {
		if err := os.WriteFile(filepath.Join(dir, ours), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := lrConfig(decentral.DSGD)
	cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = 10, 10, 0
	_, err := Train(context.Background(), cfg, Options{Out: dir})
	var nr *NotRunFolderError
	if !errors.As(err, &nr) || len(nr.Names) != 1 || nr.Names[0] != "notes.txt" {
		t.Fatalf("train into a folder with notes.txt: %v, want a NotRunFolderError naming it", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ConfigFile)); err == nil {
		t.Error("the refused run wrote config.json")
	}
	if _, err := Train(context.Background(), cfg, Options{Out: dir, Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(notes); err != nil || string(b) != "mine" {
		t.Errorf("notes.txt after an overwriting run: %q, %v", b, err)
	}
}

// TestD2GraphsCheckedUpFront: D² with Metropolis weights on failing links
// meets a W_t with λ_min ≤ −1/3 at round 124 of this seed; the run is
// refused before anything is written, naming the round, while algorithms
// that can use any W run.
func TestD2GraphsCheckedUpFront(t *testing.T) {
	needA8A(t)
	for _, c := range []struct {
		algo, mixing string
		refused      bool
	}{
		{decentral.D2, decentral.MixMetropolis, true},
		{decentral.D2, decentral.MixLaplacian, false},
		{decentral.DSGD, decentral.MixMetropolis, false},
	} {
		cfg := lrConfig(c.algo)
		cfg.Mixing, cfg.LinkDrop, cfg.Iters = c.mixing, 0.3, 1000
		err := cfg.checkGraphs()
		var ce *ConfigError
		if c.refused != (err != nil) || c.refused && (!errors.As(err, &ce) || ce.Flag != "link-drop" || !strings.Contains(ce.Want, "round 124")) {
			t.Errorf("%s, %s weights, links failing w.p. 0.3: %v", c.algo, c.mixing, err)
		}
	}
	cfg := lrConfig(decentral.D2)
	cfg.Mixing, cfg.LinkDrop, cfg.Iters = decentral.MixMetropolis, 0.3, 1000
	out := filepath.Join(t.TempDir(), "run")
	if _, err := Train(context.Background(), cfg, Options{Out: out}); err == nil {
		t.Fatal("D² on failing Metropolis links trained")
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the refused run created %s", out)
	}
}

// TestBlownApartIsDivergence: D² on a graph that loses 90% of its links
// each round grows the nodes' disagreement geometrically while every value
// stays finite; the run stops as diverged instead of reporting a finished
// run with a consensus error of 1e52.
func TestBlownApartIsDivergence(t *testing.T) {
	needA8A(t)
	cfg := lrConfig(decentral.D2)
	cfg.LinkDrop, cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = 0.9, 1000, 100, 200
	out := t.TempDir()
	_, err := Train(context.Background(), cfg, Options{Out: out})
	if !errors.Is(err, decentral.ErrDiverged) {
		t.Fatalf("D² with --link-drop 0.9: %v, want a divergence", err)
	}
	f, err := os.Open(filepath.Join(out, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum, err := ReadSummary(f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.Diverged, "blown apart") || !(float64(sum.ConsensusError) <= blownApart) {
		t.Errorf("summary: diverged %q, consensus error %v", sum.Diverged, float64(sum.ConsensusError))
	}
}

// TestGridRecordsRefusedCell: a grid whose D² cell cannot use its graphs
// runs the other cells and reports that one as refused, with the reason in
// results.csv.
func TestGridRecordsRefusedCell(t *testing.T) {
	needA8A(t)
	base := lrConfig(decentral.DSGD)
	base.Mixing, base.LinkDrop, base.Iters, base.EvalEvery, base.CheckpointEvery = decentral.MixMetropolis, 0.3, 200, 100, 0
	cells := CompareCells(base, []string{decentral.D2, decentral.DSGD}, []string{"iid"}, 1)
	out := t.TempDir()
	res, err := RunGrid(context.Background(), cells, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := res[0].Summaries[0]; !strings.Contains(s.Refused, "round 124") || len(res[0].Rows[0]) != 0 {
		t.Errorf("d2 cell: refused %q, %d rows", s.Refused, len(res[0].Rows[0]))
	}
	if s := res[1].Summaries[0]; s.Refused != "" || s.CommRounds != 200 {
		t.Errorf("dsgd cell: refused %q after %d rounds", s.Refused, s.CommRounds)
	}
	md, _, err := WriteReport(out, "refused", res, true)
	if err != nil {
		t.Fatal(err)
	}
	// λ comes from the run that started, not from the refused one.
	if !strings.Contains(md, "d2 / iid (refused)") || !strings.Contains(md, "topology with links failing w.p. 0.3 per round (λ = 0.") {
		t.Errorf("table does not mark the refused cell:\n%s", md)
	}
	csv, err := os.ReadFile(filepath.Join(out, ResultsFile))
	if err != nil || !strings.Contains(string(csv), "refused: --link-drop 0.3") {
		t.Errorf("results.csv: %v\n%s", err, csv)
	}
}
