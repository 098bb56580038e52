package models

import (
	"bytes"
	"encoding/binary"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gtstorm/gtstorm/data"
)

// The golden files in testdata hold the losses and gradients the first
// implementation of the CNNs (Gorgonia's built-in Conv2d, MaxPool2D, Mul,
// LogSoftMax; commit 8cef682) gave on fixed parameters and batches. The
// kernel-backed ops must reproduce them to float32 rounding.
var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden-*.bin from the current implementation")

type goldenCase struct {
	name  string
	model Model
	seed  uint64 // of Init
	batch func(t *testing.T) data.Batch
}

// goldenHeader precedes the gradient (NumParams float32) in a golden file;
// everything is little-endian.
type goldenHeader struct {
	Loss    float32 // from Grad
	LossSum float64 // from Eval
	Correct int64   // from Eval
}

func goldenCases() []goldenCase {
	synthetic := func(seed uint64, n int, normalise bool, shape []int, index ...int) func(*testing.T) data.Batch {
		return func(*testing.T) data.Batch {
			return batchOf(imageSet(seed, n, 10, normalise, shape...), index...)
		}
	}
	mnistShape, cifarShape := []int{1, 28, 28}, []int{3, 32, 32}
	return []goldenCase{
		{"mnist-batch64", NewMNISTCNN(), 21, synthetic(31, 64, false, mnistShape, seq(64)...)},
		{"mnist-batch3", NewMNISTCNN(), 22, synthetic(32, 8, false, mnistShape, 6, 1, 4)},
		{"mnist-real-batch64", NewMNISTCNN(), 23, func(t *testing.T) data.Batch {
			train, _ := loadMNIST(t) // real digits: zero borders, so exact ties in the pools
			return batchOf(train, seq(64)...)
		}},
		{"cifar-batch32", NewCIFARCNN(), 24, synthetic(33, 32, true, cifarShape, seq(32)...)},
		{"cifar-batch2", NewCIFARCNN(), 25, synthetic(34, 4, true, cifarShape, 3, 0)},
	}
}

// TestGoldenGradients checks loss, gradient and evaluation of the CNNs
// against the golden files: the gradient within 1e-4 of the golden one's
// norm in the norm of the difference, and within 1e-3 relative per tensor.
func TestGoldenGradients(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			b := c.batch(t)
			params := c.model.Init(c.seed)
			w := newWorker(t, c.model)
			var got goldenHeader
			loss, g := grad(t, w, params, b)
			got.Loss = loss
			sum, correct, err := w.Eval(params, b)
			if err != nil {
				t.Fatal(err)
			}
			got.LossSum, got.Correct = sum, int64(correct)
			path := filepath.Join("testdata", "golden-"+c.name+".bin")
			if *updateGolden {
				writeGolden(t, path, got, g)
				return
			}
			want, wantG := readGolden(t, path, len(g))
			if d := math.Abs(float64(got.Loss - want.Loss)); d > 1e-6*math.Abs(float64(want.Loss)) {
				t.Errorf("loss %.9g, golden %.9g", got.Loss, want.Loss)
			}
			if d := math.Abs(got.LossSum - want.LossSum); d > 1e-6*math.Abs(want.LossSum) {
				t.Errorf("Eval loss sum %.9g, golden %.9g", got.LossSum, want.LossSum)
			}
			if got.Correct != want.Correct {
				t.Errorf("Eval correct %d, golden %d", got.Correct, want.Correct)
			}
			r := relDiff(g, wantG)
			t.Logf("loss %.9g (golden %.9g), ‖g − golden‖/‖golden‖ = %.3g", got.Loss, want.Loss, r)
			if r > 1e-4 {
				t.Errorf("‖g − golden‖/‖golden‖ = %.3g, want ≤ 1e-4", r)
			}
			for _, p := range c.model.Params() {
				lo, hi := p.Offset, p.Offset+p.Size()
				if r := relDiff(g[lo:hi], wantG[lo:hi]); r > 1e-3 {
					t.Errorf("%s: ‖g − golden‖/‖golden‖ = %.3g, want ≤ 1e-3", p.Name, r)
				}
			}
		})
	}
}

// relDiff returns ‖a − b‖/‖b‖ in float64.
func relDiff(a, b []float32) float64 {
	var d, n float64
	for i, v := range b {
		e := float64(a[i]) - float64(v)
		d += e * e
		n += float64(v) * float64(v)
	}
	return math.Sqrt(d / n)
}

func writeGolden(t *testing.T, path string, h goldenHeader, g []float32) {
	t.Helper()
	var buf bytes.Buffer
	if err := binary.Write(&buf, binary.LittleEndian, h); err != nil {
		t.Fatal(err)
	}
	if err := binary.Write(&buf, binary.LittleEndian, g); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readGolden(t *testing.T, path string, p int) (goldenHeader, []float32) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (rerun with -update-golden only on a trusted implementation): %v", err)
	}
	r := bytes.NewReader(raw)
	var h goldenHeader
	g := make([]float32, p)
	if err := binary.Read(r, binary.LittleEndian, &h); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := binary.Read(r, binary.LittleEndian, g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if r.Len() != 0 {
		t.Fatalf("%s: %d trailing bytes", path, r.Len())
	}
	return h, g
}
