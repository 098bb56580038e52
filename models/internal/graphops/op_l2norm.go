package graphops

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// l2NormLayer is y = x / max(‖x‖, ε) for the features of each sample:
// torch's F.normalize(x, dim=1) of vectors, a cosine classifier's
// features.
type l2NormLayer struct {
	name    string
	n, f    int // samples, features a sample
	eps     float64
	y, dx   tensor.Tensor // dx nil outside training graphs or for the graph's input
	norms   []float64     // max(‖x‖, ε) of each sample, written by the forward op
	clipped []bool        // whether ‖x‖ < ε, likewise
}

// l2NormOp is x → x / max(‖x‖, ε), the norm's sum of squares in float64
// in memory order: the same bits on every kernel set and architecture.
type l2NormOp struct {
	kop
	l *l2NormLayer
}

// l2NormDXOp is (dy, x) → dx: (dy − ŷ(ŷ·dy)) / ‖x‖ for ŷ = x/‖x‖ where
// ‖x‖ ≥ ε, and dy / ε where the norm was clipped (torch's clamp_min
// passes no gradient below its bound), in float64.
type l2NormDXOp struct {
	kop
	l *l2NormLayer
}

// L2Normalize adds x / max(‖x‖₂, ε) over the features of each sample of
// x [n,F], torch's F.normalize(x, dim=1, eps=ε). Parameter-free, the layer
// takes name, unique within the graph, for its buffers and ops; the input
// gradient is formed only where another op computes x.
func (g *Graph) L2Normalize(name string, x *G.Node, eps float64) *G.Node {
	if !g.ok(name, x) {
		return nil
	}
	xs := x.Shape()
	if len(xs) != 2 {
		g.err = fmt.Errorf("%s: input of shape %v, want vectors [n,F]", name, xs)
		return nil
	}
	if !(eps > 0) || math.IsInf(eps, 0) {
		g.err = fmt.Errorf("%s: ε %g, want a positive number", name, eps)
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	l := &l2NormLayer{name: name, n: xs[0], f: xs[1], eps: eps, y: g.ws.tensor(name+".y", xs...), norms: make([]float64, xs[0]), clipped: make([]bool, xs[0])}
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(name+".dx", xs...)
	}
	return g.apply(&l2NormOp{kop{name + ".forward", l, dims(x), l.y.Shape()}, l}, name, x)
}

func (op *l2NormOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.f)
	if err != nil {
		return nil, err
	}
	y := f32(l.y)
	for s := range l.n {
		x := a[0][s*l.f : (s+1)*l.f]
		var sq float64
		for _, v := range x {
			// The explicit conversion rounds the product, so that no
			// architecture fuses it with the sum.
			sq += float64(float64(v) * float64(v))
		}
		r := math.Sqrt(sq)
		m := max(r, l.eps)
		l.norms[s], l.clipped[s] = m, r < l.eps
		for i, v := range x {
			y[s*l.f+i] = float32(float64(v) / m)
		}
	}
	return l.y, nil
}

func (op *l2NormOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil} }

func (op *l2NormOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dx == nil {
		return G.Nodes{nil}, nil
	}
	dx, err := G.ApplyOp(&l2NormDXOp{kop{l.name + ".dx", l, dims(grad, inputs[0]), l.dx.Shape()}, l}, grad, inputs[0])
	if err != nil {
		return nil, fmt.Errorf("%s: input gradient: %w", l.name, err)
	}
	return G.Nodes{dx}, nil
}

func (op *l2NormDXOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.f, l.n*l.f)
	if err != nil {
		return nil, err
	}
	dx := f32(l.dx)
	for s := range l.n {
		dy, x, m := a[0][s*l.f:(s+1)*l.f], a[1][s*l.f:(s+1)*l.f], l.norms[s]
		var dot float64
		if !l.clipped[s] {
			for i, v := range x {
				dot += float64(float64(v) / m * float64(dy[i]))
			}
		}
		for i, v := range x {
			dx[s*l.f+i] = float32((float64(dy[i]) - float64(float64(v)/m*dot)) / m)
		}
	}
	return l.dx, nil
}
