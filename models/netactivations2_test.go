package models

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// pointwiseNet is a small network of every pointwise activation: conv →
// ELU(0.5) → ·8 → Hardswish → conv → GELU → flatten → dense → Softplus →
// dense → ·6 → Hardsigmoid → dense, the scales spreading the hard
// activations' inputs over their kinks.
func pointwiseNet() (Model, error) {
	n := NewNet("pointwise", []int{1, 6, 6}, 3)
	h := n.ELU(n.Conv2D("c1", n.Input(), Conv{Out: 4, Kernel: 3, Pad: 1, Bias: true}), 0.5)
	h = n.Hardswish(n.MulConst(h, []float32{8}))
	h = n.GELU(n.Conv2D("c2", h, Conv{Out: 4, Kernel: 3, Stride: 2, Pad: 1, Bias: true}))
	h = n.Softplus(n.Dense("fc1", n.Flatten(h), 8))
	h = n.Hardsigmoid(n.MulConst(n.Dense("fc2", h, 6), []float32{6}))
	return n.Model(n.Dense("fc3", h, 3))
}

// TestPointwiseRoundTrip exports pointwiseNet to ONNX and imports it, and
// stores it as a NetSpec (JSON) and rebuilds it: each trains as the
// original, bit for bit. The export writes Elu (alpha 0.5), Softplus,
// HardSigmoid, Hardswish as HardSigmoid and Mul, and GELU as Div, Erf,
// Add, Mul, Mul (torch's opset-13 forms), and the import makes one layer
// of each again.
func TestPointwiseRoundTrip(t *testing.T) {
	m, err := pointwiseNet()
	if err != nil {
		t.Fatal(err)
	}
	params := m.Init(9)
	om, enc := marshalONNX(t, m, params)
	var ops []string
	for _, n := range om.Graph.Nodes {
		ops = append(ops, n.OpType)
	}
	all := strings.Join(ops, " ")
	for _, want := range []string{"Elu", "HardSigmoid Mul", "Div Erf Add Mul Mul", "Softplus", "HardSigmoid Gemm"} {
		if !strings.Contains(all, want) {
			t.Errorf("the export's operators %v lack %q", ops, want)
		}
	}
	im, js := roundTrips(t, "pointwise", m, params, enc, batchOf(imageSet(23, 5, 3, true, 1, 6, 6), seq(5)...))
	for _, want := range []string{`{"op":"elu","in":[1],"alpha":0.5}`, `"op":"hardswish"`, `"op":"gelu"`, `"op":"softplus"`, `"op":"hardsigmoid"`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("spec %s lacks %s", js, want)
		}
	}
	ispec, _ := specJSON(t, im)
	var got []string
	for _, l := range ispec.Layers {
		got = append(got, l.Op)
	}
	want := []string{"conv", "elu", "mulconst", "hardswish", "conv", "gelu", "flatten", "dense", "softplus", "dense", "mulconst", "hardsigmoid", "dense"}
	if !slices.Equal(got, want) {
		t.Errorf("the imported export's layers %v, want %v", got, want)
	}
	n := NewNet("e", []int{4}, 2)
	if n.ELU(n.Input(), float32(math.NaN())); n.Err() == nil || !strings.Contains(n.Err().Error(), "alpha NaN, want a finite number") {
		t.Errorf("ELU(x, NaN): %v, want a refusal of the alpha", n.Err())
	}
	if _, err := NetFromSpec(NetSpec{Name: "e", Shape: []int{4}, Classes: 2, Layers: []LayerSpec{{Op: "elu", In: []int{0}}, {Op: "dense", Name: "fc", In: []int{1}, Units: 2}}}); err != nil {
		t.Errorf("an elu without alpha (torch's default 1): %v", err)
	}
}

