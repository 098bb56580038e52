package models

import (
	"fmt"
	"strconv"
	"strings"
)

// NewMLP returns the multilayer perceptron mlp:H1,H2,… on samples of the
// given shape (flattened, in row-major order) with classes classes: fully
// connected layers of the widths hidden, each followed by ReLU, then a
// fully connected layer to the classes; softmax cross-entropy. Its tensors
// are fc1.w [in,H1], fc1.b [H1], …, out.w [Hk,classes], out.b [classes],
// initialised as PyTorch's Linear.
func NewMLP(shape []int, hidden []int, classes int) (Model, error) {
	return NewMLPDropout(shape, hidden, 0, classes)
}

// NewMLPDropout is NewMLP with Dropout of rate p (0 ≤ p < 1; see
// Net.Dropout) after each hidden layer's ReLU, as nn.Dropout(p) after each
// nn.ReLU: the model mlp:H1,H2,…@p (mlp:H1,H2,… where p is 0). Its
// parameters are NewMLP's.
func NewMLPDropout(shape []int, hidden []int, p float32, classes int) (Model, error) {
	n := NewNet(mlpName(hidden, p), shape, classes)
	h := n.Input()
	for i, w := range hidden {
		h = n.ReLU(n.Dense(fmt.Sprintf("fc%d", i+1), h, w)) // fcI.w [in,w]
		if p != 0 {
			h = n.Dropout(h, p)
		}
	}
	return n.Model(n.Dense("out", h, classes)) // out.w [Hk,classes]
}

// mlpName is the model name of an MLP with the given hidden widths and
// dropout rate p: mlp:H1,H2,…, and @p (the shortest decimal that reads
// back as the float32 p) where p ≠ 0.
func mlpName(hidden []int, p float32) string {
	s := make([]string, len(hidden))
	for i, h := range hidden {
		s[i] = fmt.Sprint(h)
	}
	name := MLPPrefix + strings.Join(s, ",")
	if p != 0 {
		name += MLPDropoutSep + strconv.FormatFloat(float64(p), 'g', -1, 32)
	}
	return name
}
