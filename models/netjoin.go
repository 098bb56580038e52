package models

import (
	"fmt"
	"math"
	"slices"
)

// The layers that join branches along the channels and the fixed
// arithmetic with constants (an input normalisation inside forward). Both
// are parameter-free and computed alike on every kernel set and
// architecture: copies, and one float32 operation per value.

// Concat adds the concatenation of two or more tensors along their first
// dimension, the channels (torch.cat(ts, dim=1)): maps [C_k,H,W] of equal
// H and W give [ΣC_k,H,W], vectors [F_k] give [ΣF_k]; in general the
// tensors must have the same shape beyond their first dimension. Its
// gradient is each input's part of the upstream gradient.
func (n *Net) Concat(ts ...Tensor) Tensor {
	name := n.autoName("concat")
	if !n.reads(name, ts...) {
		return Tensor{-1}
	}
	if len(ts) < 2 {
		return n.fail(name, "joins %d tensors, want at least 2", len(ts))
	}
	out := slices.Clone(n.shapes[ts[0].id])
	for _, t := range ts[1:] {
		s := n.shapes[t.id]
		if len(s) != len(out) || !slices.Equal(s[1:], out[1:]) {
			return n.fail(name, "joins tensors of shapes %v and %v; want the same shape beyond the first dimension (maps of equal H×W, or vectors)", n.shapes[ts[0].id], s)
		}
		out[0] += s[0]
	}
	return n.record(netLayer{kind: kindConcat, name: name}, out, ts...)
}

// AddConst adds x + c, for constants c that are no parameters (training
// does not change them): one value for every element, or one per channel
// of x (c[k] for channel k of a map [C,H,W], feature k of a vector [F]).
func (n *Net) AddConst(x Tensor, c []float32) Tensor {
	return n.constant(kindAddConst, "addconst", x, c)
}

// SubConst adds x − c, for constants c as AddConst's (torch's x − mean
// with a buffer mean of shape [C,1,1], or a number).
func (n *Net) SubConst(x Tensor, c []float32) Tensor {
	return n.constant(kindSubConst, "subconst", x, c)
}

// MulConst adds x·c, for constants c as AddConst's.
func (n *Net) MulConst(x Tensor, c []float32) Tensor {
	return n.constant(kindMulConst, "mulconst", x, c)
}

// DivConst adds x / c, for non-zero constants c as AddConst's: a division,
// as torch computes x / std, not a product with 1/c, whose float32 value
// may differ in the last bit.
func (n *Net) DivConst(x Tensor, c []float32) Tensor {
	return n.constant(kindDivConst, "divconst", x, c)
}

// Normalize adds (x − mean) / std, per channel or for every element
// (torchvision's transforms.Normalize written inside forward): SubConst
// then DivConst, two layers.
func (n *Net) Normalize(x Tensor, mean, std []float32) Tensor {
	return n.DivConst(n.SubConst(x, mean), std)
}

// constOps names the arithmetic of the constant layers, for errors and
// the ONNX export.
var constOps = map[layerKind]string{kindAddConst: "Add", kindSubConst: "Sub", kindMulConst: "Mul", kindDivConst: "Div"}

// constant adds the layer kind computing x op c, named after prefix and
// its position.
func (n *Net) constant(kind layerKind, prefix string, x Tensor, c []float32) Tensor {
	name := n.autoName(prefix)
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	s := n.shapes[x.id]
	if len(c) != 1 && len(c) != s[0] {
		return n.fail(name, "%d constants for a tensor of shape %v, want 1 or one per channel (%d)", len(c), s, s[0])
	}
	want := "a finite number"
	if kind == kindDivConst {
		want += ", not 0"
	}
	for k, v := range c {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || (kind == kindDivConst && v == 0) {
			return n.fail(name, "constant %d is %g, want %s", k, v, want)
		}
	}
	return n.record(netLayer{kind: kind, name: name, consts: slices.Clone(c)}, s, x)
}

// describeConst is the export's line for a constant layer.
func describeConst(l netLayer, in []int) string {
	what := "one value"
	if len(l.consts) > 1 {
		what = fmt.Sprintf("one per channel [%d]", len(l.consts))
	}
	return fmt.Sprintf("%s: %s by a constant, %s (no parameter) → [N,%s]", l.name, constOps[l.kind], what, joinInts(in))
}

// filledInts returns n copies of v.
func filledInts(n, v int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}
