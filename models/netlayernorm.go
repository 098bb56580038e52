package models

import (
	"math"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// Layer normalisation (PyTorch's nn.LayerNorm of a sample's whole shape):
// each sample normalised over all its values, then scaled and shifted
// elementwise. Computed alike on every kernel set and architecture (sums
// in float64 in a fixed order, products rounded explicitly).

// layerNormEps is torch's default ε for nn.LayerNorm.
const layerNormEps = 1e-5

// LayerNorm adds layer normalisation of x over all the values of each
// sample (PyTorch's nn.LayerNorm(shape) for x of that shape: nn.LayerNorm(F)
// of features [F], nn.LayerNorm([C,H,W]) of an image): the sample's values
// are normalised by their mean and biased variance with eps (torch's
// default 1e-5) added, then scaled by name.g and shifted by name.b, both
// of x's shape (initially 1 and 0), elementwise.
func (n *Net) LayerNorm(name string, x Tensor, eps float32) Tensor {
	if !n.reads(name, x) || !n.named(name) {
		return Tensor{-1}
	}
	if !(eps > 0) || math.IsInf(float64(eps), 0) {
		return n.fail(name, "ε %g, want a finite number above 0", eps)
	}
	s := slices.Clone(n.shapes[x.id])
	d := product(s)
	n.addInit(name+".g", d, initOnes, s...)
	n.addInit(name+".b", d, initZeros, s...)
	return n.record(netLayer{kind: kindLayerNorm, name: name, eps: eps}, s, x)
}

// addLayerNorm appends LayerNorm as PyTorch's exporter writes it at opset
// 13: ReduceMean over the sample's axes (keepdims), Sub of it from x, Pow
// 2, ReduceMean, Add ε, Sqrt, Div of the centred x by it, then Mul by the
// weight and Add of the bias, both of x's per-sample shape.
func (g *onnxGraph) addLayerNorm(l netLayer, x, out string, in []int) {
	axes := make([]int64, len(in))
	for i := range axes {
		axes[i] = int64(i - len(in))
	}
	nm := func(s string) string { return l.name + "." + s }
	g.inits = append(g.inits, onnx.FloatTensor(nm("two"), []float32{2}), onnx.FloatTensor(nm("eps"), []float32{l.eps}))
	g.node(nm("mean"), "ReduceMean", []string{x}, nm("mean"), onnx.IntsAttr("axes", axes...), onnx.IntAttr("keepdims", 1))
	g.node(nm("centre"), "Sub", []string{x, nm("mean")}, nm("centre"))
	g.node(nm("square"), "Pow", []string{nm("centre"), nm("two")}, nm("square"))
	g.node(nm("var"), "ReduceMean", []string{nm("square")}, nm("var"), onnx.IntsAttr("axes", axes...), onnx.IntAttr("keepdims", 1))
	g.node(nm("vareps"), "Add", []string{nm("var"), nm("eps")}, nm("vareps"))
	g.node(nm("std"), "Sqrt", []string{nm("vareps")}, nm("std"))
	g.node(nm("norm"), "Div", []string{nm("centre"), nm("std")}, nm("norm"))
	g.node(nm("scale"), "Mul", []string{nm("norm"), nm("g")}, nm("scale"))
	g.node(nm("shift"), "Add", []string{nm("scale"), nm("b")}, out)
	g.describe("%s: LayerNorm over [%s], ε %g (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add)", l.name, joinInts(in), l.eps)
}
