package models

// NewMNISTCNN returns the paper's MNIST network (§4.2): conv 1→16 5×5, ReLU,
// max-pool 2×2; conv 16→32 5×5, ReLU, max-pool 2×2; fully connected 512→10;
// softmax cross-entropy. No padding, so 28→24→12→8→4. 18,378 parameters.
func NewMNISTCNN() Model { return must(mnistCNNFor([]int{1, 28, 28}, 10)) }

// mnistCNNFor is the MNIST CNN on images of shape [C,H,W] (cnnFits) with
// classes classes: the first convolution reads C channels, the dense layer
// the 32 maps the convolutions leave.
func mnistCNNFor(shape []int, classes int) (Model, error) {
	n := NewNet(MNISTCNNName, shape, classes)
	h := n.Conv2D("conv1", n.Input(), Conv{Out: 16, Kernel: 5, Bias: true}) // [16,24,24]
	h = n.MaxPool(n.ReLU(h), 2, 2)                                          // [16,12,12]
	h = n.Conv2D("conv2", h, Conv{Out: 32, Kernel: 5, Bias: true})          // [32,8,8]
	h = n.MaxPool(n.ReLU(h), 2, 2)                                          // [32,4,4]
	return n.Model(n.Dense("fc", h, classes))                               // fc.w [512,10]
}
