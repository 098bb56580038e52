package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// subLayer is y = a − b for two float32 tensors of one shape: PoolFormer's
// token mixer pool(x) − x, and any difference of two branches.
type subLayer struct {
	name string
	size int
	y    tensor.Tensor
	db   tensor.Tensor // −dy, the gradient of b; nil outside training graphs
}

// subOp is (a, b) → a − b, one float32 subtraction a value: the same bits
// on every kernel set and architecture.
type subOp struct {
	kop
	l *subLayer
}

// subNegOp is dy → −dy, the gradient of b.
type subNegOp struct {
	kop
	l *subLayer
}

// Sub adds a − b for a and b of the same shape. Parameter-free, the layer
// takes name, unique within the graph, for its buffers and ops. Its
// gradient is the upstream gradient for a and its negation for b.
func (g *Graph) Sub(name string, a, b *G.Node) *G.Node {
	if !g.ok(name, a, b) {
		return nil
	}
	if !a.Shape().Eq(b.Shape()) {
		g.err = fmt.Errorf("%s: %v − %v: want the same shapes", name, a.Shape(), b.Shape())
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	l := &subLayer{name: name, size: a.Shape().TotalSize(), y: g.ws.tensor(name+".y", a.Shape()...)}
	if g.training {
		l.db = g.ws.tensor(name+".db", a.Shape()...)
	}
	return g.apply(&subOp{kop{name, l, dims(a, b), l.y.Shape()}, l}, name, a, b)
}

func (op *subOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size, op.l.size)
	if err != nil {
		return nil, err
	}
	y, x, z := f32(op.l.y), a[0], a[1]
	for i := range y {
		y[i] = x[i] - z[i]
	}
	return op.l.y, nil
}

func (op *subOp) DiffWRT(int) []bool { return []bool{true, op.l.db != nil} }

func (op *subOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.db == nil {
		return G.Nodes{grad, nil}, nil
	}
	db, err := G.ApplyOp(&subNegOp{kop{l.name + ".neg", l, dims(grad), l.db.Shape()}, l}, grad)
	if err != nil {
		return nil, fmt.Errorf("%s: gradient of the subtrahend: %w", l.name, err)
	}
	return G.Nodes{grad, db}, nil
}

func (op *subNegOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size)
	if err != nil {
		return nil, err
	}
	db := f32(op.l.db)
	for i, v := range a[0] {
		db[i] = -v
	}
	return op.l.db, nil
}
