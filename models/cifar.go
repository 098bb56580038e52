package models

import G "gorgonia.org/gorgonia"

// NewCIFARCNN returns the paper's CIFAR-10 network (§4.2, LeNet-5 shape):
// conv 3→6 5×5, ReLU, max-pool 2×2; conv 6→16 5×5, ReLU, max-pool 2×2;
// fully connected 400→120, ReLU, 120→84, ReLU, 84→10; softmax cross-entropy.
// No padding, so 32→28→14→10→5. 62,006 parameters.
func NewCIFARCNN() Model {
	m := &classifier{name: "cifar-cnn", shape: []int{3, 32, 32}, classes: 10, logits: cifarLogits}
	m.add("conv1.w", 3*5*5, 6, 3, 5, 5)
	m.add("conv1.b", 3*5*5, 6)
	m.add("conv2.w", 6*5*5, 16, 6, 5, 5)
	m.add("conv2.b", 6*5*5, 16)
	m.add("fc1.w", 400, 400, 120)
	m.add("fc1.b", 400, 120)
	m.add("fc2.w", 120, 120, 84)
	m.add("fc2.b", 120, 84)
	m.add("fc3.w", 84, 84, 10)
	m.add("fc3.b", 84, 10)
	return m
}

func cifarLogits(b *builder, x *G.Node, w []*G.Node) *G.Node {
	h := b.poolBiasReLU("pool1", b.conv("conv1", x, w[0], false), w[1]) // [B,6,14,14]
	h = b.poolBiasReLU("pool2", b.conv("conv2", h, w[2], true), w[3])   // [B,16,5,5]
	h = b.dense("fc1", h, w[4], w[5], true)                             // [B,120]
	h = b.dense("fc2", h, w[6], w[7], true)                             // [B,84]
	return b.dense("fc3", h, w[8], w[9], false)                         // [B,10]
}
