package models

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// TestImportONNXPaddedPools imports torch's padded pools (MaxPool2d(3, 2,
// padding=1), a MaxPool with pads; AvgPool2d(3, 2, padding=1), a Pad then
// an AveragePool; AvgPool2d(3, 2, padding=1, count_include_pad=False), an
// AveragePool with pads and count_include_pad 0) as the Net's padded pools,
// and where onnxruntime runs, requires its logits on the PyTorch file.
func TestImportONNXPaddedPools(t *testing.T) {
	for _, c := range []struct {
		name, op string
		exclude  bool
	}{{"maxpool_padding", "maxpool", false}, {"avgpool_padding", "avgpool", false}, {"avgpool_exclude_pad", "avgpool", true}} {
		t.Run(c.name, func(t *testing.T) {
			m, x0 := importFixture(t, c.name)
			spec, err := Spec(m)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(spec.Layers, func(l LayerSpec) bool {
				return l.Op == c.op && l.Kernel == 3 && l.Stride == 2 && l.Pad == 1 && l.ExcludePad == c.exclude
			}) {
				t.Fatalf("spec %+v has no %s 3 stride 2 padding 1 (exclude_pad %v)", spec.Layers, c.op, c.exclude)
			}
			if testing.Short() {
				return
			}
			enc, err := os.ReadFile(filepath.Join("testdata", "onnx", c.name+".onnx"))
			if err != nil {
				t.Fatal(err)
			}
			node, modules := onnxRuntime(t)
			b := batchOf(imageSet(17, 6, 10, true, 1, 28, 28), seq(6)...)
			checkRuntime(t, "the PyTorch file", node, modules, enc, m, x0, b)
		})
	}
}

// TestImportONNXGemmWithoutBias imports a Gemm without its C input
// (nn.Linear(bias=False)) as DenseNoBias: the hand-written Net's logits
// with the same weights.
func TestImportONNXGemmWithoutBias(t *testing.T) {
	enc := tinyONNX(t, 13, []onnx.Dim{{Param: "N"}, {Value: 3}}, []onnx.Tensor{onnx.FloatTensor("w", ramp(6, 0), 2, 3)},
		node("Gemm", []string{"x", "w"}, "y", onnx.IntAttr("transB", 1)))
	m, x0, err := ImportONNX("nobias", enc, []int{3}, 2)
	if err != nil {
		t.Fatal(err)
	}
	n := NewNet("nobias", []int{3}, 2)
	want, err := n.Model(n.DenseNoBias("w", n.Input(), 2))
	if err != nil {
		t.Fatal(err)
	}
	p := transpose2(&iconst{dims: []int{2, 3}, f: ramp(6, 0), float: true}).f
	if !slices.Equal(x0, p) || want.NumParams() != m.NumParams() {
		t.Fatalf("x⁰ %v, want %v", x0, p)
	}
	b := batchOf(imageSet(2, 4, 2, false, 3), seq(4)...)
	z1, err1 := Logits(m, x0, b)
	z2, err2 := Logits(want, p, b)
	if err1 != nil || err2 != nil || !slices.Equal(z1, z2) {
		t.Errorf("logits %v (%v), the hand-written Net's %v (%v)", z1, err1, z2, err2)
	}
	if _, g := grad(t, newWorker(t, m), x0, b); len(g) != 6 {
		t.Errorf("gradient of %d values, want 6", len(g))
	}
}
