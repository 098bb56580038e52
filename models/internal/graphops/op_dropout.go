package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// dropoutLayer is y = x·mask, elementwise, for x of any shape: inverted
// dropout whose mask (0 for a dropped element, the keep scale 1/(1−p) for a
// kept one) its caller writes before each run.
type dropoutLayer struct {
	name  string
	size  int
	mask  []float32     // of x's size, written by the caller
	y, dx tensor.Tensor // output and input gradient, of x's shape
}

// dropoutOp is the forward pass: x → y.
type dropoutOp struct {
	kop
	l *dropoutLayer
}

// dropoutInputGradOp is dy → dx = dy·mask.
type dropoutInputGradOp struct {
	kop
	l *dropoutLayer
}

// Dropout adds y = x·mask, elementwise, for x of any shape, and returns
// the mask's buffer, of x's size: the caller writes the minibatch's mask
// (0 where an element is dropped, 1/(1−p) where it is kept) into it before
// each run, so that a graph's runs on one batch (GT-STORM's two gradients)
// share it. Parameter-free, the layer takes name, unique within the graph,
// for its buffers and ops. The gradient with respect to x, dy·mask, is
// formed only when x is computed by another op.
func (g *Graph) Dropout(name string, x *G.Node) (*G.Node, []float32) {
	if !g.ok(name, x) || !g.claim(name) {
		return nil, nil
	}
	xs := x.Shape()
	l := &dropoutLayer{name: name, size: xs.TotalSize(), y: g.ws.tensor(name+".y", xs...)}
	l.mask = g.ws.Floats(name+".mask", l.size)
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(name+".dx", xs...)
	}
	return g.apply(&dropoutOp{kop{name + ".forward", l, dims(x), l.y.Shape()}, l}, name, x), l.mask
}

// Training reports whether the graph is built for training (with
// gradients): the mode in which dropout drops.
func (g *Graph) Training() bool { return g.training }

func (op *dropoutOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size)
	if err != nil {
		return nil, err
	}
	kernels.Mul(f32(op.l.y), a[0], op.l.mask)
	return op.l.y, nil
}

func (op *dropoutOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil} }

func (op *dropoutOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dx == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", l.name)
	}
	dx, err := G.ApplyOp(&dropoutInputGradOp{kop{l.name + ".dx", l, dims(grad), l.dx.Shape()}, l}, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

func (op *dropoutInputGradOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size)
	if err != nil {
		return nil, err
	}
	kernels.Mul(f32(op.l.dx), a[0], op.l.mask)
	return op.l.dx, nil
}
