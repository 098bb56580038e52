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
	h := b.maxPool(b.relu(b.conv(x, w[0], w[1]))) // [B,16,12,12]
	h = b.maxPool(b.relu(b.conv(h, w[2], w[3])))  // [B,32,4,4]
	return b.dense(b.flatten(h), w[4], w[5])      // [B,10]
}
