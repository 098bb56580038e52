package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// mulLayer is y = a ⊙ b for two float32 tensors of one shape: a gate of
// one branch on another (gMLP's spatial gating unit u ⊙ v, GLU, SwiGLU).
type mulLayer struct {
	name   string
	size   int
	y      tensor.Tensor
	da, db tensor.Tensor // dy ⊙ b and dy ⊙ a; nil outside training graphs or for an input no op computes
}

// mulOp is (a, b) → a ⊙ b, one float32 product a value: the same bits on
// every kernel set and architecture.
type mulOp struct {
	kop
	l *mulLayer
}

// mulGradOp is (dy, other) → dy ⊙ other into out: the gradient of one
// factor.
type mulGradOp struct {
	kop
	l   *mulLayer
	out tensor.Tensor
}

// Mul adds a ⊙ b, the product of a and b value by value, for a and b of
// the same shape. Parameter-free, the layer takes name, unique within the
// graph, for its buffers and ops. The gradient of each factor, the
// upstream gradient times the other factor, is formed in a training graph
// for the factors another op computes.
func (g *Graph) Mul(name string, a, b *G.Node) *G.Node {
	if !g.ok(name, a, b) {
		return nil
	}
	if !a.Shape().Eq(b.Shape()) {
		g.err = fmt.Errorf("%s: %v ⊙ %v: want the same shapes", name, a.Shape(), b.Shape())
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	l := &mulLayer{name: name, size: a.Shape().TotalSize(), y: g.ws.tensor(name+".y", a.Shape()...)}
	if g.training && a.Op() != nil {
		l.da = g.ws.tensor(name+".da", a.Shape()...)
	}
	if g.training && b.Op() != nil {
		l.db = g.ws.tensor(name+".db", a.Shape()...)
	}
	return g.apply(&mulOp{kop{name, l, dims(a, b), l.y.Shape()}, l}, name, a, b)
}

// product writes out[i] = x[i]·z[i].
func product(out, x, z []float32) {
	for i, v := range x {
		out[i] = v * z[i]
	}
}

func (op *mulOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size, op.l.size)
	if err != nil {
		return nil, err
	}
	product(f32(op.l.y), a[0], a[1])
	return op.l.y, nil
}

func (op *mulOp) DiffWRT(int) []bool { return []bool{op.l.da != nil, op.l.db != nil} }

func (op *mulOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%s: %d inputs, want 2", l.name, len(inputs))
	}
	d := make(G.Nodes, 2)
	for k, out := range []tensor.Tensor{l.da, l.db} {
		if out == nil {
			continue
		}
		var err error
		other := inputs[1-k]
		if d[k], err = G.ApplyOp(&mulGradOp{kop{fmt.Sprintf("%s.d%d", l.name, k), l, dims(grad, other), out.Shape()}, l, out}, grad, other); err != nil {
			return nil, fmt.Errorf("%s: gradient of factor %d: %w", l.name, k, err)
		}
	}
	return d, nil
}

func (op *mulGradOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size, op.l.size)
	if err != nil {
		return nil, err
	}
	product(f32(op.out), a[0], a[1])
	return op.out, nil
}
