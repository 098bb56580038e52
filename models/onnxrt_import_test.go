package models

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gtstorm/gtstorm/data"
)

// TestImportONNXRuntime runs each supported PyTorch fixture in onnxruntime
// and compares its logits with the imported network's (Logits at the
// file's weights); then trains the network a few SGD steps, exports it
// (ONNX) and checks that onnxruntime loads the export and gives Logits at
// the trained weights.
func TestImportONNXRuntime(t *testing.T) {
	skipShort(t)
	node, modules := onnxRuntime(t)
	for _, name := range torchFixtures {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join("testdata", "onnx", name+".onnx")
			m, x0 := importFixture(t, name)
			shape, _, _ := Classifier(m)
			b := batchOf(imageSet(17, 6, 10, true, shape...), seq(6)...)
			enc, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if name == "mnist_example" {
				// The file ends in log_softmax, which the import leaves to the loss.
				z, err := Logits(m, x0, b)
				if err != nil {
					t.Fatal(err)
				}
				_, classes, _ := Classifier(m)
				checkRuntimeOutputs(t, "the PyTorch file", node, modules, enc, m, logSoftmaxRows(z, classes), b)
			} else {
				checkRuntime(t, "the PyTorch file", node, modules, enc, m, x0, b)
			}

			params := slices.Clone(x0)
			w := newWorker(t, m)
			g := make([]float32, len(params))
			for step := range 3 {
				tb := batchOf(b.Data, step, step+1, step+2)
				tb.Draw = uint64(step + 1) // mlp_dropout's masks
				if _, err := w.Grad(params, tb, g); err != nil {
					t.Fatal(err)
				}
				for i := range params {
					params[i] -= float32(0.5 * g[i])
				}
			}
			_, out := marshalONNX(t, m, params)
			checkRuntime(t, "the export after 3 steps", node, modules, out, m, params, b)
		})
	}
}

// checkRuntime runs enc in onnxruntime on b and requires Logits(m, params)
// within onnxrtTol·max(1,|z|).
func checkRuntime(t *testing.T, what, node, modules string, enc []byte, m Model, params []float32, b data.Batch) {
	t.Helper()
	want, err := Logits(m, params, b)
	if err != nil {
		t.Fatal(err)
	}
	checkRuntimeOutputs(t, what, node, modules, enc, m, want, b)
}

// checkRuntimeOutputs runs enc in onnxruntime on b, an input of m, and
// requires its outputs within onnxrtTol·max(1,|want|) of want.
func checkRuntimeOutputs(t *testing.T, what, node, modules string, enc []byte, m Model, want []float32, b data.Batch) {
	t.Helper()
	shape, classes, _ := Classifier(m)
	got, dims := runOnnxruntime(t, node, modules, enc, denseInputs(b), append([]int{b.Len()}, shape...))
	if !slices.Equal(dims, []int{b.Len(), classes}) {
		t.Fatalf("%s: onnxruntime gives shape %v", what, dims)
	}
	var worst float64
	for i := range want {
		worst = math.Max(worst, math.Abs(float64(got[i]-want[i]))/math.Max(1, math.Abs(float64(want[i]))))
	}
	t.Logf("%s: %d logits, max |onnxruntime − gtstorm|/max(1,|z|) = %.3g", what, len(want), worst)
	if !(worst <= onnxrtTol) {
		t.Errorf("%s: logits differ by %.3g, want ≤ %g", what, worst, onnxrtTol)
	}
}
