package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// shiftLayer is y = x + b for a float32 tensor x and one trainable value
// b: Fixup's scalar biases.
type shiftLayer struct {
	name string
	size int
	y    tensor.Tensor
	db   tensor.Tensor // [1]; nil outside training graphs
}

// shiftOp is (x, b) → x + b, one float32 addition a value: the same bits
// on every kernel set and architecture.
type shiftOp struct {
	kop
	l *shiftLayer
}

// shiftDBOp is dy → Σ dy, the gradient of b, in float64 in order.
type shiftDBOp struct {
	kop
	l *shiftLayer
}

// Shift adds y = x + b for any x and a parameter b of one value (Fixup's
// x + bias). The layer takes name, unique within the graph, for its
// buffers and ops. The gradient of b, the sum of dy in float64 in order,
// is formed in a training graph; that of x is the upstream gradient
// itself.
func (g *Graph) Shift(name string, x, b *G.Node) *G.Node {
	if !g.ok(name, x, b) {
		return nil
	}
	if b.Shape().TotalSize() != 1 {
		g.err = fmt.Errorf("%s: shift of shape %v, want one value", name, b.Shape())
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	l := &shiftLayer{name: name, size: x.Shape().TotalSize(), y: g.ws.tensor(name+".y", x.Shape()...)}
	if g.training {
		l.db = g.ws.tensor(name+".db", b.Shape()...)
	}
	return g.apply(&shiftOp{kop{name, l, dims(x, b), l.y.Shape()}, l}, name, x, b)
}

func (op *shiftOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size, 1)
	if err != nil {
		return nil, err
	}
	y, b := f32(op.l.y), a[1][0]
	for i, v := range a[0] {
		y[i] = v + b
	}
	return op.l.y, nil
}

func (op *shiftOp) DiffWRT(int) []bool { return []bool{true, op.l.db != nil} }

func (op *shiftOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.db == nil {
		return G.Nodes{grad, nil}, nil
	}
	db, err := G.ApplyOp(&shiftDBOp{kop{l.name + ".db", l, dims(grad), l.db.Shape()}, l}, grad)
	if err != nil {
		return nil, fmt.Errorf("%s: shift gradient: %w", l.name, err)
	}
	return G.Nodes{grad, db}, nil
}

func (op *shiftDBOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size)
	if err != nil {
		return nil, err
	}
	var s float64
	for _, v := range a[0] {
		s += float64(v)
	}
	f32(op.l.db)[0] = float32(s)
	return op.l.db, nil
}
