package models

import (
	"github.com/gtstorm/gtstorm/internal/kernels"
	"github.com/gtstorm/gtstorm/models/internal/graphops"
)

// Pooling configures a max or average pooling layer (PyTorch's nn.MaxPool2d
// and nn.AvgPool2d): Kernel×Kernel windows moved by Stride (0 means Kernel,
// PyTorch's default) over the input padded with Pad (at most Kernel/2) on
// every side; ExcludePad divides an average by the number of its values
// inside the map (count_include_pad=False), and Ceil rounds the output
// size up (ceil_mode=True), keeping a last window clipped at the padded
// map's end where it starts inside the map or its leading padding.
type Pooling struct {
	Kernel, Stride, Pad int
	ExcludePad, Ceil    bool
}

// MaxPool2D adds max pooling of x [C,H,W] configured by p, whose
// ExcludePad must be unset; without Ceil it is MaxPoolPadded.
func (n *Net) MaxPool2D(x Tensor, p Pooling) Tensor {
	if p.ExcludePad {
		return n.fail(n.autoName("maxpool"), "ExcludePad is set: it configures an average pool's divisor")
	}
	return n.pool(kindMaxPool, "maxpool", x, p.strided())
}

// AvgPool2D adds average pooling of x [C,H,W] configured by p: with Ceil,
// each window is divided by its extent up to the padded map's end
// (PyTorch's divisor), or with ExcludePad by its count of in-map values;
// without Ceil it is AvgPoolPadded, or AvgPoolExcludePad with ExcludePad.
func (n *Net) AvgPool2D(x Tensor, p Pooling) Tensor {
	return n.pool(kindAvgPool, "avgpool", x, p.strided())
}

// strided returns p with a Stride of 0 made Kernel.
func (p Pooling) strided() Pooling {
	if p.Stride == 0 {
		p.Stride = p.Kernel
	}
	return p
}

// ceilWindow is window in ceil mode: the output side of a window of k
// moved by stride over a side of size with pad on each end, rounded up as
// PyTorch's ceil_mode=True does (the kernels' WindowShape.Ceil). The
// window must fit the padded side.
func ceilWindow(size, k, stride, pad int) int {
	return kernels.WindowShape{Planes: 1, H: size, W: size, K: k, Stride: stride, Pad: pad, Ceil: true}.OH()
}

// window returns the graph's configuration of pooling layer l.
func (l netLayer) window() graphops.Window {
	return graphops.Window{K: l.k, Stride: l.s, Pad: l.pad, ExcludePad: l.exPad, Ceil: l.ceil}
}
