package models

import (
	"fmt"
	"slices"
	"strings"
)

// Net describes an image classifier as a chain of layers, the way a
// PyTorch module's forward reads: each layer call takes the tensors it
// reads and returns the tensor it writes, so a residual block is two
// branches joined by Add (and an Inception-style block branches joined by
// Concat, and a ShuffleNet unit the halves Channels takes, joined by
// Concat and mixed by ShuffleChannels). The description is the network's only
// definition: it lays out the parameters as the layers declare them, and
// it is what the forward pass (a Gorgonia graph of this package's kernels),
// the ONNX export and the memory estimate are computed from.
//
// A Net checks each layer against the shape it reads and keeps the first
// error, so a network is written as a plain chain of calls with one error
// check at the end, in Model:
//
//	n := models.NewNet("tiny", []int{1, 28, 28}, 10)
//	h := n.Conv2D("conv1", n.Input(), models.Conv{Out: 8, Kernel: 3, Pad: 1, Bias: true})
//	h = n.MaxPool(n.ReLU(h), 2, 2)
//	m, err := n.Model(n.Dense("fc", h, 10))
//
// Parameter tensors are named after their layer: a convolution's filters
// name.w [Out,C/Groups,KH,KW] and bias name.b [Out]; a GroupNorm's scale name.g [C]
// and shift name.b [C]; a dense layer's weights name.w [in,out] and bias
// name.b [out]. A Net is not safe for concurrent use; the Model it makes is.
type Net struct {
	name    string
	classes int
	layout
	layers []netLayer
	shapes [][]int // per-sample shape of each tensor; tensor 0 is the input
	uses   []int   // number of layers reading each tensor
	err    error
}

// Tensor is a tensor of a Net: its input or the output of one of its layers.
type Tensor struct{ id int }

// Conv configures a 2-D convolution (PyTorch's nn.Conv2d): Out output
// channels, a Kernel×Kernel window moved by Stride (0 means 1) over the
// input padded with Pad zeros on every side, and a bias per output channel
// where Bias is set. Init says how the filters are drawn. Groups (0 or 1:
// the dense convolution) splits the input channels and the outputs into
// that many groups, each output channel reading its group's channels only
// (nn.Conv2d(groups=Groups)); Groups equal to the input channels and to
// Out is the depthwise convolution.
//
// The per-axis fields, zero by default, make the general convolution
// (nn.Conv2d(kernel_size=(Kernel,KernelW), stride=(Stride,StrideW),
// padding=(PadH,PadW), dilation=(Dilation,DilationW))): factorised 1×k and
// k×1 kernels, per-axis strides and padding, and dilated kernels.
// ExtraBottom and ExtraRight pad the bottom and the right unlike the top
// and the left, as TensorFlow's "SAME" padding and PyTorch's
// nn.ZeroPad2d((0,1,0,1)) before a convolution do (ONNX's pads
// [top,left,bottom,right] = [PadH,PadW,PadH+ExtraBottom,PadW+ExtraRight],
// Pad in place of PadH and PadW where it is set).
type Conv struct {
	Out, Kernel, Stride, Pad int
	Bias                     bool
	Init                     Init
	Groups                   int
	// KernelW, where above 0, is the window's width, Kernel then its
	// height.
	KernelW int
	// StrideW, where above 0, is the step along the columns, Stride then
	// the step along the rows.
	StrideW int
	// PadH and PadW, where either is above 0, are the zero padding of the
	// top and bottom and of the left and right, in place of Pad (which
	// must then be 0).
	PadH, PadW int
	// Dilation (0 or 1: adjacent taps) is the distance between the
	// window's taps; DilationW, where above 0, is the distance along the
	// columns, Dilation then the distance along the rows.
	Dilation, DilationW int
	// ExtraBottom and ExtraRight (0: none) are the rows of zeros below the
	// input and the columns right of it beyond the top's and the left's
	// padding, negative for fewer; no side's padding may be negative.
	ExtraBottom, ExtraRight int
}

// Init is how a layer's weights are drawn.
type Init int

const (
	// InitUniform draws from U(−1/√fan_in, 1/√fan_in), PyTorch's default
	// for nn.Conv2d and nn.Linear.
	InitUniform Init = iota
	// InitKaimingNormal draws from N(0, 2/fan_in): He et al.'s
	// initialisation for layers followed by ReLU (kaiming_normal_ with
	// mode fan_in), as SPEC §12's networks use for their convolutions.
	InitKaimingNormal
)

// layerKind is what a netLayer computes.
type layerKind int

const (
	kindConv layerKind = iota
	kindGroupNorm
	kindReLU
	kindMaxPool
	kindAvgPool
	kindGlobalAvgPool
	kindAdd
	kindFlatten
	kindDense
	kindDropout
	kindLeakyReLU
	kindTanh
	kindSigmoid
	kindConcat
	kindAddConst
	kindSubConst
	kindMulConst
	kindDivConst
	kindSiLU
	kindClamp
	kindELU
	kindSoftplus
	kindHardsigmoid
	kindHardswish
	kindGELU
	kindChannelScale
	kindChannels
	kindShuffle
	kindLayerNorm
	kindPReLU
	kindGlobalMaxPool
	kindLayerScale
	kindChannelNorm
	kindTokens
	kindAttention
	kindTokenLinear
	kindClassToken
	kindPositionEmbedding
	kindToken
	kindPatches
	kindTokenRange
	kindSub
	kindScale
	kindShift
	kindAttentionPool
	kindChannelShift
	kindMul
	kindL2Normalize
	kindLRN
)

