package models

import (
	G "gorgonia.org/gorgonia"

	"github.com/gtstorm/gtstorm/models/internal/graphops"
)

// NewMNISTCNN returns the paper's MNIST network (§4.2): conv 1→16 5×5, ReLU,
// max-pool 2×2; conv 16→32 5×5, ReLU, max-pool 2×2; fully connected 512→10;
// softmax cross-entropy. No padding, so 28→24→12→8→4. 18,378 parameters.
func NewMNISTCNN() Model { return mnistCNNFor([]int{1, 28, 28}, 10) }

// mnistCNNFor is the MNIST CNN on images of shape [C,H,W] (cnnFits) with
// classes classes: the first convolution reads C channels, the dense layer
// the 32 maps the convolutions leave.
func mnistCNNFor(shape []int, classes int) Model {
	m := &classifier{name: MNISTCNNName, shape: shape, classes: classes, logits: mnistCNN}
	m.conv("conv1", shape[0], 16, 5)                             // conv1.w [16,C,5,5], conv1.b [16]
	m.conv("conv2", 16, 32, 5)                                   // conv2.w [32,16,5,5], conv2.b [32]
	m.dense("fc", 32*pooled(shape[1])*pooled(shape[2]), classes) // fc.w [512,10], fc.b [10] on MNIST
	return m
}

// mnistCNN is the forward pass of x [B,1,28,28] to the logits [B,10].
func mnistCNN(g *graphops.Graph, x *G.Node, p nodes) *G.Node {
	h := g.Conv2D(x, p["conv1.w"])            // [B,16,24,24]
	h = g.BiasReLUMaxPool2x2(h, p["conv1.b"]) // [B,16,12,12]
	h = g.Conv2D(h, p["conv2.w"])             // [B,32,8,8]
	h = g.BiasReLUMaxPool2x2(h, p["conv2.b"]) // [B,32,4,4]
	return g.Dense(h, p["fc.w"], p["fc.b"])   // [B,10]
}
