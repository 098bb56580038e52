package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// shiftLayer is y = x + b for a float32 tensor x of n samples and a
// trainable b of one value (Fixup's scalar biases) or one a channel
// (ResMLP's Affine shift).
type shiftLayer struct {
	name        string
	n, c, plane int // samples, values of b, values of x that each value of b shifts in a sample
	y           tensor.Tensor
	db          tensor.Tensor // [c]; nil outside training graphs
	sums        []float64     // db's sums over the samples
}

// shiftOp is (x, b) → x + b, one float32 addition a value: the same bits
// on every kernel set and architecture.
type shiftOp struct {
	kop
	l *shiftLayer
}

// shiftDBOp is dy → Σ dy, the gradient of b (over each channel), in
// float64 in order: sample after sample, each plane in memory order.
type shiftDBOp struct {
	kop
	l *shiftLayer
}

// Shift adds y = x + b for x [n,…] and a parameter b of one value
// (Fixup's x + bias), or for x [n,C,…] and b of C values, one a channel
// (ResMLP's Affine, x·α + β). The layer takes name, unique within the
// graph, for its buffers and ops. The gradient of b, the sum of dy (over
// each channel) in float64 in order, is formed in a training graph; that
// of x is the upstream gradient itself.
func (g *Graph) Shift(name string, x, b *G.Node) *G.Node {
	if !g.ok(name, x, b) {
		return nil
	}
	xs, k := x.Shape(), b.Shape().TotalSize()
	if len(xs) < 2 || k != 1 && k != xs[1] {
		g.err = fmt.Errorf("%s: shift of shape %v for an input of shape %v, want one value or one a channel", name, b.Shape(), xs)
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	l := &shiftLayer{name: name, n: xs[0], c: k, plane: xs.TotalSize() / xs[0] / k, y: g.ws.tensor(name+".y", xs...)}
	if g.training {
		l.db = g.ws.tensor(name+".db", b.Shape()...)
		l.sums = make([]float64, k)
	}
	return g.apply(&shiftOp{kop{name, l, dims(x, b), l.y.Shape()}, l}, name, x, b)
}

func (op *shiftOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.c*l.plane, l.c)
	if err != nil {
		return nil, err
	}
	y, b := f32(l.y), a[1]
	for k := range l.n * l.c {
		lo, s := k*l.plane, b[k%l.c]
		yb := y[lo : lo+l.plane]
		for i, v := range a[0][lo : lo+l.plane] {
			yb[i] = v + s
		}
	}
	return l.y, nil
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
	l := op.l
	a, err := op.args(inputs, l.n*l.c*l.plane)
	if err != nil {
		return nil, err
	}
	clear(l.sums)
	for k := range l.n * l.c {
		lo, s := k*l.plane, l.sums[k%l.c]
		for _, v := range a[0][lo : lo+l.plane] {
			s += float64(v)
		}
		l.sums[k%l.c] = s
	}
	db := f32(l.db)
	for c, s := range l.sums {
		db[c] = float32(s)
	}
	return l.db, nil
}
