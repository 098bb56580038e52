package models

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

var (
	joinMean = []float32{0.45, 0.47, 0.49} // imageSet's normalisation of 3 channels
	joinStd  = []float32{0.25, 0.26, 0.27}
)

// joinNet is, on 3×6×6 samples, x → (x − mean) / std (per channel, when
// normalise is set) → two branches, conv 3×3 4 → ReLU and conv 1×1 2,
// joined along the channels (6) → GroupNorm(3) → ReLU → max-pool 2 [6,3,3];
// then the global average [6] joined to Dense 4 of the flattened pool,
// times −1.5: a vector [10], + one constant per feature → Dense 5.
func joinNet(normalise bool) (Model, error) {
	n := NewNet("joinnet", []int{3, 6, 6}, 5)
	x := n.Input()
	if normalise {
		x = n.Normalize(x, joinMean, joinStd)
	}
	a := n.ReLU(n.Conv2D("a", x, Conv{Out: 4, Kernel: 3, Pad: 1, Bias: true}))
	c := n.Conv2D("c", x, Conv{Out: 2, Kernel: 1})
	h := n.MaxPool(n.ReLU(n.GroupNorm("gn", n.Concat(a, c), 3)), 2, 2)
	v := n.Concat(n.GlobalAvgPool(h), n.MulConst(n.Dense("d", h, 4), []float32{-1.5}))
	v = n.AddConst(v, []float32{0.5, -0.25, 0, 1, 2, -1, 0.125, 0.75, -0.5, 0.3})
	return n.Model(n.Dense("fc", v, 5))
}

// TestJoinShapesAndSpec checks the shapes Concat and the constant layers
// give, and that the NetSpec (JSON) records Concat's inputs and the
// constants, and rebuilds the same spec.
func TestJoinShapesAndSpec(t *testing.T) {
	n := NewNet("shapes", []int{3, 8, 8}, 2)
	a := n.Conv2D("a", n.Input(), Conv{Out: 5, Kernel: 3, Pad: 1})
	b := n.Conv2D("b", n.Input(), Conv{Out: 2, Kernel: 1})
	c := n.Concat(a, b, n.Input())
	d := n.Concat(n.Flatten(n.MaxPool(c, 2, 2)), n.Dense("v", c, 3))
	e := n.DivConst(d, []float32{4})
	for _, w := range []struct {
		t    Tensor
		want []int
	}{{c, []int{10, 8, 8}}, {d, []int{163}}, {e, []int{163}}} {
		if got := n.Shape(w.t); !slices.Equal(got, w.want) {
			t.Errorf("shape %v, want %v", got, w.want)
		}
	}
	m, err := joinNet(true)
	if err != nil {
		t.Fatal(err)
	}
	_, js := specJSON(t, m)
	for _, want := range []string{`{"op":"subconst","in":[0],"const":[0.45,0.47,0.49]}`, `{"op":"divconst","in":[1],"const":[0.25,0.26,0.27]}`,
		`{"op":"concat","in":[4,5]}`, `{"op":"mulconst","in":[11],"const":[-1.5]}`, `{"op":"concat","in":[10,12]}`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("spec %s lacks %s", js, want)
		}
	}
	if _, r := fromSpecJSON(t, js); r.NumParams() != m.NumParams() {
		t.Errorf("rebuilt: %d parameters, want %d", r.NumParams(), m.NumParams())
	} else if _, js2 := specJSON(t, r); string(js2) != string(js) {
		t.Errorf("rebuilt spec %s, want %s", js2, js)
	}
}

// TestNormalizeIsTheDatasetsStandardisation checks that Normalize computes
// what gtstorm's datasets compute when they standardise their bytes,
// (x − mean) / std in float32: joinNet with Normalize on raw images gives
// joinNet without it on the same images standardised by the dataset its
// logits, loss and gradient, bit for bit (the gradient flows through the
// constants, which are no parameters).
func TestNormalizeIsTheDatasetsStandardisation(t *testing.T) {
	with, err := joinNet(true)
	if err != nil {
		t.Fatal(err)
	}
	without, err := joinNet(false)
	if err != nil {
		t.Fatal(err)
	}
	if with.NumParams() != without.NumParams() {
		t.Fatalf("%d parameters with Normalize, %d without", with.NumParams(), without.NumParams())
	}
	raw := imageSet(5, 6, 5, false, 3, 6, 6)
	std := *raw
	std.Mean, std.Std = joinMean, joinStd
	params := with.Init(3)
	z1, err1 := Logits(with, params, batchOf(raw, seq(6)...))
	z2, err2 := Logits(without, params, batchOf(&std, seq(6)...))
	if err1 != nil || err2 != nil || !slices.Equal(z1, z2) {
		t.Errorf("logits %v (%v), standardised data's %v (%v)", z1, err1, z2, err2)
	}
	l1, g1 := grad(t, newWorker(t, with), params, batchOf(raw, 1, 4, 2))
	l2, g2 := grad(t, newWorker(t, without), params, batchOf(&std, 1, 4, 2))
	if l1 != l2 || !slices.Equal(g1, g2) {
		t.Errorf("loss %g, standardised data's %g; gradients equal: %v", l1, l2, slices.Equal(g1, g2))
	}
}

