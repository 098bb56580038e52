package models

// NewCIFARCNN returns the paper's CIFAR-10 network (§4.2, LeNet-5 shape):
// conv 3→6 5×5, ReLU, max-pool 2×2; conv 6→16 5×5, ReLU, max-pool 2×2;
// fully connected 400→120, ReLU, 120→84, ReLU, 84→10; softmax cross-entropy.
// No padding, so 32→28→14→10→5. 62,006 parameters.
func NewCIFARCNN() Model { return must(cifarCNNFor([]int{3, 32, 32}, 10)) }

// cifarCNNFor is the CIFAR-10 CNN on images of shape [C,H,W] (cnnFits)
// with classes classes: the first convolution reads C channels, fc1 the 16
// maps the convolutions leave.
func cifarCNNFor(shape []int, classes int) (Model, error) {
	n := NewNet(CIFARCNNName, shape, classes)
	h := n.Conv2D("conv1", n.Input(), Conv{Out: 6, Kernel: 5, Bias: true}) // [6,28,28]
	h = n.MaxPool(n.ReLU(h), 2, 2)                                         // [6,14,14]
	h = n.Conv2D("conv2", h, Conv{Out: 16, Kernel: 5, Bias: true})         // [16,10,10]
	h = n.MaxPool(n.ReLU(h), 2, 2)                                         // [16,5,5]
	h = n.ReLU(n.Dense("fc1", h, 120))                                     // fc1.w [400,120]
	h = n.ReLU(n.Dense("fc2", h, 84))                                      // fc2.w [120,84]
	return n.Model(n.Dense("fc3", h, classes))                             // fc3.w [84,10]
}

// must returns m, panicking on err: for the networks of fixed shapes,
// whose descriptions cannot fail.
func must(m Model, err error) Model {
	if err != nil {
		panic(err)
	}
	return m
}
