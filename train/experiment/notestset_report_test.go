package experiment

import (
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/train"
)

// TestReportSaysTrainingSet: a grid whose data hold no test set (a LibSVM
// file without FILE.t, a FEMNIST folder without test/) measures its "test"
// figures on the training set, as summary.json's eval_set says; its
// table.md says so too, for every cell or naming the cells it concerns,
// and says nothing for data with a test set.
func TestReportSaysTrainingSet(t *testing.T) {
	cell := func(label, evalSet string) CellResult {
		return CellResult{
			Cell:      Cell{Label: label, Configs: []train.Config{train.Default()}},
			Summaries: []*train.Summary{{EvalSet: evalSet}},
			Rows:      [][]train.Row{{{Round: 0}}},
		}
	}
	const all = "The data hold no test set: the test accuracy and loss below are measured on the training set"
	for _, tc := range []struct {
		name      string
		res       []CellResult
		want, not []string
	}{
		{"no test set", []CellResult{cell("dsgd / iid", "train"), cell("gnsd / iid", "train")}, []string{all}, []string{"The data of"}},
		{"one cell without", []CellResult{cell("data-dir=a8a", "test"), cell("data-dir=lone", "train")},
			[]string{"The data of data-dir=lone hold no test set: their test accuracy and loss are measured on the training set"}, []string{all, "data-dir=a8a hold"}},
		{"test sets", []CellResult{cell("dsgd / iid", "test"), cell("gnsd / iid", "test")}, nil, []string{"no test set"}},
	} {
		for _, pivot := range []bool{true, false} {
			md := Report("t", tc.res, pivot)
			for _, w := range tc.want {
				if !strings.Contains(md, w) {
					t.Errorf("%s (pivot %v): report lacks %q:\n%s", tc.name, pivot, w, md)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(md, n) {
					t.Errorf("%s (pivot %v): report has %q:\n%s", tc.name, pivot, n, md)
				}
			}
		}
	}
}
