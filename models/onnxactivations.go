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

// sigmoid imports Sigmoid as Net.Sigmoid.
func (im *importer) sigmoid(n *onnx.Node) error { return im.elementwise(n, im.net.Sigmoid) }
