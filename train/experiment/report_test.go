package experiment

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/train"
)

type tableColumn struct {
	col    int // column in the table's row, 0 being the setting
	field  string
	format string
}

// tableColumns are the long table's columns that results.csv holds per
// run, with the format the table gives their mean ± std in (seconds, a wall
// time rounded in results.csv, is left out).
var tableColumns = []tableColumn{
	{1, "final_test_acc", "%.4f"}, {2, "final_test_loss", "%.4f"}, {3, "local_test_acc", "%.4f"},
	{4, "stationarity", "%.3g"}, {5, "consensus_error", "%.3g"}, {6, "samples", "%.0f"},
	{7, "bytes_sent_per_node", "%.0f"},
}

// checkTableAgainstResults recomputes every cell of a grid's long table
// from its results.csv and compares.
func checkTableAgainstResults(t *testing.T, dir string) {
	t.Helper()
	recs := readResults(t, dir)
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	runs := map[string][][]string{}
	for _, r := range recs[1:] {
		if s, ok := col["status"]; ok && r[s] != "finished" {
			continue
		}
		runs[r[0]] = append(runs[r[0]], r)
	}
	md, err := os.ReadFile(filepath.Join(dir, TableFile))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, line := range strings.Split(string(md), "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 9 && len(cells) != 10 { // 10: with simulated seconds
			continue
		}
		label, _, _ := strings.Cut(cells[0], " (")
		rs, ok := runs[label]
		if !ok {
			continue
		}
		columns := tableColumns
		if len(cells) == 10 {
			columns = append(columns[:len(columns):len(columns)], tableColumn{9, "sim_seconds", "%.4g"})
		}
		for _, c := range columns {
			sums := make([]*train.Summary, len(rs))
			for i, r := range rs {
				x, err := strconv.ParseFloat(r[col[c.field]], 64)
				if err != nil {
					t.Fatalf("%s: %s %q: %v", dir, c.field, r[col[c.field]], err)
				}
				sums[i] = &train.Summary{Seconds: train.Num(x)}
			}
			want := statOf(sums, func(s *train.Summary) float64 { return float64(s.Seconds) }).fmt(c.format)
			// The tables shipped in docs/results were written when a zero
			// spread over seeds was left out.
			shipped := strings.Contains(filepath.ToSlash(dir), "docs/results/") &&
				cells[c.col] == strings.TrimSuffix(want, " ± "+fmt.Sprintf(c.format, 0.0))
			if cells[c.col] != want && !shipped {
				t.Errorf("%s, %s: %s is %q in the table, %q from results.csv", dir, label, c.field, cells[c.col], want)
			}
		}
		checked++
	}
	if checked != len(runs) {
		t.Errorf("%s: checked %d table rows, results.csv has %d settings", dir, checked, len(runs))
	}
}

