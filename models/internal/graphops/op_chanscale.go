package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// scaleLayer is y[i,c,…] = x[i,c,…]·gate[i,c]: each channel of each
// sample scaled by that sample's gate, the excitation of a
// squeeze-and-excitation block; or, shared, y[i,c,…] = x[i,c,…]·gate[c],
// one gate a channel for every sample (ConvNeXt's layer scale). Forward
// and the input's gradient are one float32 product per value; the gate's
// gradient sums a channel's products in float64 in a fixed order (a shared
// gate's, sample by sample). Pure Go: the same bits on every kernel set
// and architecture.
type scaleLayer struct {
	name   string
	n, c   int // batch and channels
	plane  int // values per channel of a sample of x
	shared bool
	y      tensor.Tensor
	dx     tensor.Tensor // gradient of x; nil where it is not formed
	dg     tensor.Tensor // gradient of the gate; nil where it is not formed
	sums   []float64     // a shared gate's gradient sums
}

// gates returns the number of gate values: n·C, or C where shared.
func (l *scaleLayer) gates() int {
	if l.shared {
		return l.c
	}
	return l.n * l.c
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
	return g.scale(l, x, gate, gate.Op() != nil)
}

// ChannelMul adds y = x·scale for x [n,C,…] and a parameter scale [C]:
// channel c of every sample multiplied by scale[c] (ConvNeXt's layer
// scale, torch's gamma * x of x [N,H,W,C]); a scale of one value
// multiplies every value of x (ReZero's alpha). The layer takes name,
// unique within the graph, for its buffers and ops. The scale's gradient,
// the sum over channel c (over all of x) of dy·x in float64 in order, is
// formed in a training graph; the input's, dy·scale[c], only where x is
// computed by another op.
func (g *Graph) ChannelMul(name string, x, scale *G.Node) *G.Node {
	if !g.ok(name, x, scale) {
		return nil
	}
	xs, k := x.Shape(), scale.Shape().TotalSize()
	if len(xs) < 2 || k != xs[1] && k != 1 {
		g.err = fmt.Errorf("%s: input of shape %v and %d scales, want [n,C,…] and C (or 1)", name, xs, k)
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	l := &scaleLayer{name: name, n: xs[0], c: k, plane: xs.TotalSize() / xs[0] / k, shared: true, y: g.ws.tensor(name+".y", xs...)}
	l.sums = make([]float64, l.c)
	return g.scale(l, x, scale, true)
}

// scale completes the layer l of input x and gate, whose gradient it
// forms in a training graph where gradGate is set, and adds its forward
// op.
func (g *Graph) scale(l *scaleLayer, x, gate *G.Node, gradGate bool) *G.Node {
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(l.name+".dx", x.Shape()...)
	}
	if g.training && gradGate {
		l.dg = g.ws.tensor(l.name+".dgate", gate.Shape()...)
	}
	return g.apply(&scaleOp{kop{l.name + ".forward", l, dims(x, gate), l.y.Shape()}, l}, l.name, x, gate)
}

// apply writes out = in·gate for each channel of each sample.
func (l *scaleLayer) apply(out, in, gate []float32) {
	for k := range l.n * l.c {
		s, lo := gate[k%len(gate)], k*l.plane
		ob := out[lo : lo+l.plane]
		for i, v := range in[lo : lo+l.plane] {
			ob[i] = v * s
		}
	}
}

func (op *scaleOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.c*l.plane, l.gates())
	if err != nil {
		return nil, err
	}
	l.apply(f32(l.y), a[0], a[1])
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
	a, err := op.args(inputs, l.n*l.c*l.plane, l.gates())
	if err != nil {
		return nil, err
	}
	l.apply(f32(l.dx), a[0], a[1])
	return l.dx, nil
}

func (op *scaleDGOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.c*l.plane, l.n*l.c*l.plane)
	if err != nil {
		return nil, err
	}
	dy, x, dg := a[0], a[1], f32(l.dg)
	clear(l.sums)
	for k := range l.n * l.c {
		lo := k * l.plane
		xb := x[lo : lo+l.plane]
		var s float64
		if l.shared {
			s = l.sums[k%l.c]
		}
		for i, v := range dy[lo : lo+l.plane] {
			// The explicit conversion rounds the product (exact in
			// float64 anyway), so that no architecture fuses it with
			// the sum.
			s += float64(float64(v) * float64(xb[i]))
		}
		if l.shared {
			l.sums[k%l.c] = s
		} else {
			dg[k] = float32(s)
		}
	}
	for c, s := range l.sums {
		dg[c] = float32(s)
	}
	return l.dg, nil
}
