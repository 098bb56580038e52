package modelfile

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/train"
	"github.com/gtstorm/gtstorm/weights"
)

// writeLogRegCheckpoint writes a model checkpoint of a logistic regression
// with the given weights, as a run on the LibSVM file trainFile would.
func writeLogRegCheckpoint(t *testing.T, path, trainFile string, w []float32) {
	t.Helper()
	model := models.NewLogReg(len(w), models.DefaultAlpha)
	if model.NumParams() != len(w) {
		t.Fatalf("logreg over %d features has %d parameters; the test assumes one per feature", len(w), model.NumParams())
	}
	cfg := train.Default()
	cfg.Dataset, cfg.DataDir = "libsvm", trainFile
	m, err := json.Marshal(meta{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	ck := modelCheckpoint(model, w)
	ck.Meta = m
	if err := weights.Write(path, ck); err != nil {
		t.Fatal(err)
	}
}

// TestEvalLogRegTakesFeaturesFromModel: a LibSVM model evaluates on a file
// whose largest index is below the model's feature count (the count comes
// from the model, not from the file), and a file with an index beyond it is
// refused naming the file, the line and the model's count.
func TestEvalLogRegTakesFeaturesFromModel(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	trainFile := write("train.svm", "1 1:1 6:1\n-1 2:1\n1 3:1 5:0.5\n-1 4:1\n")
	ckpt := filepath.Join(dir, "model.gtck")
	// Scores xᵀζ of the narrow file's rows: 1, -1, 2, -2; the last is
	// labelled 1, so 3 of 4 are right.
	writeLogRegCheckpoint(t, ckpt, trainFile, []float32{1, -1, 2, -2, 0, 0})

	narrow := write("narrow.svm", "1 1:1\n-1 2:1\n1 3:1\n1 4:1\n")
	wide := write("wide.svm", "1 1:1\n\n-1 7:1\n")
	cases := []struct {
		name    string
		dataset string
		dir     string
		samples int
		acc     float64
		errors  []string
	}{
		{"file with fewer features", "", narrow, 4, 0.75, nil},
		{"named as libsvm", "libsvm", narrow, 4, 0.75, nil},
		{"the run's own data", "", "", 4, 1, nil},
		{"file with more features", "", wide, 0, 0, []string{ckpt, "logreg over 6 features", wide, "line 3", "index 7 beyond the 6 features"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := Eval(ckpt, c.dataset, c.dir)
			if c.errors != nil {
				if err == nil {
					t.Fatalf("got %+v, want an error", res)
				}
				for _, part := range c.errors {
					if !strings.Contains(err.Error(), part) {
						t.Fatalf("error %q does not mention %q", err, part)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Model != "logreg" || res.Params != 6 || res.Samples != c.samples || res.Acc != c.acc || math.IsNaN(res.Loss) {
				t.Fatalf("got %+v, want logreg with 6 parameters, %d samples, accuracy %g", res, c.samples, c.acc)
			}
		})
	}
}
