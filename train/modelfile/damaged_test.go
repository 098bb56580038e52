//go:build unix

package modelfile

import (
	"image"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/inputfile/inputfiletest"
	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/train"
	"github.com/gtstorm/gtstorm/weights"
)

// TestPredictEvalExportRefuseTheSameFiles: predict, eval and export share
// one validation of a model file, so each damaged file below is refused by
// all three, in one line naming the file and what was expected, and export
// writes nothing. Before, predict and eval took renamed, permuted and
// flattened tensors that export refused, export took missing or garbage
// metadata that predict and eval refused, and all three read a link to
// /dev/zero until memory ran out (or waited forever on a named pipe).
func TestPredictEvalExportRefuseTheSameFiles(t *testing.T) {
	dir := t.TempDir()
	mnist := models.NewMNISTCNN()
	cfg := train.Default()
	good := func() *weights.Checkpoint {
		ck := modelCheckpoint(mnist, mnist.Init(3))
		ck.Meta = mustJSON(t, meta{Config: cfg, Input: train.InputSpecOf(cfg, nil, mnist)})
		return ck
	}
	img := writeImage(t, dir, "digit.png", image.NewGray(image.Rect(0, 0, 28, 28)))

	cifarCfg := train.Default()
	cifarCfg.Dataset = "cifar10"
	badSpec := train.InputSpecOf(cfg, nil, mnist)
	badSpec.Shape = []int{1, 32, 32}
	// damage turns a good checkpoint into the case's file; nil for the
	// paths that are no regular file.
	type damaged struct {
		name   string
		damage func(ck *weights.Checkpoint)
		want   string
	}
	cases := []damaged{
		{"renamed tensor", func(ck *weights.Checkpoint) { ck.Tensors[2].Name = "renamed" }, `tensor 2 is "renamed"`},
		{"permuted shape", func(ck *weights.Checkpoint) { slices.Reverse(ck.Tensors[0].Shape) }, "tensor 0 is"},
		{"one flat tensor", func(ck *weights.Checkpoint) {
			ck.Tensors = []weights.Tensor{{Name: "params", Shape: []int{len(ck.Params)}}}
		}, "mnist-cnn in 1 tensors; mnist needs mnist-cnn in"},
		{"huge but finite parameters", func(ck *weights.Checkpoint) {
			for i := range ck.Params {
				ck.Params[i] *= 1e15
			}
		}, "finite but so large that its outputs are not"},
		{"no metadata", func(ck *weights.Checkpoint) { ck.Meta = nil }, "no run metadata"},
		{"garbage metadata", func(ck *weights.Checkpoint) { ck.Meta = []byte("\x00\x01garbage") }, "run metadata: invalid character"},
		{"metadata not an object", func(ck *weights.Checkpoint) { ck.Meta = []byte(`[1, 2]`) }, "run metadata: json"},
		{"metadata without config", func(ck *weights.Checkpoint) { ck.Meta = []byte(`{"seconds": 3}`) }, `without the run's configuration ("config")`},
		{"config not an object", func(ck *weights.Checkpoint) { ck.Meta = []byte(`{"config": 5}`) }, "run metadata: json"},
		{"unknown dataset", func(ck *weights.Checkpoint) { ck.Meta = []byte(`{"config": {"dataset": "svhn"}}`) }, `names dataset "svhn"`},
		{"another dataset's model", func(ck *weights.Checkpoint) { ck.Meta = mustJSON(t, meta{Config: cifarCfg}) },
			"holds mnist-cnn with 18378 parameters; cifar10 needs cifar-cnn"},
		{"bad input description", func(ck *weights.Checkpoint) { ck.Meta = mustJSON(t, meta{Config: cfg, Input: badSpec}) },
			"input description: samples of shape [1 32 32], the model takes [1 28 28]"},
	}
	paths := map[string]string{}
	for _, c := range cases {
		ck := good()
		c.damage(ck)
		p := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".gtck")
		if err := weights.Write(p, ck); err != nil {
			t.Fatal(err)
		}
		paths[c.name] = p
	}
	zero, fifo := inputfiletest.NotRegular(t, filepath.Join(dir, "zero.gtck"), filepath.Join(dir, "fifo.gtck"))
	cases = append(cases,
		damaged{"link to /dev/zero", nil, "a character device, want a regular file"},
		damaged{"named pipe", nil, "a named pipe (FIFO), want a regular file"})
	paths["link to /dev/zero"], paths["named pipe"] = zero, fifo

	onnx := filepath.Join(dir, "out.onnx")
	for _, c := range cases {
		path := paths[c.name]
		for _, cmd := range []struct {
			name string
			run  func() error
		}{
			{"predict", func() error { _, err := Predict(path, []string{img}, 3); return err }},
			{"eval", func() error { _, err := Eval(path, "", ""); return err }},
			{"export", func() error { _, err := Export(path, onnx); return err }},
		} {
			t.Run(c.name+"/"+cmd.name, func(t *testing.T) {
				err := cmd.run()
				if err == nil {
					t.Fatal("accepted")
				}
				msg := err.Error()
				if !strings.Contains(msg, path) || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
					t.Fatalf("error %q, want one line naming %s and holding %q", msg, path, c.want)
				}
				if _, err := os.Stat(onnx); err == nil {
					t.Fatalf("%s wrote %s", cmd.name, onnx)
				}
			})
		}
	}
}

// TestEvalNonFiniteLoss: a logistic regression whose weights are finite
// but overflow float32 in its scores has a NaN test loss, which eval
// reports as an error naming the model file instead of printing it.
func TestEvalNonFiniteLoss(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "train.svm")
	if err := os.WriteFile(data, []byte("1 1:1 2:1\n-1 2:1 3:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		w    []float32
		ok   bool
	}{
		{"ordinary weights", []float32{1, -1, 0.5}, true},
		{"huge weights", []float32{3e38, 3e38, -3e38}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ckpt := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".gtck")
			writeLogRegCheckpoint(t, ckpt, data, c.w)
			res, err := Eval(ckpt, "", "")
			if c.ok {
				if err != nil || math.IsNaN(res.Loss) {
					t.Fatalf("%+v, %v", res, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("got %+v, want an error", res)
			}
			if msg := err.Error(); !strings.Contains(msg, ckpt) || !strings.Contains(msg, "test loss") || !strings.Contains(msg, "finite but so large") {
				t.Fatalf("error %q, want one naming %s and its test loss", msg, ckpt)
			}
		})
	}
}

// TestPredictNonFiniteProbabilities: a probability that is not finite is
// an error naming the model file and the image, never a prediction.
func TestPredictNonFiniteProbabilities(t *testing.T) {
	p := &predictor{path: "model.gtck"}
	images := []string{"a.png", "b.png", "c.png"}
	for _, c := range []struct {
		name  string
		probs [][]float64
		want  string // "" for no error
	}{
		{"finite", [][]float64{{0.25, 0.75}, {1, 0}}, ""},
		{"NaN", [][]float64{{0.25, 0.75}, {math.NaN(), 0}}, "model.gtck: the model's probability of class 0 for c.png is NaN"},
		{"infinite", [][]float64{{0.25, math.Inf(1)}, {1, 0}}, "model.gtck: the model's probability of class 1 for a.png is +Inf"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := p.checkFinite(c.probs, images, []int{0, 2})
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error %v, want one starting %q", err, c.want)
			}
		})
	}
}
