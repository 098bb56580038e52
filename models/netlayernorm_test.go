package models

import (
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// lnNet is conv 3×3 2→4 (padding 1) → LayerNorm([4,6,6]) → ReLU → Dense 8
// → LayerNorm(8) with ε 1e-3 → Tanh → Dense 3, on 2×6×6 samples: both
// forms of nn.LayerNorm a classifier uses.
func lnNet() (Model, error) {
	n := NewNet("lnnet", []int{2, 6, 6}, 3)
	h := n.ReLU(n.LayerNorm("ln1", n.Conv2D("c1", n.Input(), Conv{Out: 4, Kernel: 3, Pad: 1, Bias: true}), 1e-5))
	h = n.Tanh(n.LayerNorm("ln2", n.Dense("d1", h, 8), 1e-3))
	return n.Model(n.Dense("fc", h, 3))
}

// TestLayerNormRoundTrip exports lnNet to ONNX (torch's opset-13 chain
// for each LayerNorm) and imports it, and stores it as a NetSpec (JSON)
// and rebuilds it: each trains as the original, bit for bit, the spec
// records each LayerNorm's ε, and the import finds both LayerNorms with
// their ε.
func TestLayerNormRoundTrip(t *testing.T) {
	m, err := lnNet()
	if err != nil {
		t.Fatal(err)
	}
	params := m.Init(9)
	om, enc := marshalONNX(t, m, params)
	var ops []string
	for _, n := range om.Graph.Nodes {
		ops = append(ops, n.OpType)
	}
	chain := "ReduceMean Sub Pow ReduceMean Add Sqrt Div Mul Add"
	if got := strings.Count(strings.Join(ops, " "), chain); got != 2 {
		t.Errorf("the export's operators %v hold %d LayerNorm chains (%s), want 2", ops, got, chain)
	}
	im, js := roundTrips(t, "lnnet", m, params, enc, batchOf(imageSet(23, 5, 3, true, 2, 6, 6), seq(5)...))
	for _, want := range []string{`{"op":"layernorm","name":"ln1","in":[1],"eps":0.00001}`, `{"op":"layernorm","name":"ln2","in":[4],"eps":0.001}`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("spec %s: no %s", js, want)
		}
	}
	ispec, _ := specJSON(t, im)
	var got []string
	for _, l := range ispec.Layers {
		got = append(got, l.Op)
		if l.Op == "layernorm" && (l.Eps == nil || (l.Name == "ln1" && *l.Eps != 1e-5) || (l.Name == "ln2" && *l.Eps != 1e-3)) {
			t.Errorf("imported layernorm %s with ε %v, want the export's", l.Name, l.Eps)
		}
	}
	if want := "conv layernorm relu flatten dense layernorm tanh dense"; strings.Join(got, " ") != want {
		t.Errorf("the imported export's layers %v, want %s", got, want)
	}
	if _, err := NetFromSpec(NetSpec{Name: "e", Shape: []int{4}, Classes: 2, Layers: []LayerSpec{{Op: "layernorm", Name: "ln", In: []int{0}},
		{Op: "dense", Name: "fc", In: []int{1}, Units: 2}}}); err != nil {
		t.Errorf("a layernorm without eps (torch's default 1e-5): %v", err)
	}
}

// lnChainNodes returns torch's opset-13 nodes of nn.LayerNorm of x over axes,
// writing y, with the constants two and eps and the initialisers
// ln.weight and ln.bias.
func lnChainNodes(x, y string, axes ...int64) []onnx.Node {
	return []onnx.Node{
		node("ReduceMean", []string{x}, "m", onnx.IntsAttr("axes", axes...)),
		node("Sub", []string{x, "m"}, "d"),
		node("Pow", []string{"d", "two"}, "p"),
		node("ReduceMean", []string{"p"}, "v", onnx.IntsAttr("axes", axes...)),
		node("Add", []string{"v", "eps"}, "ve"),
		node("Sqrt", []string{"ve"}, "s"),
		node("Div", []string{"d", "s"}, "nrm"),
		node("Mul", []string{"nrm", "ln.weight"}, "sc"),
		node("Add", []string{"sc", "ln.bias"}, y),
	}
}

