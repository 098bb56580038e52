package models

import (
	"fmt"
	"strings"
)

// NewMLP returns the multilayer perceptron mlp:H1,H2,… on samples of the
// given shape (flattened, in row-major order) with classes classes: fully
// connected layers of the widths hidden, each followed by ReLU, then a
// fully connected layer to the classes; softmax cross-entropy. Its tensors
// are fc1.w [in,H1], fc1.b [H1], …, out.w [Hk,classes], out.b [classes],
// initialised as PyTorch's Linear.
func NewMLP(shape []int, hidden []int, classes int) (Model, error) {
	n := NewNet(mlpName(hidden), shape, classes)
	h := n.Input()
	for i, w := range hidden {
		h = n.ReLU(n.Dense(fmt.Sprintf("fc%d", i+1), h, w)) // fcI.w [in,w]
	}
	return n.Model(n.Dense("out", h, classes)) // out.w [Hk,classes]
}

// mlpName is the model name of an MLP with the given hidden widths.
func mlpName(hidden []int) string {
	s := make([]string, len(hidden))
	for i, h := range hidden {
		s[i] = fmt.Sprint(h)
	}
	return MLPPrefix + strings.Join(s, ",")
}