// TestJoinRoundTrip exports joinNet to ONNX (Concat of axis 1, Sub, Div,
// Mul and Add of initialisers) and imports it, and stores it as a NetSpec
// and rebuilds it: each trains as the original, bit for bit.
func TestJoinRoundTrip(t *testing.T) {
	m, err := joinNet(true)
	if err != nil {
		t.Fatal(err)
	}
	params := m.Init(9)
	om, enc := marshalONNX(t, m, params)
	var ops []string
	for _, n := range om.Graph.Nodes {
		ops = append(ops, n.OpType)
		if n.OpType == "Concat" {
			if a := attr(&n, "axis"); a == nil || a.I != 1 {
				t.Errorf("Concat's axis %+v, want 1", a)
			}
		}
	}
	for _, op := range []string{"Sub", "Div", "Concat", "Mul", "Add"} {
		if !slices.Contains(ops, op) {
			t.Errorf("the export's operators %v lack %s", ops, op)
		}
	}
	for _, init := range om.Graph.Initializers {
		if init.Name == "subconst#1.c" && !slices.Equal(init.Dims, []int64{3, 1, 1}) {
			t.Errorf("the mean is exported as %v, want [3,1,1]", init.Dims)
		}
	}
	im, _ := roundTrips(t, "joinnet", m, params, enc, batchOf(imageSet(23, 5, 5, false, 3, 6, 6), seq(5)...))
	if _, js := specJSON(t, im); !strings.Contains(string(js), `"op":"concat"`) || !strings.Contains(string(js), `"op":"divconst"`) {
		t.Errorf("the import's spec %s lacks concat or divconst", js)
	}
}

// TestJoinRefusals checks the errors of Concat and the constant layers,
// each naming the layer, and of a spec's concat of one tensor.
func TestJoinRefusals(t *testing.T) {
	img := []int{3, 8, 8}
	for _, c := range []struct {
		name  string
		build func(n *Net) Tensor
		want  string
	}{
		{"concat of one", func(n *Net) Tensor { return n.Concat(n.Input()) }, "concat#1: joins 1 tensors, want at least 2"},
		{"concat of other maps", func(n *Net) Tensor { return n.Concat(n.Input(), n.MaxPool(n.Input(), 2, 2)) },
			"concat#2: joins tensors of shapes [3 8 8] and [3 4 4]; want the same shape beyond the first dimension"},
		{"concat of a map and a vector", func(n *Net) Tensor { return n.Concat(n.Input(), n.Flatten(n.Input())) }, "joins tensors of shapes [3 8 8] and [192]"},
		{"constants per row", func(n *Net) Tensor { return n.SubConst(n.Input(), make([]float32, 8)) },
			"subconst#1: 8 constants for a tensor of shape [3 8 8], want 1 or one per channel (3)"},
		{"no constants", func(n *Net) Tensor { return n.AddConst(n.Input(), nil) }, "addconst#1: 0 constants"},
		{"NaN", func(n *Net) Tensor { return n.MulConst(n.Input(), []float32{float32(math.NaN())}) }, "mulconst#1: constant 0 is NaN, want a finite number"},
		{"division by 0", func(n *Net) Tensor { return n.DivConst(n.Input(), []float32{1, 0, 2}) }, "divconst#1: constant 1 is 0, want a finite number, not 0"},
	} {
		n := NewNet("net", img, 10)
		_, err := n.Model(c.build(n))
		if err == nil || !strings.HasPrefix(err.Error(), "net: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	s := NetSpec{Name: "x", Shape: []int{4}, Classes: 4, Layers: []LayerSpec{{Op: "concat", In: []int{0}}}}
	if _, err := NetFromSpec(s); err == nil || !strings.Contains(err.Error(), "layer 0 (concat) reads 1 tensors, want 2 or more") {
		t.Errorf("concat of one tensor: %v", err)
	}
}

// TestImportONNXFoldsArithmetic imports x − (1 − k) / 2 per channel, the
// mean computed by Sub and Div of constants (the single value first, then
// second): the import folds them in order, and takes the Sub of the data
// as SubConst of the folded values.
func TestImportONNXFoldsArithmetic(t *testing.T) {
	in := []onnx.Dim{{Param: "N"}, {Value: 3}, {Value: 2}, {Value: 2}}
	enc := tinyONNX(t, 13, in, []onnx.Tensor{onnx.FloatTensor("one", []float32{1}), onnx.FloatTensor("k", []float32{0.2, 0.4, 0.7}, 3, 1, 1),
		onnx.FloatTensor("two", []float32{2}), onnx.FloatTensor("w", ramp(24, 0), 12, 2)},
		node("Sub", []string{"one", "k"}, "a"), node("Div", []string{"a", "two"}, "m"), node("Sub", []string{"x", "m"}, "s"),
		node("Flatten", []string{"s"}, "f"), node("MatMul", []string{"f", "w"}, "y"))
	m, _, err := ImportONNX("fold", enc, []int{3, 2, 2}, 2)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := Spec(m)
	var want []float32
	for _, k := range []float32{0.2, 0.4, 0.7} {
		one, two := float32(1), float32(2)
		want = append(want, (one-k)/two) // in float32, as the import folds
	}
	if l := spec.Layers[0]; l.Op != "subconst" || !slices.Equal(l.Const, want) {
		t.Errorf("first layer %+v, want subconst of %v", l, want)
	}
}
