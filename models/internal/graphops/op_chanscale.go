package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// scaleLayer is y[i,c,…] = x[i,c,…]·gate[i,c]: each channel of each
// sample scaled by that sample's gate, the excitation of a
// squeeze-and-excitation block. Forward and the input's gradient are one
// float32 product per value; the gate's gradient sums a channel's products
// in float64 in a fixed order. Pure Go: the same bits on every kernel set
// and architecture.
type scaleLayer struct {
	name  string
	n, c  int // batch and channels
	plane int // values per channel of a sample of x
	y     tensor.Tensor
	dx    tensor.Tensor // gradient of x; nil where it is not formed
	dg    tensor.Tensor // gradient of the gate; nil where it is not formed
}

// scaleOp is the forward pass: (x, gate) → y.
type scaleOp struct {
	kop
	l *scaleLayer
}

// scaleDXOp is (dy, gate) → dx = dy·gate[i,c].
type scaleDXOp struct {
	kop
	l *scaleLayer
}

// scaleDGOp is (dy, x) → dgate[i,c] = Σ over the channel's values of dy·x.
type scaleDGOp struct {
	kop
	l *scaleLayer
}

// ChannelScale adds y = x·gate for x [n,C,…] (an NCHW map) and a gate of
// n·C values ([n,C], or its [n,C,1,1] view): channel c of sample i is
// multiplied by gate[i,c], as torch's x * gate with gate [N,C,1,1] of a
// squeeze-and-excitation block computes it. Parameter-free, the layer
// takes name, unique within the graph, for its buffers and ops. The
// gradient with respect to x, dy·gate, and with respect to the gate, the
// sum over each channel of dy·x (in float64, in order), are formed only
// for inputs computed by another op.
func (g *Graph) ChannelScale(name string, x, gate *G.Node) *G.Node {
	if !g.ok(name, x, gate) {
		return nil
	}
	xs, gs := x.Shape(), gate.Shape()
	if len(xs) < 3 {
		g.err = fmt.Errorf("%s: input of shape %v, want maps [n,C,…]", name, xs)
		return nil
	}
	if len(gs) < 2 || gs[0] != xs[0] || gs[1] != xs[1] || gs.TotalSize() != xs[0]*xs[1] {
		g.err = fmt.Errorf("%s: gate of shape %v for an input of shape %v, want [%d,%d] or [%d,%d,1,1]", name, gs, xs, xs[0], xs[1], xs[0], xs[1])
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	l := &scaleLayer{name: name, n: xs[0], c: xs[1], plane: xs.TotalSize() / xs[0] / xs[1], y: g.ws.tensor(name+".y", xs...)}
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(name+".dx", xs...)
	}
	if g.training && gate.Op() != nil {
		l.dg = g.ws.tensor(name+".dgate", gs...)
	}
	return g.apply(&scaleOp{kop{name + ".forward", l, dims(x, gate), l.y.Shape()}, l}, name, x, gate)
}

func (op *scaleOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.c*l.plane, l.n*l.c)
	if err != nil {
		return nil, err
	}
	x, gate, y := a[0], a[1], f32(l.y)
	for k, s := range gate {
		lo := k * l.plane
		yb := y[lo : lo+l.plane]
		for i, v := range x[lo : lo+l.plane] {
			yb[i] = v * s
		}
	}
	return l.y, nil
}

func (op *scaleOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil, op.l.dg != nil} }

func (op *scaleOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%s: %d inputs, want 2", l.name, len(inputs))
	}
	d := make(G.Nodes, 2)
	var err error
	if l.dx != nil {
		if d[0], err = G.ApplyOp(&scaleDXOp{kop{l.name + ".dx", l, dims(grad, inputs[1]), l.dx.Shape()}, l}, grad, inputs[1]); err != nil {
			return nil, fmt.Errorf("%s: input gradient: %w", l.name, err)
		}
	}
	if l.dg != nil {
		if d[1], err = G.ApplyOp(&scaleDGOp{kop{l.name + ".dgate", l, dims(grad, inputs[0]), l.dg.Shape()}, l}, grad, inputs[0]); err != nil {
			return nil, fmt.Errorf("%s: gate gradient: %w", l.name, err)
		}
	}
	return d, nil
}

func (op *scaleDXOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.c*l.plane, l.n*l.c)
	if err != nil {
		return nil, err
	}
	dy, gate, dx := a[0], a[1], f32(l.dx)
	for k, s := range gate {
		lo := k * l.plane
		db := dx[lo : lo+l.plane]
		for i, v := range dy[lo : lo+l.plane] {
			db[i] = v * s
		}
	}
	return l.dx, nil
}

func (op *scaleDGOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.c*l.plane, l.n*l.c*l.plane)
	if err != nil {
		return nil, err
	}
	dy, x, dg := a[0], a[1], f32(l.dg)
	for k := range dg {
		lo := k * l.plane
		xb := x[lo : lo+l.plane]
		var s float64
		for i, v := range dy[lo : lo+l.plane] {
			// The explicit conversion rounds the product (exact in
			// float64 anyway), so that no architecture fuses it with
			// the sum.
			s += float64(float64(v) * float64(xb[i]))
		}
		dg[k] = float32(s)
	}
	return l.dg, nil
}
