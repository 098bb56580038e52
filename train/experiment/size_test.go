package experiment

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/train"
)

// values returns n distinct values, "1" to "n".
func values(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(i + 1)
	}
	return out
}

// TestGridSizeRefused: a grid of more than MaxGridRuns runs (three --vary
// of 100 values: a million cells) is refused up front, naming its cell
// count, before any cell is built; at the limit it is built. Counts near
// 2³¹ and 2⁶³ saturate instead of wrapping.
func TestGridSizeRefused(t *testing.T) {
	base := []Cell{{Configs: Seeds(train.Default(), 1)}}
	hundred := []Vary{{"rho", values(100)}, {"eta0", values(100)}, {"batch", values(100)}}
	_, err := VaryCells(base, hundred)
	var ce *train.ConfigError
	if !errors.As(err, &ce) || ce.Flag != "vary" || !strings.Contains(err.Error(), "1000000 cells") || strings.Contains(err.Error(), "\n") {
		t.Errorf("three --vary of 100 values: %v, want a one-line --vary error naming 1000000 cells", err)
	}
	if cells, err := VaryCells(base, hundred[:2]); err != nil || len(cells) != MaxGridRuns {
		t.Errorf("two --vary of 100 values: %d cells, %v; want %d", len(cells), err, MaxGridRuns)
	}
	if _, err := VaryCells([]Cell{{Configs: Seeds(train.Default(), 2)}}, hundred[:2]); !errors.As(err, &ce) || !strings.Contains(err.Error(), "20000 runs") {
		t.Errorf("10000 cells × 2 seeds: %v, want the runs named", err)
	}
	if _, err := NetworkCells(base, []string{"1ms/1Gbit"}); err != nil {
		t.Error(err)
	}
	many := make([]string, MaxGridRuns+1)
	for i := range many {
		many[i] = strconv.Itoa(i+1) + "ms/1Gbit"
	}
	if _, err := NetworkCells(base, many); err == nil || !strings.Contains(err.Error(), "10001 cells") {
		t.Errorf("%d networks: %v", len(many), err)
	}
	for _, c := range []struct{ cells, seeds int }{
		{1, MaxGridRuns + 1}, {1 << 31, 1}, {1 << 31, 1 << 31}, {math.MaxInt, math.MaxInt}, {-1, 1}, {1, -1},
	} {
		if err := CheckRuns(c.cells, c.seeds); err == nil || strings.Contains(err.Error(), "-") && c.cells >= 0 && c.seeds >= 0 {
			t.Errorf("CheckRuns(%d, %d) = %v, want a refusal without a wrapped count", c.cells, c.seeds, err)
		}
	}
	if err := CheckRuns(100, 100); err != nil {
		t.Errorf("CheckRuns(100, 100) = %v", err)
	}
	// RunGrid itself refuses such a grid before it writes anything.
	out := filepath.Join(t.TempDir(), "grid")
	big := []Cell{{Label: "a", Configs: Seeds(train.Default(), MaxGridRuns+1)}}
	var gs *GridSizeError
	if _, err := RunGrid(context.Background(), big, out, train.Options{}); !errors.As(err, &gs) {
		t.Errorf("RunGrid of %d runs: %v, want a *GridSizeError", MaxGridRuns+1, err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused grid created %s (%v)", out, err)
	}
}

// TestGridNodesRefused: a grid whose cells ask for more nodes than any
// graph may have is refused before anything is written, instead of each
// run being recorded as refused and the grid exiting as if it ran.
func TestGridNodesRefused(t *testing.T) {
	for _, n := range []int{1<<31 - 1, 1 << 31, math.MaxInt} {
		cfg := train.Default()
		cfg.Nodes = n
		out := filepath.Join(t.TempDir(), "grid")
		_, err := RunGrid(context.Background(), []Cell{{Label: "a", Configs: []train.Config{cfg}}}, out, train.Options{})
		var ce *train.ConfigError
		if !errors.As(err, &ce) || ce.Flag != "nodes" {
			t.Errorf("--nodes %d: %v, want a --nodes error", n, err)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("--nodes %d: the refused grid created %s (%v)", n, out, err)
		}
	}
}
