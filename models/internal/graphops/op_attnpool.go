package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// attnPoolLayer is the sequence pooling of a Compact Convolutional
// Transformer (Hassani et al. 2021): tokens x [n,D,H,W] (T = H·W positions)
// and one score a position s [n,1,H,W] give y[i,d] = Σ_t a[i,t]·x[i,d,t],
// a[i,·] the softmax of s[i,·] over the positions. The softmax is
// attention's (softmaxRow), the sums float64 in order: the same bits on
// every kernel set and architecture.
type attnPoolLayer struct {
	name    string
	n, d, t int
	a       []float32 // the softmax of each sample's scores
	e       []float64 // softmaxRow's scratch
	y       tensor.Tensor
	dx, ds  tensor.Tensor // nil where not formed
}

// attnPoolOp is (x, s) → y.
type attnPoolOp struct {
	kop
	l *attnPoolLayer
}

// attnPoolDXOp is dy → dx, dx[i,d,t] = a[i,t]·dy[i,d].
type attnPoolDXOp struct {
	kop
	l *attnPoolLayer
}

// attnPoolDSOp is (dy, x) → ds, the gradient at the scores.
type attnPoolDSOp struct {
	kop
	l *attnPoolLayer
}

// AttentionPool adds y[i,d] = Σ_t softmax(s[i,·])[t]·x[i,d,t] for tokens x
// [n,D,H,W] and scores s [n,1,H,W] (a Linear D → 1 of the tokens): CCT's
// SeqPool, torch's softmax(s, dim=1).transpose(-1, -2) @ x of [n,T,·]; y
// is [n,D]. The layer takes name, unique within the graph, for its
// buffers and ops. The gradients of x and s are formed in a training
// graph where another op computes them.
func (g *Graph) AttentionPool(name string, x, s *G.Node) *G.Node {
	if !g.ok(name, x, s) {
		return nil
	}
	xs, ss := x.Shape(), s.Shape()
	if len(xs) != 4 || len(ss) != 4 || ss[0] != xs[0] || ss[1] != 1 || ss[2] != xs[2] || ss[3] != xs[3] {
		g.err = fmt.Errorf("%s: tokens %v and scores %v, want [n,D,H,W] and [n,1,H,W]", name, xs, ss)
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	t := xs[2] * xs[3]
	l := &attnPoolLayer{name: name, n: xs[0], d: xs[1], t: t, a: make([]float32, xs[0]*t), e: make([]float64, t),
		y: g.ws.tensor(name+".y", xs[0], xs[1])}
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(name+".dx", xs...)
	}
	if g.training && s.Op() != nil {
		l.ds = g.ws.tensor(name+".ds", ss...)
	}
	return g.apply(&attnPoolOp{kop{name + ".forward", l, dims(x, s), l.y.Shape()}, l}, name, x, s)
}

func (op *attnPoolOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	in, err := op.args(inputs, l.n*l.d*l.t, l.n*l.t)
	if err != nil {
		return nil, err
	}
	x, y := in[0], f32(l.y)
	copy(l.a, in[1])
	for i := range l.n {
		a := l.a[i*l.t : (i+1)*l.t]
		softmaxRow(a, 1, l.e)
		for d := range l.d {
			var sum float64
			for t, v := range x[(i*l.d+d)*l.t : (i*l.d+d+1)*l.t] {
				sum += float64(float64(a[t]) * float64(v))
			}
			y[i*l.d+d] = float32(sum)
		}
	}
	return l.y, nil
}

func (op *attnPoolOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil, op.l.ds != nil} }

func (op *attnPoolOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	d := make(G.Nodes, 2)
	var err error
	if l.dx != nil {
		if d[0], err = G.ApplyOp(&attnPoolDXOp{kop{l.name + ".dx", l, dims(grad), l.dx.Shape()}, l}, grad); err != nil {
			return nil, fmt.Errorf("%s: token gradient: %w", l.name, err)
		}
	}
	if l.ds != nil {
		if d[1], err = G.ApplyOp(&attnPoolDSOp{kop{l.name + ".ds", l, dims(grad, inputs[0]), l.ds.Shape()}, l}, grad, inputs[0]); err != nil {
			return nil, fmt.Errorf("%s: score gradient: %w", l.name, err)
		}
	}
	return d, nil
}

func (op *attnPoolDXOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	in, err := op.args(inputs, l.n*l.d)
	if err != nil {
		return nil, err
	}
	dy, dx := in[0], f32(l.dx)
	for i := range l.n {
		a := l.a[i*l.t : (i+1)*l.t]
		for d := range l.d {
			g := dy[i*l.d+d]
			row := dx[(i*l.d+d)*l.t : (i*l.d+d+1)*l.t]
			for t, v := range a {
				row[t] = v * g
			}
		}
	}
	return l.dx, nil
}

// Do forms g[t] = Σ_d dy[d]·x[d,t] (float64, in order of d) a sample, then
// the softmax's gradient at the scores.
func (op *attnPoolDSOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	in, err := op.args(inputs, l.n*l.d, l.n*l.d*l.t)
	if err != nil {
		return nil, err
	}
	dy, x, ds := in[0], in[1], f32(l.ds)
	for i := range l.n {
		g := ds[i*l.t : (i+1)*l.t]
		for t := range g {
			var sum float64
			for d := range l.d {
				sum += float64(float64(dy[i*l.d+d]) * float64(x[(i*l.d+d)*l.t+t]))
			}
			g[t] = float32(sum)
		}
		softmaxRowGrad(g, l.a[i*l.t:(i+1)*l.t], 1)
	}
	return l.ds, nil
}
