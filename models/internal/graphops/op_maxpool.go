package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// maxPoolLayer is k×k max-pooling with stride s, padded or not, of
// x [n,C,H,W] (kernels.MaxPool). The forward pass records the position it
// selected in each window for the backward pass.
type maxPoolLayer struct {
	name  string
	shape kernels.WindowShape // n·C planes of H×W
	y     tensor.Tensor       // output [n,C,OH,OW]
	arg   []uint8             // selected position in each window
	dx    tensor.Tensor       // input gradient [n,C,H,W]
}

// maxPoolOp is the forward pass: x → y.
type maxPoolOp struct {
	kop
	l *maxPoolLayer
}

// maxPoolInputGradOp is (y, dy) → dx: dy at the positions selected.
type maxPoolInputGradOp struct {
	kop
	l *maxPoolLayer
}

// windowShape returns the pooling shape of x [n,C,H,W] for the windows w,
// or records an error.
func (g *Graph) windowShape(name string, x *G.Node, w Window) (kernels.WindowShape, bool) {
	xs := x.Shape()
	if len(xs) != 4 {
		g.err = fmt.Errorf("%s: input %v: want [n,C,H,W]", name, xs)
		return kernels.WindowShape{}, false
	}
	s := kernels.WindowShape{Planes: xs[0] * xs[1], H: xs[2], W: xs[3], K: w.K, Stride: w.Stride, Pad: w.Pad,
		ExcludePad: w.ExcludePad, Ceil: w.Ceil}
	if err := s.Validate(); err != nil {
		g.err = fmt.Errorf("%s: %w", name, err)
		return s, false
	}
	return s, g.claim(name)
}

// MaxPool adds max-pooling of x [n,C,H,W] over k×k windows moved by stride,
// without padding (PyTorch's MaxPool2d(k, stride)): [n,C,(H−k)/stride+1,
// (W−k)/stride+1], rounded down. Each output is its window's first maximum
// (kernels.MaxPool, pure Go); windows may overlap. For 2×2 windows after a
// convolution's bias and ReLU, BiasReLUMaxPool2x2 is faster. Parameter-free,
// the layer takes name, unique within the graph, for its buffers and ops.
// The gradient with respect to x is formed only when x is computed by
// another op.
func (g *Graph) MaxPool(name string, x *G.Node, k, stride int) *G.Node {
	return g.MaxPoolPadded(name, x, k, stride, 0)
}

// MaxPoolPadded is MaxPool over x padded with pad (at most k/2) on every
// side of its maps, padding that is never selected (PyTorch's
// MaxPool2d(k, stride, pad)): [n,C,(H+2·pad−k)/stride+1,
// (W+2·pad−k)/stride+1].
func (g *Graph) MaxPoolPadded(name string, x *G.Node, k, stride, pad int) *G.Node {
	return g.MaxPoolWindow(name, x, Window{K: k, Stride: stride, Pad: pad})
}

// MaxPoolWindow is MaxPoolPadded configured by w, in ceil mode where
// w.Ceil is set (w.ExcludePad does not matter).
func (g *Graph) MaxPoolWindow(name string, x *G.Node, w Window) *G.Node {
	if !g.ok(name, x) {
		return nil
	}
	s, ok := g.windowShape(name, x, w)
	if !ok {
		return nil
	}
	xs := x.Shape()
	l := &maxPoolLayer{name: name, shape: s,
		y:   g.ws.tensor(name+".y", xs[0], xs[1], s.OH(), s.OW()),
		arg: g.ws.Bytes(name+".arg", s.Out()),
	}
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(name+".dx", xs...)
	}
	return g.apply(&maxPoolOp{kop{name + ".forward", l, dims(x), l.y.Shape()}, l}, name, x)
}

func (op *maxPoolOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.shape.In())
	if err != nil {
		return nil, err
	}
	kernels.MaxPool(f32(l.y), l.arg, a[0], l.shape)
	return l.y, nil
}

func (op *maxPoolOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil} }

func (op *maxPoolOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dx == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", l.name)
	}
	dx, err := G.ApplyOp(&maxPoolInputGradOp{kop{l.name + ".dx", l, dims(output, grad), l.dx.Shape()}, l}, output, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

func (op *maxPoolInputGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.shape.Out(), l.shape.Out())
	if err != nil {
		return nil, err
	}
	kernels.MaxPoolBackward(f32(l.dx), a[1], l.arg, l.shape)
	return l.dx, nil
}
