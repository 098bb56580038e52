package models

import (
	"math"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// L2Normalize adds x / max(‖x‖₂, ε) of a vector x [F], torch's
// F.normalize(x, dim=1, eps=ε) of features (a cosine classifier's: the
// Linear after it then scores cosines). Parameter-free; the norm is summed
// in float64 in a fixed order, the same bits on every kernel set and
// architecture, and where it is below ε the gradient is dy/ε, as torch's.
func (n *Net) L2Normalize(x Tensor, eps float32) Tensor {
	name := n.autoName("l2normalize")
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	s := n.shapes[x.id]
	if len(s) != 1 {
		return n.fail(name, "reads a tensor of shape %v, want a vector [F] (flatten or pool an image first)", s)
	}
	if !(eps > 0) || math.IsInf(float64(eps), 0) {
		return n.fail(name, "ε %g, want a finite number above 0", eps)
	}
	return n.record(netLayer{kind: kindL2Normalize, name: name, eps: eps}, s, x)
}

// addL2Normalize appends L2Normalize as torch writes F.normalize at
// opset 13: ReduceL2 over axis 1 (keepdims), Clip with min ε, Div of x by
// it (torch's Expand of the norm to x's shape between the last two is a
// broadcast ONNX's Div does itself).
func (g *onnxGraph) addL2Normalize(l netLayer, x, out string) {
	nm := func(s string) string { return l.name + "." + s }
	g.inits = append(g.inits, onnx.FloatTensor(nm("eps"), []float32{l.eps}))
	g.node(nm("norm"), "ReduceL2", []string{x}, nm("norm"), onnx.IntsAttr("axes", 1), onnx.IntAttr("keepdims", 1))
	g.node(nm("clip"), "Clip", []string{nm("norm"), nm("eps")}, nm("clipped"))
	g.node(l.name, "Div", []string{x, nm("clipped")}, out)
	g.describe("%s: L2Normalize, ε %g (ReduceL2 over axis 1, Clip min ε, Div)", l.name, l.eps)
}