// TestImportLayerNormRefusals checks the import's one-line refusals around
// torch's form of nn.LayerNorm: ε not a constant, a weight of another
// shape, a ReduceMean of an image over other axes, the variance over other
// axes, a Pow other than 2, a LayerNorm without its affine Mul, and
// Net.LayerNorm's refusal of ε 0; and that the chain as torch writes it
// imports.
func TestImportLayerNormRefusals(t *testing.T) {
	k := func(name string, v float32) onnx.Tensor { return onnx.FloatTensor(name, []float32{v}) }
	base := []onnx.Tensor{onnx.FloatTensor("w", ramp(64, 1), 16, 4), k("two", 2), k("eps", 1e-5),
		onnx.FloatTensor("ln.weight", ramp(4, 2), 4), onnx.FloatTensor("ln.bias", ramp(4, 3), 4), onnx.FloatTensor("w2", ramp(8, 1), 4, 2)}
	head := []onnx.Node{node("Flatten", []string{"x"}, "f"), node("MatMul", []string{"f", "w"}, "z")}
	tail := []onnx.Node{node("MatMul", []string{"h", "w2"}, "y")}
	vec := func(edit func([]onnx.Node) []onnx.Node) []onnx.Node {
		return append(append(append([]onnx.Node{}, head...), edit(lnChainNodes("z", "h", -1))...), tail...)
	}
	same := func(ns []onnx.Node) []onnx.Node { return ns }
	with := func(i int, n onnx.Node) func([]onnx.Node) []onnx.Node {
		return func(ns []onnx.Node) []onnx.Node { ns[i] = n; return ns }
	}
	if _, _, err := ImportONNX("ln", tinyONNX(t, 13, batchN, base, vec(same)...), []int{1, 4, 4}, 2); err != nil {
		t.Errorf("torch's chain: %v", err)
	}
	for _, c := range []struct {
		name  string
		inits []onnx.Tensor
		nodes []onnx.Node
		shape []int
		want  string
	}{
		{"ε from the data", base, vec(with(4, node("Add", []string{"v", "z"}, "ve"))), nil,
			`(Add): the ε of a LayerNorm is not a constant of one value (input 1)`},
		{"weight of 3", append(base[:3:3], onnx.FloatTensor("ln.weight", ramp(3, 2), 3), base[4], base[5]), vec(same), nil,
			`the weight of a LayerNorm over [N,4] is "ln.weight" of shape [3]; want a float constant of shape [4]`},
		{"variance over other axes", base, vec(with(3, node("ReduceMean", []string{"p"}, "v", onnx.IntsAttr("axes", 1)))), nil,
			"averages a LayerNorm's squares over axes [1] (keepdims 1); want the mean's axes [-1], keepdims 1"},
		{"cube", append(base[1:1:1], base[0], k("two", 3), base[2], base[3], base[4], base[5]), vec(same), nil,
			"raises x − mean of a LayerNorm to the power 3; want 2"},
		{"no affine", base, vec(func(ns []onnx.Node) []onnx.Node { return append(ns[:7], node("Relu", []string{"nrm"}, "h")) }), nil,
			"reads a LayerNorm before its weight (torch's nn.LayerNorm: ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add, each read only by the next); want Mul by the weight"},
		{"mean read twice", base, vec(func(ns []onnx.Node) []onnx.Node {
			return append(ns[:2], append([]onnx.Node{node("Relu", []string{"m"}, "mr")}, ns[2:]...)...)
		}), nil,
			"reads the ReduceMean of a LayerNorm"},
		{"image over the width", base, []onnx.Node{node("ReduceMean", []string{"x"}, "m", onnx.IntsAttr("axes", -1)), node("Flatten", []string{"m"}, "y")}, []int{1, 4, 4},
			"axes [-1]: the import takes ReduceMean of images over the maps, axes (2, 3) (x.mean((2, 3))), or over axes (1, 2, 3) with keepdims 1 as the first node of torch's nn.LayerNorm([C,H,W])"},
	} {
		shape := c.shape
		if shape == nil {
			shape = []int{1, 4, 4}
		}
		_, _, err := ImportONNX("ln", tinyONNX(t, 13, batchN, c.inits, c.nodes...), shape, 2)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want a one-line refusal naming %q", c.name, err, c.want)
		}
	}
	n := NewNet("e", []int{4}, 2)
	if n.LayerNorm("ln", n.Input(), 0); n.Err() == nil || n.Err().Error() != "e: ln: ε 0, want a finite number above 0" {
		t.Errorf("LayerNorm(ε 0): %v, want a refusal of ε", n.Err())
	}
}
