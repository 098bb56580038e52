package models

import (
	"math"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// ChannelNorm adds layer normalisation across the channels at each
// position of an image x [C,H,W], ConvNeXt's channels_first LayerNorm
// (torch's nn.LayerNorm(C) of x.permute(0, 2, 3, 1)): each position's C
// values are normalised by their mean and biased variance with eps added,
// then scaled by name.g and shifted by name.b, both [C] (initially 1 and
// 0). Its sums are float64 in a fixed order: the same bits on every
// kernel set and architecture.
func (n *Net) ChannelNorm(name string, x Tensor, eps float32) Tensor {
	if !n.reads(name, x) || !n.named(name) {
		return Tensor{-1}
	}
	s, ok := n.image(name, x)
	if !ok {
		return Tensor{-1}
	}
	if !(eps > 0) || math.IsInf(float64(eps), 0) {
		return n.fail(name, "ε %g, want a finite number above 0", eps)
	}
	n.addInit(name+".g", s[0], initOnes, s[0])
	n.addInit(name+".b", s[0], initZeros, s[0])
	return n.record(netLayer{kind: kindChannelNorm, name: name, eps: eps}, s, x)
}

// addChannelNorm appends ChannelNorm as PyTorch's exporter writes
// ConvNeXt's channels_first LayerNorm at opset 13: ReduceMean over axis 1
// (keepdims), Sub of it from x, Pow 2, ReduceMean over axis 1, Add ε,
// Sqrt, Div of the centred x by it, then Mul by the weight and Add of the
// bias, both [C,1,1] (see newONNXGraph).
func (g *onnxGraph) addChannelNorm(l netLayer, x, out string, in []int) {
	nm := func(s string) string { return l.name + "." + s }
	axes := onnx.IntsAttr("axes", 1)
	g.inits = append(g.inits, onnx.FloatTensor(nm("two"), []float32{2}), onnx.FloatTensor(nm("eps"), []float32{l.eps}))
	g.node(nm("mean"), "ReduceMean", []string{x}, nm("mean"), axes, onnx.IntAttr("keepdims", 1))
	g.node(nm("centre"), "Sub", []string{x, nm("mean")}, nm("centre"))
	g.node(nm("square"), "Pow", []string{nm("centre"), nm("two")}, nm("square"))
	g.node(nm("var"), "ReduceMean", []string{nm("square")}, nm("var"), axes, onnx.IntAttr("keepdims", 1))
	g.node(nm("vareps"), "Add", []string{nm("var"), nm("eps")}, nm("vareps"))
	g.node(nm("std"), "Sqrt", []string{nm("vareps")}, nm("std"))
	g.node(nm("norm"), "Div", []string{nm("centre"), nm("std")}, nm("norm"))
	g.node(nm("scale"), "Mul", []string{nm("norm"), nm("g")}, nm("scale"))
	g.node(nm("shift"), "Add", []string{nm("scale"), nm("b")}, out)
	g.describe("%s: ChannelNorm across %d channels, ε %g (ReduceMean axis 1, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add)", l.name, in[0], l.eps)
}
