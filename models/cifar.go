package models

import (
	G "gorgonia.org/gorgonia"

	"github.com/gtstorm/gtstorm/models/internal/graphops"
)

// NewCIFARCNN returns the paper's CIFAR-10 network (§4.2, LeNet-5 shape):
// conv 3→6 5×5, ReLU, max-pool 2×2; conv 6→16 5×5, ReLU, max-pool 2×2;
// fully connected 400→120, ReLU, 120→84, ReLU, 84→10; softmax cross-entropy.
// No padding, so 32→28→14→10→5. 62,006 parameters.
func NewCIFARCNN() Model { return cifarCNNFor([]int{3, 32, 32}, 10) }

// cifarCNNFor is the CIFAR-10 CNN on images of shape [C,H,W] (cnnFits)
// with classes classes: the first convolution reads C channels, fc1 the 16
// maps the convolutions leave.
func cifarCNNFor(shape []int, classes int) Model {
	m := &classifier{name: CIFARCNNName, shape: shape, classes: classes, logits: cifarCNN}
	m.conv("conv1", shape[0], 6, 5)                           // conv1.w [6,C,5,5], conv1.b [6]
	m.conv("conv2", 6, 16, 5)                                 // conv2.w [16,6,5,5], conv2.b [16]
	m.dense("fc1", 16*pooled(shape[1])*pooled(shape[2]), 120) // fc1.w [400,120], fc1.b [120] on CIFAR-10
	m.dense("fc2", 120, 84)                                   // fc2.w [120,84], fc2.b [84]
	m.dense("fc3", 84, classes)                               // fc3.w [84,10], fc3.b [10]
	return m
}

// cifarCNN is the forward pass of x [B,3,32,32] to the logits [B,10].
func cifarCNN(g *graphops.Graph, x *G.Node, p nodes) *G.Node {
	h := g.Conv2D(x, p["conv1.w"])             // [B,6,28,28]
	h = g.BiasReLUMaxPool2x2(h, p["conv1.b"])  // [B,6,14,14]
	h = g.Conv2D(h, p["conv2.w"])              // [B,16,10,10]
	h = g.BiasReLUMaxPool2x2(h, p["conv2.b"])  // [B,16,5,5]
	h = g.DenseReLU(h, p["fc1.w"], p["fc1.b"]) // [B,120]
	h = g.DenseReLU(h, p["fc2.w"], p["fc2.b"]) // [B,84]
	return g.Dense(h, p["fc3.w"], p["fc3.b"])  // [B,10]
}
