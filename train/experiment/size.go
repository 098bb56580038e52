package experiment

import (
	"fmt"
	"math"
)

// MaxGridRuns bounds the runs of a grid, its cells × seeds. Every run has
// a folder of its own and a line in grid.json, and the grid holds all
// their settings at once, so a larger grid (three --vary of 100 values are
// a million cells) is refused before any cell is built or anything is
// written, naming its size.
const MaxGridRuns = 10_000

// GridSizeError is a grid of more than MaxGridRuns runs.
type GridSizeError struct {
	Cells, Runs int // saturated at math.MaxInt
}

func (e *GridSizeError) Error() string {
	return fmt.Sprintf("the grid has %s, more than the limit of %d runs", e.sizes(), MaxGridRuns)
}

// sizes says how large the grid is: "N cells and R runs (cells × seeds)".
func (e *GridSizeError) sizes() string {
	return fmt.Sprintf("%s cells and %s runs (cells × seeds)", count(e.Cells), count(e.Runs))
}

// want is e as the Want of a ConfigError.
func (e *GridSizeError) want() string {
	return fmt.Sprintf("a grid of at most %d runs; this one has %s", MaxGridRuns, e.sizes())
}

// CheckRuns returns a *GridSizeError when cells cells of seeds runs each
// make more than MaxGridRuns runs, or a count is negative.
func CheckRuns(cells, seeds int) error {
	runs := mulCapped(cells, seeds)
	if cells < 0 || seeds < 0 || runs > MaxGridRuns {
		return &GridSizeError{Cells: cells, Runs: runs}
	}
	return nil
}

// checkGrid returns the error of a grid of cells, each repeated factor
// times, that makes more than MaxGridRuns runs, or nil.
func checkGrid(cells []Cell, factor int) *GridSizeError {
	runs := 0
	for _, c := range cells {
		runs = min(runs+len(c.Configs), math.MaxInt/2)
	}
	if n := mulCapped(runs, factor); n > MaxGridRuns {
		return &GridSizeError{Cells: mulCapped(len(cells), factor), Runs: n}
	}
	return nil
}

// mulCapped returns a × b for a, b ≥ 0, saturated at math.MaxInt.
func mulCapped(a, b int) int {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > math.MaxInt/b {
		return math.MaxInt
	}
	return a * b
}

// count prints n, or "over 9.2e18" where it saturated.
func count(n int) string {
	if n == math.MaxInt {
		return "over 9.2e18"
	}
	return fmt.Sprint(n)
}
