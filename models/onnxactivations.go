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
	x, err := im.data(n, 0)
	if err != nil {
		return err
	}
	alpha := attrFloat(n, "alpha", onnxLeakyReLUAlpha)
	if math.IsNaN(float64(alpha)) || math.IsInf(float64(alpha), 0) {
		return fmt.Errorf("LeakyRelu with alpha %g; want a finite slope", alpha)
	}
	return im.set(n, ival{kind: ivAct, t: im.net.LeakyReLU(x.t, alpha), view: x.view})
}

// tanh imports Tanh as Net.Tanh.
func (im *importer) tanh(n *onnx.Node) error {
	x, err := im.data(n, 0)
	if err != nil {
		return err
	}
	return im.set(n, ival{kind: ivAct, t: im.net.Tanh(x.t), view: x.view})
}

// sigmoid imports Sigmoid as Net.Sigmoid.
func (im *importer) sigmoid(n *onnx.Node) error {
	x, err := im.data(n, 0)
	if err != nil {
		return err
	}
	return im.set(n, ival{kind: ivAct, t: im.net.Sigmoid(x.t), view: x.view})
}
