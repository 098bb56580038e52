package models

import (
	"math"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// LRN is torch's nn.LocalResponseNorm(size, alpha, beta, k): each value
// divided by (K + Alpha/Size · the sum of the squares of the Size channels
// around it)^Beta, the window of channel c being [c − Size/2,
// c + (Size−1)/2] (AlexNet's, and the TensorFlow tutorial's CIFAR-10 CNN's
// that FedAvg trained: Size 9 for its depth_radius 4, Alpha 0.001/9, Beta
// 0.75, K 1).
type LRN struct {
	Size        int
	Alpha, Beta float32
	K           float32
}

// LocalResponseNorm adds local response normalisation p across the
// channels of an image x [C,H,W]. Parameter-free; its sums, powers and
// gradient are in float64 in a fixed order, the same bits on every kernel
// set and architecture.
func (n *Net) LocalResponseNorm(x Tensor, p LRN) Tensor {
	name := n.autoName("lrn")
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	s, ok := n.image(name, x)
	if !ok {
		return Tensor{-1}
	}
	finite := func(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }
	if p.Size < 1 || !finite(p.Alpha) || !finite(p.Beta) || !finite(p.K) || !(p.K > 0) {
		return n.fail(name, "size %d, alpha %g, beta %g, k %g: want a size from 1, finite alpha and beta, and k above 0", p.Size, p.Alpha, p.Beta, p.K)
	}
	return n.record(netLayer{kind: kindLRN, name: name, lrn: p}, s, x)
}

// addLRN appends LocalResponseNorm as torch writes it at opset 13 (its
// F.local_response_norm traced): x², Unsqueeze to [N,1,C,H,W], Pad of the
// channel axis by Size/2 before and (Size−1)/2 after, AveragePool
// [Size,1,1], Squeeze, Mul by Alpha, Add K, Pow Beta, and Div of x by that.
func (g *onnxGraph) addLRN(l netLayer, x, out string) {
	nm := func(s string) string { return l.name + "." + s }
	p := l.lrn
	g.inits = append(g.inits, onnx.Int64Tensor(nm("axis"), []int64{1}, 1),
		onnx.Int64Tensor(nm("pads"), []int64{0, 0, int64(p.Size / 2), 0, 0, 0, 0, int64((p.Size - 1) / 2), 0, 0}, 10),
		onnx.FloatTensor(nm("alpha"), []float32{p.Alpha}), onnx.FloatTensor(nm("k"), []float32{p.K}), onnx.FloatTensor(nm("beta"), []float32{p.Beta}))
	g.node(nm("square"), "Mul", []string{x, x}, nm("square"))
	g.node(nm("unsqueeze"), "Unsqueeze", []string{nm("square"), nm("axis")}, nm("unsqueezed"))
	g.node(nm("pad"), "Pad", []string{nm("unsqueezed"), nm("pads")}, nm("padded"))
	g.node(nm("pool"), "AveragePool", []string{nm("padded")}, nm("pooled"), onnx.IntsAttr("kernel_shape", int64(p.Size), 1, 1), onnx.IntsAttr("strides", 1, 1, 1))
	g.node(nm("squeeze"), "Squeeze", []string{nm("pooled"), nm("axis")}, nm("mean"))
	g.node(nm("scale"), "Mul", []string{nm("mean"), nm("alpha")}, nm("scaled"))
	g.node(nm("shift"), "Add", []string{nm("scaled"), nm("k")}, nm("base"))
	g.node(nm("pow"), "Pow", []string{nm("base"), nm("beta")}, nm("den"))
	g.node(l.name, "Div", []string{x, nm("den")}, out)
	g.describe("%s: LocalResponseNorm size %d, alpha %g, beta %g, k %g (torch's form: Mul, Unsqueeze, Pad, AveragePool, Squeeze, Mul, Add, Pow, Div)", l.name, p.Size, p.Alpha, p.Beta, p.K)
}
