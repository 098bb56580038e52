package models

import (
	"math"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// The pointwise activations ELU, Softplus, Hardsigmoid, Hardswish and
// GELU, elementwise on x of any shape, computed alike on every kernel set
// and architecture (pure Go in float64 from internal/detmath, rounded to
// float32 once; see internal/kernels).

// ELU adds x where x > 0 and alpha·(eˣ − 1) elsewhere (torch's
// nn.ELU(alpha), whose default alpha is 1); alpha finite. Its gradient is
// 1 where x > 0 and alpha·eˣ elsewhere, as torch's elu_backward.
func (n *Net) ELU(x Tensor, alpha float32) Tensor {
	name := n.autoName("elu")
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	if math.IsNaN(float64(alpha)) || math.IsInf(float64(alpha), 0) {
		return n.fail(name, "alpha %g, want a finite number", alpha)
	}
	return n.record(netLayer{kind: kindELU, name: name, alpha: alpha}, n.shapes[x.id], x)
}

// Softplus adds log(1 + eˣ), and x where x > 20 (torch's nn.Softplus()
// with its defaults beta 1 and threshold 20). Its gradient is σ(x), and 1
// where x > 20.
func (n *Net) Softplus(x Tensor) Tensor { return n.activation(kindSoftplus, "softplus", x) }

// Hardsigmoid adds min(max(x + 3, 0), 6)/6 (torch's nn.Hardsigmoid,
// ONNX's HardSigmoid with alpha 1/6 and beta 1/2). Its gradient is 1/6
// where −3 < x < 3 and 0 elsewhere, as torch's hardsigmoid_backward.
func (n *Net) Hardsigmoid(x Tensor) Tensor { return n.activation(kindHardsigmoid, "hardsigmoid", x) }

// Hardswish adds x·min(max(x + 3, 0), 6)/6 (torch's nn.Hardswish). Its
// gradient is 0 where x < −3, x/3 + 1/2 where −3 ≤ x ≤ 3 and 1 where
// x > 3, as torch's hardswish_backward.
func (n *Net) Hardswish(x Tensor) Tensor { return n.activation(kindHardswish, "hardswish", x) }

// GELU adds x·Φ(x) = x·(1 + erf(x/√2))/2, the Gaussian error linear unit
// in its exact form (torch's nn.GELU(); approximate='tanh' is not
// supported). Its gradient is Φ(x) + x·e^(−x²/2)/√(2π).
func (n *Net) GELU(x Tensor) Tensor { return n.activation(kindGELU, "gelu", x) }

// addPointwise appends ELU as Elu (its alpha), Softplus, Hardsigmoid as
// HardSigmoid (alpha 1/6, beta 1/2), and, as torch writes them at opset
// 13, Hardswish as that HardSigmoid and a Mul of x and it, and GELU as
// Div by √2, Erf, Add 1, Mul by x and Mul by 1/2, the constants scalar
// initialisers named after the layer.
func (g *onnxGraph) addPointwise(l netLayer, x, out string) {
	hardSigmoid := []onnx.Attr{onnx.FloatAttr("alpha", 1.0/6), onnx.FloatAttr("beta", 0.5)}
	switch l.kind {
	case kindELU:
		g.node(l.name, "Elu", []string{x}, out, onnx.FloatAttr("alpha", l.alpha))
		g.describe("%s: Elu alpha %g", l.name, l.alpha)
	case kindSoftplus:
		g.node(l.name, "Softplus", []string{x}, out)
		g.describe("%s: Softplus", l.name)
	case kindHardsigmoid:
		g.node(l.name, "HardSigmoid", []string{x}, out, hardSigmoid...)
		g.describe("%s: HardSigmoid alpha 1/6 beta 0.5", l.name)
	case kindHardswish:
		g.node(l.name+".hardsigmoid", "HardSigmoid", []string{x}, l.name+".hardsigmoid", hardSigmoid...)
		g.node(l.name, "Mul", []string{x, l.name + ".hardsigmoid"}, out)
		g.describe("%s: Hardswish (HardSigmoid alpha 1/6 beta 0.5, Mul)", l.name)
	case kindGELU:
		s2, one, half := l.name+".sqrt2", l.name+".one", l.name+".half"
		g.inits = append(g.inits, onnx.FloatTensor(s2, []float32{math.Sqrt2}), onnx.FloatTensor(one, []float32{1}),
			onnx.FloatTensor(half, []float32{0.5}))
		g.node(l.name+".div", "Div", []string{x, s2}, l.name+".div")
		g.node(l.name+".erf", "Erf", []string{l.name + ".div"}, l.name+".erf")
		g.node(l.name+".add", "Add", []string{l.name + ".erf", one}, l.name+".add")
		g.node(l.name+".mul", "Mul", []string{x, l.name + ".add"}, l.name+".mul")
		g.node(l.name, "Mul", []string{l.name + ".mul", half}, out)
		g.describe("%s: GELU (Div by √2, Erf, Add 1, Mul by x, Mul by 0.5)", l.name)
	}
}