// netLayer is one recorded layer: what it computes, the tensors it reads
// and the one it writes, and its settings.
type netLayer struct {
	kind   layerKind
	name   string    // names its parameters and its buffers
	in     []int     // tensors read
	out    int       // tensor written
	conv   Conv      // kindConv
	groups int       // kindGroupNorm, kindShuffle
	span   [2]int    // kindChannels: the channels [from,to)
	k, s   int       // pooling window and stride
	pad    int       // pooling padding
	exPad  bool      // kindAvgPool with pad > 0: divide by the in-map count (count_include_pad=False)
	ceil   bool      // kindMaxPool, kindAvgPool: output size rounded up (ceil_mode=True)
	units  int       // kindDense: output width; kindPReLU: its slopes
	noBias bool      // kindDense: without a bias (DenseNoBias)
	rate   float32   // kindDropout: the probability p of dropping an element
	key    int       // kindDropout: the index that keys its masks, named by dropout#key+1
	alpha  float32   // kindLeakyReLU: the slope for x ≤ 0; kindELU: its alpha
	lo, hi float32   // kindClamp: the bounds
	consts []float32 // kindAddConst … kindDivConst: one value, or one per channel
	eps    float32   // kindLayerNorm, kindChannelNorm: ε, added to the variance; kindL2Normalize: the norm's floor
	lrn    LRN       // kindLRN
	heads  int       // kindAttention: the heads
	scale  float32   // kindAttention: the scores' scale
	index  int       // kindToken, kindTokenRange: the (first) position taken
	count  int       // kindTokenRange: the positions taken
	owner  string    // kindScale, kindShift: the layer whose value it uses again ("" for its own)

	// kindPatches: a patch's height and width, and its features' order.
	patch [2]int
	order PatchOrder
}

// NewNet starts the description of a network named name on samples of the
// given shape ([C,H,W] for images) with classes classes.
func NewNet(name string, shape []int, classes int) *Net {
	n := &Net{name: name, classes: classes, shapes: [][]int{slices.Clone(shape)}, uses: []int{0}}
	if name == "" {
		n.err = fmt.Errorf("network has no name")
	} else if len(shape) == 0 || slices.Min(shape) < 1 {
		n.err = fmt.Errorf("%s: samples of shape %v, want at least one feature", name, shape)
	} else if classes < 1 {
		n.err = fmt.Errorf("%s: %d classes, want at least 1", name, classes)
	}
	return n
}

// Input returns the network's input tensor: one sample of the shape given
// to NewNet, with a batch dimension in front.
func (n *Net) Input() Tensor { return Tensor{0} }

// Err returns the first error of the description.
func (n *Net) Err() error { return n.err }

// Shape returns the per-sample shape of t, or nil after an error.
func (n *Net) Shape(t Tensor) []int {
	if n.err != nil || t.id < 0 || t.id >= len(n.shapes) {
		return nil
	}
	return slices.Clone(n.shapes[t.id])
}

// fail records the first error, prefixed with the network's and the
// layer's names.
func (n *Net) fail(layer, format string, args ...any) Tensor {
	if n.err == nil {
		n.err = fmt.Errorf("%s: %s: %s", n.name, layer, fmt.Sprintf(format, args...))
	}
	return Tensor{-1}
}

// reads checks that the tensors exist and that no error is recorded.
func (n *Net) reads(layer string, ts ...Tensor) bool {
	if n.err != nil {
		return false
	}
	for _, t := range ts {
		if t.id < 0 || t.id >= len(n.shapes) {
			n.fail(layer, "reads a tensor that is not of this network")
			return false
		}
	}
	return true
}

// named checks a layer name given by the caller: not empty, without the
// dots that separate it from its parameters' suffixes, and not taken.
func (n *Net) named(name string) bool {
	if n.err != nil {
		return false
	}
	if name == "" || strings.ContainsAny(name, " \t\n#") {
		n.fail(fmt.Sprintf("layer %q", name), "a layer name must be a non-empty word without '#'")
		return false
	}
	if name == ONNXInput || name == ONNXOutput {
		n.fail(name, "the name of the network's input or output, not of a layer")
		return false
	}
	for _, l := range n.layers {
		if l.name == name {
			n.fail(name, "two layers have this name")
			return false
		}
	}
	return true
}

// autoName names a parameter-free layer after its kind and position,
// "relu#3", "maxpool#7": the '#' keeps it apart from the names callers
// give.
func (n *Net) autoName(kind string) string { return fmt.Sprintf("%s#%d", kind, len(n.layers)+1) }

// record appends l, reading in and writing a new tensor of shape out.
func (n *Net) record(l netLayer, out []int, in ...Tensor) Tensor {
	for _, t := range in {
		l.in = append(l.in, t.id)
		n.uses[t.id]++
	}
	l.out = len(n.shapes)
	n.shapes = append(n.shapes, out)
	n.uses = append(n.uses, 0)
	n.layers = append(n.layers, l)
	return Tensor{l.out}
}

// image returns x's shape [C,H,W], or records an error naming what the
// layer needs.
func (n *Net) image(layer string, x Tensor) ([]int, bool) {
	s := n.shapes[x.id]
	if len(s) != 3 {
		n.fail(layer, "reads a tensor of shape %v, want an image [C,H,W]", s)
		return nil, false
	}
	return s, true
}

// window returns the output side of a window of k moved by stride over a
// side of size with pad zeros on each end (floored, as PyTorch), or 0
// where the window does not fit.
func window(size, k, stride, pad int) int {
	if size+2*pad < k {
		return 0
	}
	return (size+2*pad-k)/stride + 1
}
