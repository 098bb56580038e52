package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// studiesDoc is the page that quotes the Byzantine studies' tables.
const studiesDoc = "../../docs/byzantine-studies.md"

// TestByzantineStudiesMatchResults checks the tables of the shipped
// Byzantine studies (docs/results/byzantine-*, dissensus-*) against their
// results.csv, that each folder holds the report's files only, and that
// docs/byzantine-studies.md quotes their rows as they are: a row of the
// page that starts as a row of a study's table (its label cell) must be
// that row.
func TestByzantineStudiesMatchResults(t *testing.T) {
	var dirs []string
	for _, pattern := range []string{"byzantine-*", "dissensus-*"} {
		d, _ := filepath.Glob(filepath.Join("../../docs/results", pattern))
		dirs = append(dirs, d...)
	}
	if len(dirs) == 0 {
		t.Skip("no Byzantine studies shipped")
	}
	doc, err := os.ReadFile(studiesDoc)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{} // a table row's first cell → the rows that start with it
	for _, dir := range dirs {
		checkTableAgainstResults(t, dir)
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if n := e.Name(); n != TableFile && n != ResultsFile && n != CurvesFile {
				t.Errorf("%s holds %s: a shipped study keeps %s, %s and %s only", dir, n, TableFile, ResultsFile, CurvesFile)
			}
		}
		md, err := os.ReadFile(filepath.Join(dir, TableFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(md), "\n") {
			if strings.HasPrefix(line, "| ") {
				first, _, _ := strings.Cut(line, " | ")
				rows[first] = append(rows[first], line)
			}
		}
	}
	quoted := 0
	for _, line := range strings.Split(string(doc), "\n") {
		first, _, _ := strings.Cut(line, " | ")
		want, ok := rows[first]
		if !strings.HasPrefix(line, "| ") || !ok || strings.HasPrefix(line, "| --- ") {
			continue
		}
		found := false
		for _, w := range want {
			found = found || w == line
		}
		if !found {
			t.Errorf("%s quotes a row as no study's table has it:\n%s", studiesDoc, line)
		}
		quoted++
	}
	if quoted == 0 {
		t.Errorf("%s quotes no row of the studies' tables", studiesDoc)
	}
}
