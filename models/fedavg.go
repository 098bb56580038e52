package models

// FedAvgCNNName names NewFedAvgCNN's network.
const FedAvgCNNName = "fedavg-cnn"

// NewFedAvgCNN returns the CNN of McMahan et al. 2017, LEAF's FEMNIST
// model (SPEC §12), on images of shape [C,H,W] with classes classes: conv
// 5×5 C→32 (padding 2) → ReLU → max-pool 2×2; conv 5×5 32→64 (padding 2) →
// ReLU → max-pool 2×2; fully connected → 512 → ReLU → classes.
// Convolutions are drawn Kaiming-normal, their biases and the dense layers
// as PyTorch's defaults.
func NewFedAvgCNN(shape []int, classes int) (Model, error) {
	n := NewNet(FedAvgCNNName, shape, classes)
	conv := func(name string, x Tensor, out int) Tensor {
		h := n.Conv2D(name, x, Conv{Out: out, Kernel: 5, Pad: 2, Bias: true, Init: InitKaimingNormal})
		return n.MaxPool(n.ReLU(h), 2, 2)
	}
	h := conv("conv1", n.Input(), 32) // [32,H/2,W/2]
	h = conv("conv2", h, 64)          // [64,H/4,W/4]
	h = n.ReLU(n.Dense("fc1", h, 512))
	return n.Model(n.Dense("fc2", h, classes))
}