// TestReportMatchesResults: on a grid whose seeds send different byte
// counts (each seed draws its own graph), every column of the table is the
// mean ± std over the seeds of results.csv.
func TestReportMatchesResults(t *testing.T) {
	if raceEnabled {
		t.Skip("report arithmetic: one goroutine's grid of runs, 5 to 10 times slower under -race: experiment starts no goroutines of its own, and TestRunGrid runs a grid, and the train tests the runs, under it")
	}
	needA8A(t)
	base := lrConfig(decentral.GTSTORM)
	base.Iters, base.CheckpointEvery = 20, 0
	cells, err := sweepCells(base, "pc", []string{"0.3", "0.6"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	res, err := RunGrid(context.Background(), cells, out, train.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Summaries[0].BytesSentPerNode == res[0].Summaries[1].BytesSentPerNode &&
		res[0].Summaries[1].BytesSentPerNode == res[0].Summaries[2].BytesSentPerNode {
		t.Fatal("the seeds send the same bytes; the test needs them to differ")
	}
	if _, _, err := WriteReport(out, "a8a", res, false); err != nil {
		t.Fatal(err)
	}
	checkTableAgainstResults(t, out)
}

// TestStragglersShowInTable: stragglers change no trajectory, only the
// simulated time; the table shows it, so the rows differ, and it agrees
// with results.csv. A grid without a network writes NaN simulated seconds.
func TestStragglersShowInTable(t *testing.T) {
	if raceEnabled {
		t.Skip("straggler tables: one goroutine's grid of runs, 5 to 10 times slower under -race: experiment starts no goroutines of its own, and TestRunGrid runs a grid, and the train tests the runs, under it")
	}
	needA8A(t)
	base := lrConfig(decentral.DSGD)
	base.Iters, base.CheckpointEvery, base.Compute = 20, 0, 0.001
	cells, err := sweepCells(base, "stragglers", []string{"1:2", "3:5"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	res, err := RunGrid(context.Background(), cells, out, train.Options{})
	if err != nil {
		t.Fatal(err)
	}
	md, _, err := WriteReport(out, "stragglers", res, false)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "| stragglers=") {
			_, row, _ := strings.Cut(line, " | ")
			rows = append(rows, row)
		}
	}
	if len(rows) != 2 || rows[0] == rows[1] || !strings.Contains(md, "simulated seconds |") {
		t.Errorf("table rows of 1:2 and 3:5 stragglers:\n%s", md)
	}
	checkTableAgainstResults(t, out)

	plain := lrConfig(decentral.DSGD)
	plain.Iters, plain.CheckpointEvery = 10, 0
	out = t.TempDir()
	if res, err = RunGrid(context.Background(), CompareCells(plain, []string{"dsgd"}, []string{"iid"}, 1), out, train.Options{}); err != nil {
		t.Fatal(err)
	}
	if md, _, err = WriteReport(out, "plain", res, false); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if sim := recs[1][slices.Index(recs[0], "sim_seconds")]; sim != "NaN" || strings.Contains(md, "simulated seconds") {
		t.Errorf("a grid without a network: sim_seconds %q, table:\n%s", sim, md)
	}
}

// TestShippedTablesMatchResults checks the tables in docs/results (those
// docs/results.md shows) against their results.csv, and that
// docs/results.md quotes them as they are.
func TestShippedTablesMatchResults(t *testing.T) {
	dirs, _ := filepath.Glob("../../docs/results/*")
	if len(dirs) == 0 {
		t.Skip("no shipped results")
	}
	page, err := os.ReadFile("../../docs/results.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		checkTableAgainstResults(t, dir)
		md, _ := os.ReadFile(filepath.Join(dir, TableFile))
		for _, line := range strings.Split(string(md), "\n") {
			if strings.HasPrefix(line, "| ") && strings.Count(line, " | ") == 8 && !strings.Contains(string(page), line) {
				if strings.Contains(string(page), strings.SplitN(line, " | ", 2)[0]+" | ") {
					t.Errorf("docs/results.md quotes %s's row %q differently", dir, strings.SplitN(line, " | ", 2)[0])
				}
			}
		}
	}
}

// TestGridCurvesDistinct: in a compare figure each algorithm has its own
// colour and each partition its own line style, so no two curves look
// alike (the palette's colours are far apart: curves' TestPaletteDistinct).
func TestGridCurvesDistinct(t *testing.T) {
	var res []CellResult
	for _, c := range CompareCells(train.Default(), []string{"dsgd", "gnsd", "gt-storm"}, []string{"iid", "label"}, 1) {
		res = append(res, CellResult{Cell: c, Summaries: []*train.Summary{{}}, Rows: [][]train.Row{{{Round: 0}}}})
	}
	cs := gridCurves(res, true)
	seen := map[[2]int]string{}
	for i, c := range cs {
		key := [2]int{c.Colour, c.Style} // 3 colours and 2 styles: fewer than the palette's and the styles'
		if prev, dup := seen[key]; dup {
			t.Errorf("%s and %s are drawn alike", prev, c.Label)
		}
		seen[key] = c.Label
		algo := res[i].Configs[0].Algo
		for k, d := range cs {
			if sameAlgo := res[k].Configs[0].Algo == algo; sameAlgo != (d.Colour == c.Colour) {
				t.Errorf("%s and %s: same algorithm %v, same colour %v", c.Label, d.Label, sameAlgo, d.Colour == c.Colour)
			}
		}
	}
}

// TestFormatShort: whatever the magnitude, a value is formatted short, and
// parses back to itself to within rounding to three significant digits.
func TestFormatShort(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string // "" for any short, close text
	}{
		{0, "0.00"}, {0.5, "0.5"}, {2, "2.00"}, {123.456, "123.46"}, {1.8e303, "1.8e+303"}, {1e-9, "1e-09"},
		{math.NaN(), "NaN"}, {math.Inf(1), "+Inf"}, {math.Inf(-1), "-Inf"},
		{-2.5, ""}, {0.0123, ""}, {999999.996, ""}, {1e6, ""}, {-1.7e308, ""}, {math.SmallestNonzeroFloat64, ""},
	} {
		got := FormatShort(c.x)
		back, err := strconv.ParseFloat(got, 64)
		switch {
		case len(got) > 12:
			t.Errorf("FormatShort(%g) = %q, longer than 12 characters", c.x, got)
		case c.want != "" && got != c.want:
			t.Errorf("FormatShort(%g) = %q, want %q", c.x, got, c.want)
		case err != nil:
			t.Errorf("FormatShort(%g) = %q, not a number: %v", c.x, got, err)
		case math.IsNaN(c.x) != math.IsNaN(back) || math.Abs(back-c.x) > 0.005*math.Abs(c.x):
			t.Errorf("FormatShort(%g) = %q, which reads %g", c.x, got, back)
		}
	}
}

// TestReportTargetTimesShort: the time to the target stays short in the
// table, however many simulated seconds it took.
func TestReportTargetTimesShort(t *testing.T) {
	base := train.Default()
	base.TargetAcc = 0.5
	cells, err := NetworkCells(CompareCells(base, []string{"dsgd"}, []string{"label"}, 1), []string{"1ms/1Gbit"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sim  float64
		want string
	}{
		{1.8e303, "| 1.8e+303 |"}, {2e-9, "| 2e-09 |"}, {2, "| 2.00 |"},
	} {
		rows := []train.Row{{Round: 0}, {Round: 10, TestAcc: 0.6, SimSeconds: c.sim}}
		md := Report("t", []CellResult{{Cell: cells[0], Summaries: []*train.Summary{{}}, Rows: [][]train.Row{rows}}}, true)
		if !strings.Contains(md, c.want) {
			t.Errorf("%g simulated seconds: report lacks %q:\n%s", c.sim, c.want, md)
		}
	}
}

// TestGridCurvesLooksDistinct: a grid of more algorithms than the palette
// has colours (the default compare's 8), more partitions or --vary values
// than there are line styles, or a sweep of more values than colours still
// draws no two curves alike, up to the colour × style pairs there are; past
// them, the report notes it.
func TestGridCurvesLooksDistinct(t *testing.T) {
	cellsOf := func(cells []Cell) []CellResult {
		var res []CellResult
		for _, c := range cells {
			res = append(res, CellResult{Cell: c, Summaries: []*train.Summary{{}}, Rows: [][]train.Row{{{Round: 0}}}})
		}
		return res
	}
	eta := Vary{Name: "eta0", Values: []string{"0.01", "0.02", "0.05"}}
	wide, err := VaryCells(CompareCells(train.Default(), []string{"dsgd", "gt-storm"}, []string{"iid", "label"}, 1), []Vary{eta})
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	for k := range 10 {
		values = append(values, fmt.Sprint(k+1))
	}
	sweep, err := VaryCells([]Cell{{Configs: Seeds(train.Default(), 1)}}, []Vary{{Name: "nodes", Values: values}})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		name  string
		res   []CellResult
		pivot bool
	}{
		{"8 algorithms × 2 partitions", cellsOf(CompareCells(train.Default(), decentral.Algorithms(), []string{"iid", "label"}, 1)), true},
		{"2 algorithms × 6 columns", cellsOf(wide), true},
		{"a sweep of 10 values", cellsOf(sweep), false},
	} {
		cs := gridCurves(g.res, g.pivot)
		seen := map[look]string{}
		for _, c := range cs {
			if prev, dup := seen[lookOf(c)]; dup {
				t.Errorf("%s: %s and %s are drawn alike", g.name, prev, c.Label)
			}
			seen[lookOf(c)] = c.Label
		}
		if note := looksNote(cs); note != "" {
			t.Errorf("%s: %d curves noted as drawn alike: %s", g.name, len(cs), note)
		}
	}
	many := cellsOf(CompareCells(train.Default(), decentral.Algorithms(), []string{"iid", "label", "dirichlet:0.1", "shards:2"}, 1))
	if note := looksNote(gridCurves(many, true)); !strings.Contains(note, "32 curves") {
		t.Errorf("32 curves: note %q, want one saying some are drawn alike", note)
	}
}

// TestResultsCSVQuotes: results.csv reads back with a CSV reader, a
// setting holding a double quote or a backslash (a --vary data-dir path)
// included.
func TestResultsCSVQuotes(t *testing.T) {
	label := `data-dir=/data/"a8a"\x, v2`
	res := []CellResult{{Cell: Cell{Label: label, Configs: Seeds(train.Default(), 1)},
		Summaries: []*train.Summary{{Diverged: `after round 5: "x" blew up`}}, Rows: [][]train.Row{{{Round: 0}}}}}
	out := t.TempDir()
	if _, _, err := WriteReport(out, "t", res, false); err != nil {
		t.Fatal(err)
	}
	recs := readResults(t, out)
	if len(recs) != 2 || recs[1][0] != label || recs[1][len(recs[1])-1] != `diverged after round 5: "x" blew up` {
		t.Errorf("results.csv reads back as %q", recs)
	}
}

// readResults reads the records of the results.csv in a grid's folder dir.
func readResults(t *testing.T, dir string) [][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}
