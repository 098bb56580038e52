package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// avgPoolLayer is the mean of x [n,C,H,W] over k×k windows moved by a
// stride (kernels.AvgPool), or, global, over each whole plane
// (kernels.GlobalAvgPool, output [n,C]).
type avgPoolLayer struct {
	name   string
	global bool
	shape  kernels.WindowShape // n·C planes of H×W; K and Stride unused when global
	y      tensor.Tensor       // output [n,C,OH,OW], or [n,C] when global
	dx     tensor.Tensor       // input gradient [n,C,H,W]
}

// avgPoolOp is the forward pass: x → y.
type avgPoolOp struct {
	kop
	l *avgPoolLayer
}

// avgPoolInputGradOp is dy → dx: each dy spread evenly over its window.
type avgPoolInputGradOp struct {
	kop
	l *avgPoolLayer
}

// AvgPool adds average pooling of x [n,C,H,W] over k×k windows moved by
// stride, without padding (PyTorch's AvgPool2d(k, stride)): [n,C,
// (H−k)/stride+1,(W−k)/stride+1], rounded down, each window summed in
// float64 (kernels.AvgPool, pure Go). Parameter-free, the layer takes name,
// unique within the graph, for its buffers and ops. The gradient with
// respect to x is formed only when x is computed by another op.
func (g *Graph) AvgPool(name string, x *G.Node, k, stride int) *G.Node {
	return g.AvgPoolPadded(name, x, k, stride, 0)
}

// AvgPoolPadded is AvgPool over x padded with pad zeros (at most k/2) on
// every side of its maps, the zeros counted in each window's divisor k²
// (PyTorch's AvgPool2d(k, stride, pad), count_include_pad=True):
// [n,C,(H+2·pad−k)/stride+1,(W+2·pad−k)/stride+1].
func (g *Graph) AvgPoolPadded(name string, x *G.Node, k, stride, pad int) *G.Node {
	return g.AvgPoolWindow(name, x, Window{K: k, Stride: stride, Pad: pad})
}

// AvgPoolExcludePad is AvgPoolPadded with each window divided by the
// number of its values inside the map rather than k² (PyTorch's
// AvgPool2d(k, stride, pad, count_include_pad=False); the gradient spreads
// dy over those values by the same divisor). Without padding it is
// AvgPool.
func (g *Graph) AvgPoolExcludePad(name string, x *G.Node, k, stride, pad int) *G.Node {
	return g.AvgPoolWindow(name, x, Window{K: k, Stride: stride, Pad: pad, ExcludePad: pad > 0})
}

// AvgPoolWindow is AvgPoolPadded configured by w: AvgPoolExcludePad's
// divisor where w.ExcludePad is set, and in ceil mode where w.Ceil is
// (each last window, clipped, divided as PyTorch's ceil_mode=True does).
func (g *Graph) AvgPoolWindow(name string, x *G.Node, w Window) *G.Node {
	if !g.ok(name, x) {
		return nil
	}
	s, ok := g.windowShape(name, x, w)
	if !ok {
		return nil
	}
	xs := x.Shape()
	return g.avgPool(&avgPoolLayer{name: name, shape: s, y: g.ws.tensor(name+".y", xs[0], xs[1], s.OH(), s.OW())}, x)
}

// GlobalAvgPool adds the mean of each plane of x [n,C,H,W]: [n,C], ready
// for Dense (PyTorch's x.mean((2, 3)), or AdaptiveAvgPool2d(1) then
// flatten), each plane summed in float64 (kernels.GlobalAvgPool).
// Parameter-free, the layer takes name, unique within the graph, for its
// buffers and ops. The gradient with respect to x is formed only when x is
// computed by another op.
func (g *Graph) GlobalAvgPool(name string, x *G.Node) *G.Node {
	if !g.ok(name, x) {
		return nil
	}
	xs := x.Shape()
	if len(xs) != 4 || xs.TotalSize() == 0 {
		g.err = fmt.Errorf("%s: input %v: want [n,C,H,W]", name, xs)
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	s := kernels.WindowShape{Planes: xs[0] * xs[1], H: xs[2], W: xs[3]}
	return g.avgPool(&avgPoolLayer{name: name, global: true, shape: s, y: g.ws.tensor(name+".y", xs[0], xs[1])}, x)
}

// avgPool completes the layer l of input x and adds its forward op.
func (g *Graph) avgPool(l *avgPoolLayer, x *G.Node) *G.Node {
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(l.name+".dx", x.Shape()...)
	}
	return g.apply(&avgPoolOp{kop{l.name + ".forward", l, dims(x), l.y.Shape()}, l}, l.name, x)
}

func (op *avgPoolOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.shape.In())
	if err != nil {
		return nil, err
	}
	if l.global {
		kernels.GlobalAvgPool(f32(l.y), a[0], l.shape.Planes, l.shape.H*l.shape.W)
	} else {
		kernels.AvgPool(f32(l.y), a[0], l.shape)
	}
	return l.y, nil
}

func (op *avgPoolOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil} }

func (op *avgPoolOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dx == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", l.name)
	}
	dx, err := G.ApplyOp(&avgPoolInputGradOp{kop{l.name + ".dx", l, dims(grad), l.dx.Shape()}, l}, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

func (op *avgPoolInputGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	out := l.shape.Planes
	if !l.global {
		out = l.shape.Out()
	}
	a, err := op.args(inputs, out)
	if err != nil {
		return nil, err
	}
	if l.global {
		kernels.GlobalAvgPoolBackward(f32(l.dx), a[0], l.shape.Planes, l.shape.H*l.shape.W)
	} else {
		kernels.AvgPoolBackward(f32(l.dx), a[0], l.shape)
	}
	return l.dx, nil
}