// TestImportPointwiseRefusals checks the import's refusals around the
// pointwise activations and the messages that name the torch module a
// graph probably holds: a final Softmax (remove it: the loss takes the
// logits), an Erf outside GELU's pattern, a HardSigmoid with another
// slope or read by a Mul of another tensor, a GELU whose constant is not
// √2, a ReduceMean of features that does not start a LayerNorm and a
// non-square Conv kernel.
func TestImportPointwiseRefusals(t *testing.T) {
	w := onnx.FloatTensor("w", ramp(32, 1), 16, 2)
	w2 := onnx.FloatTensor("w2", ramp(32, 2), 16, 2)
	flat := node("Flatten", []string{"x"}, "f")
	mm := node("MatMul", []string{"f", "w"}, "z")
	k := func(name string, v float32) onnx.Tensor { return onnx.FloatTensor(name, []float32{v}) }
	gelu := func(div string) []onnx.Node {
		return []onnx.Node{flat, mm, node("Div", []string{"z", div}, "d"), node("Erf", []string{"d"}, "e"),
			node("Add", []string{"e", "one"}, "a"), node("Mul", []string{"z", "a"}, "m"), node("Mul", []string{"m", "half"}, "y")}
	}
	consts := []onnx.Tensor{w, w2, k("sqrt2", 1.4142135), k("three", 3), k("one", 1), k("half", 0.5)}
	for _, c := range []struct {
		name  string
		shape []int
		inits []onnx.Tensor
		nodes []onnx.Node
		want  string
	}{
		{"final softmax", []int{1, 4, 4}, consts, []onnx.Node{flat, mm, node("Softmax", []string{"z"}, "y", onnx.IntAttr("axis", 1))},
			"the loss takes the logits (the cross-entropy applies log_softmax itself), so remove the final nn.Softmax"},
		{"inner softmax", []int{1, 4, 4}, consts, []onnx.Node{flat, mm, node("Softmax", []string{"z"}, "s", onnx.IntAttr("axis", 1)), node("Relu", []string{"s"}, "y")},
			"operator Softmax is not supported inside the network"},
		{"lone erf", []int{1, 4, 4}, consts, []onnx.Node{flat, mm, node("Erf", []string{"z"}, "y")},
			"probably an nn.GELU the import did not recognise"},
		{"gelu read twice", []int{1, 4, 4}, consts, append(gelu("sqrt2"), node("Add", []string{"y", "e"}, "y2")),
			"an Erf outside torch's form of nn.GELU"},
		{"gelu by 3", []int{1, 4, 4}, consts, gelu("three"), "want one value, √2 (the exact GELU)"},
		{"tanh gelu", []int{1, 4, 4}, consts, []onnx.Node{flat, mm, node("Mul", []string{"z", "z"}, "s"), node("Mul", []string{"z", "s"}, "c"),
			node("Mul", []string{"c", "half"}, "y")}, "probably torch's nn.GELU(approximate='tanh'), which the import does not support"},
		{"hardsigmoid 0.2", []int{1, 4, 4}, consts, []onnx.Node{flat, mm, node("HardSigmoid", []string{"z"}, "y")},
			"HardSigmoid with alpha 0.2 and beta 0.5; the import takes torch's nn.Hardsigmoid, and nn.Hardswish"},
		{"mean of features without keepdims", []int{1, 4, 4}, consts, []onnx.Node{flat, mm, node("ReduceMean", []string{"z"}, "r", onnx.IntsAttr("axes", -1), onnx.IntAttr("keepdims", 0)),
			node("Sub", []string{"z", "r"}, "y")}, "the import takes a ReduceMean of features only as the first node of torch's nn.LayerNorm"},
		{"conv kernel_shape not the weights'", []int{1, 4, 4}, []onnx.Tensor{onnx.FloatTensor("k", ramp(6, 1), 2, 1, 1, 3)},
			[]onnx.Node{node("Conv", []string{"x", "k"}, "c", onnx.IntsAttr("kernel_shape", 3, 1), onnx.IntsAttr("pads", 0, 1, 0, 1)),
				node("Flatten", []string{"c"}, "y")}, "kernel_shape [3 1], but the weights' kernel is 1×3"},
		{"conv auto_pad", []int{1, 4, 4}, []onnx.Tensor{onnx.FloatTensor("k", ramp(6, 1), 2, 1, 1, 3)},
			[]onnx.Node{node("Conv", []string{"x", "k"}, "c", onnx.StringAttr("auto_pad", "SAME")),
				node("Flatten", []string{"c"}, "y")}, "auto_pad SAME is not supported (want NOTSET, VALID, SAME_UPPER or SAME_LOWER)"},
	} {
		_, _, err := ImportONNX("refuse", tinyONNX(t, 13, batchN, c.inits, c.nodes...), c.shape, 2)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal naming %q", c.name, err, c.want)
		}
	}
}
