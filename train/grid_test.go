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
	md, err := WriteReport(out, "a8a", res, true)
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
