package models

import (
	"fmt"
	"strings"

	G "gorgonia.org/gorgonia"

	"github.com/gtstorm/gtstorm/models/internal/graphops"
)

// NewMLP returns the multilayer perceptron mlp:H1,H2,… on samples of the
// given shape (flattened, in row-major order) with classes classes: fully
// connected layers of the widths hidden, each followed by ReLU, then a
// fully connected layer to the classes; softmax cross-entropy. Its tensors
// are fc1.w [in,H1], fc1.b [H1], …, out.w [Hk,classes], out.b [classes],
// initialised as PyTorch's Linear.
func NewMLP(shape []int, hidden []int, classes int) Model {
	m := &classifier{name: mlpName(hidden), shape: append([]int(nil), shape...), classes: classes, logits: mlp}
	in := m.dim()
	for i, h := range hidden {
		m.dense(fmt.Sprintf("fc%d", i+1), in, h) // fcI.w [in,h], fcI.b [h]
		in = h
	}
	m.dense("out", in, classes) // out.w [Hk,classes], out.b [classes]
	return m
}

// mlp is the forward pass of x [B,…] to the logits [B,classes]: the dense
// layers read each sample flat.
func mlp(g *graphops.Graph, x *G.Node, p nodes) *G.Node {
	h := x
	for i := 1; p[fmt.Sprintf("fc%d.w", i)] != nil; i++ {
		h = g.DenseReLU(h, p[fmt.Sprintf("fc%d.w", i)], p[fmt.Sprintf("fc%d.b", i)]) // [B,Hi]
	}
	return g.Dense(h, p["out.w"], p["out.b"]) // [B,classes]
}

// mlpName is the model name of an MLP with the given hidden widths.
func mlpName(hidden []int) string {
	s := make([]string, len(hidden))
	for i, h := range hidden {
		s[i] = fmt.Sprint(h)
	}
	return MLPPrefix + strings.Join(s, ",")
}
