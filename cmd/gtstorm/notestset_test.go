package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/train"
)

// TestNoTestSetIsSaid: a run whose data hold no test set (a FEMNIST
// folder without test/, a LibSVM file without FILE.t) says in one note on
// stderr that its "test" figures are the training set's, names the data,
// records eval_set "train" in summary.json and labels its headline so;
// eval of its model says so too. Data with a test set print no note.
func TestNoTestSetIsSaid(t *testing.T) {
	root := t.TempDir()
	withTest := writeFEMNIST(t, filepath.Join(root, "with", data.FEMNISTDir), [][]int{{5, 3}, {4, 2}}, []int{2, 1})
	noTest := writeFEMNIST(t, filepath.Join(root, "without", data.FEMNISTDir), [][]int{{5, 3}, {4, 2}}, []int{2, 1})
	if err := os.RemoveAll(filepath.Join(noTest, "test")); err != nil {
		t.Fatal(err)
	}
	var svm strings.Builder
	for i := range 40 {
		fmt.Fprintf(&svm, "%d 1:%g 3:%g\n", i%2, float64(i%7)/7, float64(i%5)/5)
	}
	lone := writeTestFile(t, filepath.Join(root, "svm"), "lone.svm", []byte(svm.String()))
	femnist := []string{"--dataset", "femnist", "--model", "mlp:8", "--batch", "2", "--topology", "ring", "--grad-samples", "4"}
	for _, tc := range []struct {
		name string
		args []string
		dir  string
		note bool
	}{
		{"femnist without test/", femnist, noTest, true},
		{"femnist with test/", femnist, withTest, false},
		{"libsvm without .t", []string{"--dataset", "libsvm", "--batch", "1"}, lone, true},
		{"libsvm with .t", []string{"--dataset", "libsvm", "--batch", "1"}, a8a, false},
	} {
		out := filepath.Join(root, "run-"+strings.ReplaceAll(tc.name, " ", "-"))
		args := append([]string{"train", "--out", out, "--data-dir", tc.dir, "--nodes", "2", "--iters", "2",
			"--eval-every", "2", "--local-eval", "0"}, tc.args...)
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%s: train: exit %d: %s", tc.name, code, stderr.String())
		}
		var notes []string
		for _, l := range strings.Split(stderr.String(), "\n") {
			if strings.Contains(l, "no test set") {
				notes = append(notes, l)
			}
		}
		sum := readSummary(t, out)
		headline := strings.Contains(stdout.String(), "  training-set accuracy of x̄ ")
		if !tc.note {
			if len(notes) != 0 || sum.EvalSet != "test" || headline || !strings.Contains(stdout.String(), "  test accuracy of x̄ ") {
				t.Errorf("%s: notes %q, eval_set %q, stdout:\n%s\nwant no note and the test set's figures", tc.name, notes, sum.EvalSet, stdout.String())
			}
			continue
		}
		want := "note: " + sum.Data + " in " + tc.dir + " has no test set: test accuracy and loss are measured on the training set"
		if len(notes) != 1 || !strings.HasPrefix(notes[0], want) || sum.EvalSet != "train" || !headline {
			t.Errorf("%s: notes %q, eval_set %q, stdout:\n%s\nwant one note %q, eval_set train and a training-set headline", tc.name, notes, sum.EvalSet, stdout.String(), want)
		}
		stdout.Reset()
		stderr.Reset()
		if code := run([]string{"eval", "--checkpoint", filepath.Join(out, train.ModelFile)}, &stdout, &stderr); code != 0 ||
			!strings.Contains(stderr.String(), "no test set: the model is evaluated on the training set") ||
			!strings.Contains(stdout.String(), "training-set accuracy") {
			t.Errorf("%s: eval: exit %d, stdout %q, stderr %q; want a note and training-set figures", tc.name, code, stdout.String(), stderr.String())
		}
	}
}
