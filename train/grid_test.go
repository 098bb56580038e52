package train

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral"
)

// TestRunGrid runs a small compare grid, checks its report, and runs it
// again: finished runs must be read back, not repeated.
func TestRunGrid(t *testing.T) {
	needA8A(t)
	base := lrConfig(decentral.GTSTORM)
	base.Iters, base.CheckpointEvery = 20, 0
	cells := CompareCells(base, []string{decentral.DSGD, decentral.GTSTORM}, []string{"iid", "label"}, 2)
	out := t.TempDir()
	res, err := RunGrid(context.Background(), cells, out, Options{})
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
	sumPath := filepath.Join(out, "gt-storm-label", "seed2", SummaryFile)
	before, err := os.Stat(sumPath)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	again, err := RunGrid(context.Background(), cells, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(sumPath)
	if !after.ModTime().Equal(before.ModTime()) {
		t.Error("a finished run of the grid was repeated")
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
	if _, err := RunGrid(context.Background(), cells, foreign, Options{}); err == nil || !strings.Contains(err.Error(), "results.csv") {
		t.Errorf("folder with a user's file: err = %v, want a refusal naming it", err)
	}

	out := t.TempDir()
	if _, err := RunGrid(context.Background(), cells, out, Options{}); err != nil {
		t.Fatal(err)
	}
	sumPath := filepath.Join(out, "a", "seed1", SummaryFile)
	before, _ := os.Stat(sumPath)
	other := []Cell{{Label: "a", Configs: Seeds(base, 1)}}
	other[0].Configs[0].Eta0 = 0.2
	if _, err := RunGrid(context.Background(), other, out, Options{}); err == nil || !strings.Contains(err.Error(), "eta0") {
		t.Errorf("another grid into the folder: err = %v, want a refusal naming eta0", err)
	}
	time.Sleep(10 * time.Millisecond)
	workers := []Cell{{Label: "a", Configs: Seeds(base, 1)}}
	workers[0].Configs[0].Workers, workers[0].Configs[0].MaxMemory = 3, 1<<40
	if _, err := RunGrid(context.Background(), workers, out, Options{}); err != nil {
		t.Fatalf("same grid with another --workers: %v", err)
	}
	if after, _ := os.Stat(sumPath); !after.ModTime().Equal(before.ModTime()) {
		t.Error("a change of --workers repeated a finished run")
	}
	if _, err := RunGrid(context.Background(), other, out, Options{Overwrite: true}); err != nil {
		t.Errorf("another grid with Overwrite: %v", err)
	}

	dup := []Cell{{Label: "x", Configs: Seeds(base, 1)}, {Label: "y", Configs: Seeds(base, 1)}}
	if _, err := RunGrid(context.Background(), dup, t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "twice") {
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
	cells, err := SweepCells(base, "eta0", []string{"3e38", "0.1"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	res, err := RunGrid(context.Background(), cells, out, Options{})
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
	sumPath := filepath.Join(out, "eta0-3e38", "seed1", SummaryFile)
	before, _ := os.Stat(sumPath)
	time.Sleep(10 * time.Millisecond)
	if _, err := RunGrid(context.Background(), cells, out, Options{}); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(sumPath); !after.ModTime().Equal(before.ModTime()) {
		t.Error("the rerun ran the diverged cell again")
	}
}
