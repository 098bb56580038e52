package models

import G "gorgonia.org/gorgonia"

// NewMNISTCNN returns the paper's MNIST network (§4.2): conv 1→16 5×5, ReLU,
// max-pool 2×2; conv 16→32 5×5, ReLU, max-pool 2×2; fully connected 512→10;
// softmax cross-entropy. No padding, so 28→24→12→8→4. 18,378 parameters.
func NewMNISTCNN() Model {
	m := &classifier{name: "mnist-cnn", shape: []int{1, 28, 28}, classes: 10, logits: mnistLogits}
	m.add("conv1.w", 1*5*5, 16, 1, 5, 5)
	m.add("conv1.b", 1*5*5, 16)
	m.add("conv2.w", 16*5*5, 32, 16, 5, 5)
	m.add("conv2.b", 16*5*5, 32)
	m.add("fc.w", 512, 512, 10)
	m.add("fc.b", 512, 10)
	return m
}

func mnistLogits(b *builder, x *G.Node, w []*G.Node) *G.Node {
	h := b.poolBiasReLU("pool1", b.conv("conv1", x, w[0], false), w[1]) // [B,16,12,12]
	h = b.poolBiasReLU("pool2", b.conv("conv2", h, w[2], true), w[3])   // [B,32,4,4]
	return b.dense("fc", h, w[4], w[5], false)                          // [B,10]
}
