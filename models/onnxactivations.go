package models

import (
	"fmt"
	"math"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// onnxLeakyReLUAlpha is LeakyRelu's alpha where the node has none (ONNX's
// default, and torch's negative_slope).
const onnxLeakyReLUAlpha = 0.01

// leakyRelu imports LeakyRelu as Net.LeakyReLU with the node's alpha.
func (im *importer) leakyRelu(n *onnx.Node) error {
	alpha := attrFloat(n, "alpha", onnxLeakyReLUAlpha)
	if math.IsNaN(float64(alpha)) || math.IsInf(float64(alpha), 0) {
		return fmt.Errorf("LeakyRelu with alpha %g; want a finite slope", alpha)
	}
	return im.elementwise(n, func(x Tensor) Tensor { return im.net.LeakyReLU(x, alpha) })
}

// tanh imports Tanh as Net.Tanh.
func (im *importer) tanh(n *onnx.Node) error { return im.elementwise(n, im.net.Tanh) }

// sigmoid imports Sigmoid as Net.Sigmoid or, where it starts torch's
// opset-13 form of nn.SiLU (only a Mul of x and it reads it: ownMul), as
// a pending value from which the Mul makes one SiLU layer (see mul).
func (im *importer) sigmoid(n *onnx.Node) error {
	if !im.ownMul(n) {
		return im.elementwise(n, im.net.Sigmoid)
	}
	x, err := im.data(n, 0)
	if err != nil {
		return err
	}
	return im.set(n, ival{kind: ivPending, p: &pending{kind: pSiLU, x: x}})
}
