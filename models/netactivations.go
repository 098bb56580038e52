package models

import "math"

// The activations besides ReLU, elementwise on x of any shape, computed
// alike on every kernel set and architecture (see internal/kernels).

// LeakyReLU adds x where x > 0 and alpha·x elsewhere (torch's
// nn.LeakyReLU(alpha), whose default alpha is 0.01).
func (n *Net) LeakyReLU(x Tensor, alpha float32) Tensor {
	name := n.autoName("leakyrelu")
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	if math.IsNaN(float64(alpha)) || math.IsInf(float64(alpha), 0) {
		return n.fail(name, "negative slope %g, want a finite number", alpha)
	}
	return n.record(netLayer{kind: kindLeakyReLU, name: name, alpha: alpha}, n.shapes[x.id], x)
}

// Tanh adds tanh(x) (torch's nn.Tanh).
func (n *Net) Tanh(x Tensor) Tensor { return n.activation(kindTanh, "tanh", x) }

// Sigmoid adds the logistic sigmoid 1/(1 + e⁻ˣ) (torch's nn.Sigmoid).
func (n *Net) Sigmoid(x Tensor) Tensor { return n.activation(kindSigmoid, "sigmoid", x) }

// SiLU adds the sigmoid-weighted linear unit x·σ(x) = x/(1 + e⁻ˣ), also
// called Swish (torch's nn.SiLU and F.silu).
func (n *Net) SiLU(x Tensor) Tensor { return n.activation(kindSiLU, "silu", x) }

// activation adds the parameter-free elementwise layer kind, named after
// prefix and its position.
func (n *Net) activation(kind layerKind, prefix string, x Tensor) Tensor {
	name := n.autoName(prefix)
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	return n.record(netLayer{kind: kind, name: name}, n.shapes[x.id], x)
}
