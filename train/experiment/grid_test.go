package experiment

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/train"
)

// a8a is the LibSVM a8a training file (a8a.t its test set), shared with
// train's tests.
const a8a = "../../testdata/libsvm/a8a"

// lrConfig is a fast logistic-regression run on a8a (as in train's tests).
func lrConfig(algo string) train.Config {
	c := train.Default()
	c.Dataset, c.DataDir, c.Algo = "libsvm", a8a, algo
	c.Partition, c.Batch, c.Eta0 = "iid", 1, 0.1
	c.Iters, c.EvalEvery, c.CheckpointEvery = 60, 10, 20
	c.LocalEvalSamples, c.GradSamples = 500, 50
	return c
}

func needA8A(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(a8a); err != nil {
		t.Fatalf("a8a, the LibSVM file the tests train on, is missing from testdata/libsvm: %v", err)
	}
}

// TestRunGrid runs a small compare grid, checks its report, and runs it
// again: finished runs must be read back, not repeated.
func TestRunGrid(t *testing.T) {
	needA8A(t)
	base := lrConfig(decentral.GTSTORM)
	base.Iters, base.CheckpointEvery = 20, 0
	cells := CompareCells(base, []string{decentral.DSGD, decentral.GTSTORM}, []string{"iid", "label"}, 2)
	out := t.TempDir()
	res, err := RunGrid(context.Background(), cells, out, train.Options{})
	if err != nil {
		t.Fatal(err)
	}
	md, _, err := WriteReport(out, "a8a", res, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"| algorithm | iid | label |", "| dsgd |", "| gt-storm / label |", " ± "} {
		if !strings.Contains(md, w) {
			t.Errorf("report lacks %q:\n%s", w, md)
		}
	}
	for _, f := range []string{TableFile, ResultsFile, CurvesFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	// A finished run's summary, dated far back: a repeated run would
	// write it again, dated now.
	sumPath := filepath.Join(out, "gt-storm-label", "seed2", train.SummaryFile)
	past := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(sumPath, past, past); err != nil {
		t.Fatal(err)
	}
	again, err := RunGrid(context.Background(), cells, out, train.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if after, err := os.Stat(sumPath); err != nil {
		t.Error(err)
	} else if !after.ModTime().Equal(past) {
		t.Errorf("a finished run of the grid was repeated: its summary is dated %v", after.ModTime())
	}
	if Report("a8a", again, true) != md {
		t.Error("the grid read back gives another report")
	}
}

// TestGridOwnsItsFolder: a grid refuses an --out holding other files or
// another grid unless Overwrite is set, and a setting that cannot change
// results (--workers) keeps finished runs.
func TestGridOwnsItsFolder(t *testing.T) {
	needA8A(t)
	base := lrConfig(decentral.DSGD)
	base.Iters, base.CheckpointEvery = 10, 0
	cells := []Cell{{Label: "a", Configs: Seeds(base, 1)}}

	foreign := t.TempDir()
	os.WriteFile(filepath.Join(foreign, "results.csv"), []byte("mine"), 0o644)
	if _, err := RunGrid(context.Background(), cells, foreign, train.Options{}); err == nil || !strings.Contains(err.Error(), "results.csv") {
		t.Errorf("folder with a user's file: err = %v, want a refusal naming it", err)
	}

	out := t.TempDir()
	if _, err := RunGrid(context.Background(), cells, out, train.Options{}); err != nil {
		t.Fatal(err)
	}
	sumPath := filepath.Join(out, "a", "seed1", train.SummaryFile)
	before, _ := os.Stat(sumPath)
	other := []Cell{{Label: "a", Configs: Seeds(base, 1)}}
	other[0].Configs[0].Eta0 = 0.2
	if _, err := RunGrid(context.Background(), other, out, train.Options{}); err == nil || !strings.Contains(err.Error(), "eta0") {
		t.Errorf("another grid into the folder: err = %v, want a refusal naming eta0", err)
	}
	time.Sleep(10 * time.Millisecond)
	workers := []Cell{{Label: "a", Configs: Seeds(base, 1)}}
	workers[0].Configs[0].Workers, workers[0].Configs[0].MaxMemory = 3, 1<<40
	if _, err := RunGrid(context.Background(), workers, out, train.Options{}); err != nil {
		t.Fatalf("same grid with another --workers: %v", err)
	}
	if after, _ := os.Stat(sumPath); !after.ModTime().Equal(before.ModTime()) {
		t.Error("a change of --workers repeated a finished run")
	}
	if _, err := RunGrid(context.Background(), other, out, train.Options{Overwrite: true}); err != nil {
		t.Errorf("another grid with Overwrite: %v", err)
	}

	dup := []Cell{{Label: "x", Configs: Seeds(base, 1)}, {Label: "y", Configs: Seeds(base, 1)}}
	if _, err := RunGrid(context.Background(), dup, t.TempDir(), train.Options{}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("two cells of the same settings: err = %v, want a refusal", err)
	}
}

// TestGridRecordsDivergence: a cell that diverges is recorded as such (in
// the table, results.csv and the plot legend) and the grid goes on; a rerun
// does not run it again.
func TestGridRecordsDivergence(t *testing.T) {
	needA8A(t)
	base := lrConfig(decentral.GTSTORM)
	base.Iters, base.CheckpointEvery, base.EvalEvery = 20, 0, 5
	cells, err := sweepCells(base, "eta0", []string{"3e38", "0.1"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	res, err := RunGrid(context.Background(), cells, out, train.Options{})
	if err != nil {
		t.Fatalf("a diverged cell stopped the grid: %v", err)
	}
	if res[0].Summaries[0].Diverged == "" || res[1].Summaries[0].Diverged != "" {
		t.Fatalf("diverged: %q and %q; want the first cell only", res[0].Summaries[0].Diverged, res[1].Summaries[0].Diverged)
	}
	md, _, err := WriteReport(out, "a8a", res, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md, "| eta0=3e38 (diverged) |") {
		t.Errorf("table does not mark the diverged cell:\n%s", md)
	}
	csvText, _ := os.ReadFile(filepath.Join(out, ResultsFile))
	if !strings.Contains(string(csvText), `"diverged after round`) {
		t.Errorf("results.csv does not record the divergence:\n%s", csvText)
	}
	sumPath := filepath.Join(out, "eta0-3e38", "seed1", train.SummaryFile)
	before, _ := os.Stat(sumPath)
	time.Sleep(10 * time.Millisecond)
	if _, err := RunGrid(context.Background(), cells, out, train.Options{}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(sumPath); !after.ModTime().Equal(before.ModTime()) {
		t.Error("the rerun ran the diverged cell again")
	}
}

// TestGridRefusesSameCells: cells that differ only in how a setting is
// spelt, or in a default spelt out, are one cell run twice: refused before
// anything runs.
func TestGridRefusesSameCells(t *testing.T) {
	choco := train.Default()
	choco.Algo = decentral.CHOCO
	sweep := func(param string, values ...string) []Cell {
		cells, err := sweepCells(choco, param, values, 1)
		if err != nil {
			t.Fatal(err)
		}
		return cells
	}
	for name, cells := range map[string][]Cell{
		"choco,choco:none":       CompareCells(train.Default(), []string{"choco", "choco:none"}, []string{"iid"}, 1),
		"qsgd:7,qsgd:07":         CompareCells(train.Default(), []string{"choco:qsgd:7", "choco:qsgd:07"}, []string{"iid"}, 1),
		"compress=topk:0.1,0.10": sweep("compress", "topk:0.1", "topk:0.10"),
		"gamma=0,default":        sweep("gamma", "0", "0.05"),
	} {
		out := filepath.Join(t.TempDir(), "grid")
		_, err := RunGrid(context.Background(), cells, out, train.Options{})
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
	cells, err := NetworkCells(CompareCells(train.Default(), []string{"dsgd"}, []string{"iid"}, 1), []string{"1ms/1Gbit"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = RunGrid(context.Background(), cells, t.TempDir(), train.Options{})
	var ce *train.ConfigError
	if !errors.As(err, &ce) || ce.Flag != "compute" {
		t.Errorf("grid on 1ms/1Gbit without --compute: %v, want a --compute error", err)
	}
	if _, err := NetworkCells(cells, []string{"0/0"}); err == nil || !strings.Contains(err.Error(), "0/0") {
		t.Errorf("--networks 0/0: %v, want refused", err)
	}
	withCompute := train.Default()
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

// TestGridRecordsRefusedCell: a grid whose D² cell cannot use its graphs
// runs the other cells and reports that one as refused, with the reason in
// results.csv.
func TestGridRecordsRefusedCell(t *testing.T) {
	needA8A(t)
	base := lrConfig(decentral.DSGD)
	base.Mixing, base.LinkDrop, base.Iters, base.EvalEvery, base.CheckpointEvery = graph.MixMetropolis, 0.3, 200, 100, 0
	cells := CompareCells(base, []string{decentral.D2, decentral.DSGD}, []string{"iid"}, 1)
	out := t.TempDir()
	res, err := RunGrid(context.Background(), cells, out, train.Options{})
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

func TestSweepCellsOfOneVary(t *testing.T) {
	cells, err := sweepCells(train.Default(), "rho", []string{"0.1", "10"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 2 || cells[1].Configs[0].Rho != 10 || cells[1].Configs[1].Seed != train.Default().Seed+1 {
		t.Errorf("cells = %+v", cells)
	}
	for _, bad := range [][2]string{{"rho", "x"}, {"nodes", "1.5"}, {"dampening", "1"}} {
		if _, err := sweepCells(train.Default(), bad[0], []string{bad[1]}, 1); err == nil {
			t.Errorf("sweepCells(%s=%s) accepted", bad[0], bad[1])
		}
	}
}

// TestBudget: a budget of samples buys each algorithm the most rounds that
// stay within it, and a run of those rounds draws that many samples.
func TestBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("sample budgets: one goroutine's grid of runs, 5 to 10 times slower under -race: experiment starts no goroutines of its own, and TestRunGrid runs a grid, and the train tests the runs, under it")
	}
	needA8A(t)
	for _, bad := range []string{"", "samples", "rounds=10", "samples=0", "samples=-3", "samples=x", "samples=1.5k"} {
		if _, err := ParseBudget(bad); err == nil {
			t.Errorf("ParseBudget(%q) accepted", bad)
		}
	}
	b, err := ParseBudget("samples=3k")
	if err != nil || b.Samples != 3000 {
		t.Fatalf("ParseBudget(samples=3k) = %+v, %v", b, err)
	}
	rounds := map[string]int{}
	for _, algo := range decentral.Algorithms() {
		cfg := lrConfig(algo)
		cfg.Batch, cfg.EvalEvery, cfg.CheckpointEvery = 4, 50, 0
		cfg = cfg.WithKnob("period", 50)
		cfg = cfg.WithoutForeignKnobs() // --period is D-GET's
		r, err := b.Rounds(cfg)
		if err != nil {
			t.Fatalf("%s: %v", algo, err)
		}
		rounds[algo] = r
		cost := decentral.Cost{Batch: cfg.Batch, Full: cfg.TrainSamples() / cfg.Nodes}
		meth, err := cfg.Method()
		if err != nil {
			t.Fatal(err)
		}
		within := decentral.SamplesAfter(meth, r, cost)
		over := decentral.SamplesAfter(meth, r+1, cost)
		if within > b.Samples || over <= b.Samples {
			t.Errorf("%s: %d rounds draw %d samples and %d rounds %d; budget %d", algo, r, within, r+1, over, b.Samples)
		}
		cfg.Iters = r
		sum, err := train.Train(context.Background(), cfg, train.Options{Out: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		// Shares differ by at most one sample, so each large batch may
		// differ from the mean share by one per node.
		perNode := float64(sum.Samples) / float64(cfg.Nodes)
		q := cmp.Or(cfg.Knobs.Int("period"), decentral.DefaultPeriod)
		if d := perNode - float64(within); d < -float64(r/q+1) || d > float64(r/q+1) {
			t.Errorf("%s: %.1f samples per node, the budget's rounds predict %d", algo, perNode, within)
		}
	}
	// GT-STORM draws one batch at Init and two a round; DSGD one a round.
	if d := rounds[decentral.DSGD] - 2*rounds[decentral.GTSTORM]; d < 0 || d > 2 {
		t.Errorf("dsgd gets %d rounds and gt-storm %d: want about twice as many", rounds[decentral.DSGD], rounds[decentral.GTSTORM])
	}
	if rounds[decentral.DGET] >= rounds[decentral.GTSTORM] {
		t.Errorf("d-get gets %d rounds, gt-storm %d: its large batches should cost it rounds", rounds[decentral.DGET], rounds[decentral.GTSTORM])
	}
	cfg := lrConfig(decentral.DGET)
	if _, err := (Budget{Samples: 10}).Rounds(cfg); err == nil {
		t.Error("a budget below one round of d-get accepted")
	}
}

// TestNetworkCells: --networks runs every cell on each network, and a
// report of simulated runs plots against simulated seconds and tabulates
// the time to the target.
func TestNetworkCells(t *testing.T) {
	base := train.Default()
	base.TargetAcc = 0.5
	cells, err := NetworkCells(CompareCells(base, []string{"dsgd", "choco:topk:0.01"}, []string{"label"}, 1), []string{"1ms/1Gbit", "50ms/10Mbit"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 4 || cells[3].Label != "choco:topk:0.01 / label / 50ms/10Mbit" {
		t.Fatalf("cells %v", cells)
	}
	c := cells[3].Configs[0]
	if c.Algo != decentral.CHOCO || c.Knobs.String("compress") != "topk:0.01" || c.LinkLatency != 0.05 || c.LinkBandwidth != 1e7 {
		t.Errorf("cell config %+v", c)
	}
	if _, err := NetworkCells(cells, []string{"fast"}); err == nil {
		t.Error("--networks fast accepted")
	}
	var res []CellResult
	for k, cell := range cells {
		rows := []train.Row{{Round: 0, SimSeconds: 0}, {Round: 10, TestAcc: 0.4, SimSeconds: float64(k + 1)}, {Round: 20, TestAcc: 0.6, SimSeconds: float64(2 * (k + 1))}}
		if k == 2 {
			rows[2].TestAcc = 0.45 // never reaches 0.5
		}
		res = append(res, CellResult{Cell: cell, Summaries: []*train.Summary{{}}, Rows: [][]train.Row{rows}})
	}
	md := Report("t", res, true)
	for _, want := range []string{
		"| dsgd / label / 1ms/1Gbit | 1 of 1 | 20 | 0 | 0 | 2.00 |",
		"| dsgd / label / 50ms/10Mbit | not reached | – | – | – | – |",
		"| choco:topk:0.01 | ",
		"label / 50ms/10Mbit",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	for i, cv := range gridCurves(res, true) {
		if cv.XLabel != "simulated seconds" || cv.Rounds[2] != float64(2*(i+1)) {
			t.Errorf("curve %s: x axis %q %v, want simulated seconds", cv.Label, cv.XLabel, cv.Rounds)
		}
	}
}

// TestCompareGammaOnlyForCHOCO: compare's --gamma sets the CHOCO cells
// only.
func TestCompareGammaOnlyForCHOCO(t *testing.T) {
	base := train.Default()
	base = base.WithKnob("gamma", 0.2)
	for _, cell := range CompareCells(base, []string{"dsgd", "choco", "choco:topk:0.1"}, []string{"iid"}, 1) {
		want := 0.0
		if strings.HasPrefix(cell.Label, "choco") {
			want = 0.2
		}
		if g := cell.Configs[0].Knobs.Float("gamma"); g != want {
			t.Errorf("%s: γ %v, want %v", cell.Label, g, want)
		}
	}
}

// TestGridInterruptedBeforeFirstRound: a signal before a grid's first
// run's first round is an interruption.
func TestGridInterruptedBeforeFirstRound(t *testing.T) {
	needA8A(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cells := []Cell{{Label: "a", Configs: Seeds(lrConfig(decentral.GTSTORM), 2)}}
	if _, err := RunGrid(ctx, cells, t.TempDir(), train.Options{}); !errors.Is(err, train.ErrInterrupted) {
		t.Errorf("grid: err = %v, want an interruption", err)
	}
}

// TestGridCellsOwnFolders: cells whose labels give the same folder name
// (data-dir=/d/a8a and data-dir=/d-a8a both give data-dir--d-a8a; case
// apart, A and a) each run in a folder of their own, and a rerun of the
// finished grid repeats none of them.
func TestGridCellsOwnFolders(t *testing.T) {
	if got, want := cellDirs([]Cell{{Label: "x=/d/a"}, {Label: "x=/d-a"}, {Label: "x=-d-a-2"}, {Label: "X=/D/A"}, {Label: "y"}}),
		[]string{"x--d-a", "x--d-a-3", "x--d-a-2", "X--D-A-4", "y"}; !slices.Equal(got, want) {
		t.Errorf("cellDirs = %q, want %q", got, want)
	}
	needA8A(t)
	base := lrConfig(decentral.DSGD)
	base.Iters, base.CheckpointEvery = 10, 0
	cells := []Cell{{Label: "data-dir=/d/a8a", Configs: Seeds(base, 1)}, {Label: "data-dir=/d-a8a", Configs: Seeds(base, 1)}}
	cells[1].Configs[0].Eta0 = 0.05
	out := t.TempDir()
	if _, err := RunGrid(context.Background(), cells, out, train.Options{}); err != nil {
		t.Fatal(err)
	}
	var sums []string
	for _, d := range cellDirs(cells) {
		sums = append(sums, filepath.Join(out, d, "seed1", train.SummaryFile))
	}
	if sums[0] == sums[1] {
		t.Fatalf("both cells run in %s", sums[0])
	}
	past := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, s := range sums {
		if err := os.Chtimes(s, past, past); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := RunGrid(context.Background(), cells, out, train.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, s := range sums {
		if fi, err := os.Stat(s); err != nil || !fi.ModTime().Equal(past) {
			t.Errorf("%s: the rerun of a finished grid repeated its run (%v)", s, err)
		}
	}
}
