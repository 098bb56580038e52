package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// reshapeLayer views x [n,…] as [n,shape…], the same values in the same
// order: a copy forward, and the gradient's copy back.
type reshapeLayer struct {
	name string
	size int // values in all
	y    tensor.Tensor
	dx   tensor.Tensor // input gradient; nil where it is not formed
}

// reshapeOp copies its input into a buffer of its own shape: forward,
// x → y, and backward, dy → dx.
type reshapeOp struct {
	kop
	l   *reshapeLayer
	out tensor.Tensor
}

// Reshape adds the view of x [n,…] as [n,shape…] (torch's x.flatten(2) of
// a patch embedding's [n,D,H,W] as the tokens [n,D,H·W]): the same values
// in the same order, copied. The layer takes name, unique within the
// graph, for its buffers and ops. Its gradient, dy viewed back, is formed
// only where x is computed by another op.
func (g *Graph) Reshape(name string, x *G.Node, shape ...int) *G.Node {
	if !g.ok(name, x) {
		return nil
	}
	xs := x.Shape()
	to := append([]int{xs[0]}, shape...)
	if len(xs) < 1 || tensor.Shape(to).TotalSize() != xs.TotalSize() {
		g.err = fmt.Errorf("%s: input of shape %v viewed as %v: want as many values", name, xs, to)
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	l := &reshapeLayer{name: name, size: xs.TotalSize(), y: g.ws.tensor(name+".y", to...)}
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(name+".dx", xs...)
	}
	return g.apply(&reshapeOp{kop{name + ".forward", l, dims(x), l.y.Shape()}, l, l.y}, name, x)
}

func (op *reshapeOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size)
	if err != nil {
		return nil, err
	}
	copy(f32(op.out), a[0])
	return op.out, nil
}

func (op *reshapeOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil} }

func (op *reshapeOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%s: %d inputs, want 1", l.name, len(inputs))
	}
	if l.dx == nil || op.out != l.y {
		return G.Nodes{nil}, nil
	}
	d, err := G.ApplyOp(&reshapeOp{kop{l.name + ".dx", l, dims(grad), l.dx.Shape()}, l, l.dx}, grad)
	if err != nil {
		return nil, fmt.Errorf("%s: input gradient: %w", l.name, err)
	}
	return G.Nodes{d}, nil
}
