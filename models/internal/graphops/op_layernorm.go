package graphops

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// layerNormLayer is layer normalisation of each sample of x [n,…] over all
// its d values (torch.nn.LayerNorm of the sample's shape), scaled and
// shifted elementwise by γ and β of d values. The forward pass keeps each
// sample's mean and reciprocal standard deviation in float64 for the
// backward pass, which recomputes x̂ from x. Every sum is in float64 in a
// fixed order and every product that meets a sum is rounded explicitly:
// pure Go, the same bits on every kernel set and architecture.
type layerNormLayer struct {
	name          string
	n, d          int     // samples and values per sample
	eps           float64 // ε, added to the variance
	y             tensor.Tensor
	stats         []float64     // mean and rstd per sample
	dx            tensor.Tensor // input gradient; nil where it is not formed
	dgamma, dbeta tensor.Tensor
}

// layerNormOp is the forward pass: (x, γ, β) → y.
type layerNormOp struct {
	kop
	l *layerNormLayer
}

// layerNormGradOp is (x, γ, dy) → dγ; it also forms dβ and dx, which
// layerNormBetaGradOp and layerNormInputGradOp hand on.
type layerNormGradOp struct {
	kop
	l *layerNormLayer
}

// layerNormBetaGradOp returns the dβ that layerNormGradOp formed; its input
// is that op's output, so the tape runs it after.
type layerNormBetaGradOp struct {
	kop
	l *layerNormLayer
}

// layerNormInputGradOp returns the dx that layerNormGradOp formed, likewise.
type layerNormInputGradOp struct {
	kop
	l *layerNormLayer
}

// LayerNorm adds layer normalisation of x [n,…] (torch.nn.LayerNorm of
// the per-sample shape): each sample's values are normalised by their
// mean and biased variance with eps added, then y = γ·x̂ + β elementwise,
// for gamma and beta of one value per value of a sample. Means, variances
// and the gradients' sums are taken in float64 in a fixed order. The layer
// takes name, unique within the graph, for its buffers and ops. The
// gradient with respect to x is formed only when x is computed by
// another op.
func (g *Graph) LayerNorm(name string, x, gamma, beta *G.Node, eps float32) *G.Node {
	if !g.ok(name, x, gamma, beta) {
		return nil
	}
	xs := x.Shape()
	if len(xs) < 2 {
		g.err = fmt.Errorf("%s: input of shape %v, want [n,…]", name, xs)
		return nil
	}
	d := xs.TotalSize() / xs[0]
	if gamma.Shape().TotalSize() != d || beta.Shape().TotalSize() != d {
		g.err = fmt.Errorf("%s: input %v, scales %v and shifts %v do not match, want %d values each", name, xs, gamma.Shape(), beta.Shape(), d)
		return nil
	}
	if !(eps > 0) || math.IsInf(float64(eps), 0) {
		g.err = fmt.Errorf("%s: ε %g, want a finite number above 0", name, eps)
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	l := &layerNormLayer{name: name, n: xs[0], d: d, eps: float64(eps),
		y:     g.ws.tensor(name+".y", xs...),
		stats: g.ws.Float64s(name+".stats", 2*xs[0]),
	}
	if g.training {
		l.dgamma = g.ws.tensor(name+".dg", gamma.Shape()...)
		l.dbeta = g.ws.tensor(name+".db", beta.Shape()...)
		if x.Op() != nil {
			l.dx = g.ws.tensor(name+".dx", xs...)
		}
	}
	return g.apply(&layerNormOp{kop{name + ".forward", l, dims(x, gamma, beta), l.y.Shape()}, l}, name, x, gamma, beta)
}

func (op *layerNormOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.d, l.d, l.d)
	if err != nil {
		return nil, err
	}
	x, gamma, beta, y := a[0], a[1], a[2], f32(l.y)
	for k := range l.n {
		xs, ys := x[k*l.d:(k+1)*l.d], y[k*l.d:(k+1)*l.d]
		var s float64
		for _, v := range xs {
			s += float64(v)
		}
		mean := s / float64(l.d)
		var q float64
		for _, v := range xs {
			c := float64(v) - mean
			q += float64(c * c)
		}
		rstd := 1 / math.Sqrt(q/float64(l.d)+l.eps)
		l.stats[2*k], l.stats[2*k+1] = mean, rstd
		for i, v := range xs {
			xhat := float64((float64(v) - mean) * rstd)
			ys[i] = float32(float64(float64(gamma[i])*xhat) + float64(beta[i]))
		}
	}
	return l.y, nil
}

func (op *layerNormOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil, true, true} }

func (op *layerNormOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dgamma == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", l.name)
	}
	in := G.Nodes{inputs[0], inputs[1], grad}
	dg, err := G.ApplyOp(&layerNormGradOp{kop{l.name + ".dg", l, dims(in...), l.dgamma.Shape()}, l}, in...)
	if err != nil {
		return nil, err
	}
	db, err := G.ApplyOp(&layerNormBetaGradOp{kop{l.name + ".db", l, dims(dg), l.dbeta.Shape()}, l}, dg)
	if err != nil {
		return nil, err
	}
	var dx *G.Node
	if l.dx != nil {
		if dx, err = G.ApplyOp(&layerNormInputGradOp{kop{l.name + ".dx", l, dims(dg), l.dx.Shape()}, l}, dg); err != nil {
			return nil, err
		}
	}
	return G.Nodes{dx, dg, db}, nil
}

// Do forms dγ_i = Σ_k dy·x̂ and dβ_i = Σ_k dy over the samples k, in
// order, and dx = rstd·(g − mean(g) − x̂·mean(g·x̂)) per sample for
// g = dy·γ, its sums over the sample in order.
func (op *layerNormGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.d, l.d, l.n*l.d)
	if err != nil {
		return nil, err
	}
	x, gamma, dy := a[0], a[1], a[2]
	xhat := func(k, i int) float64 {
		return float64((float64(x[k*l.d+i]) - l.stats[2*k]) * l.stats[2*k+1])
	}
	dg, db := f32(l.dgamma), f32(l.dbeta)
	for i := range l.d {
		var sg, sb float64
		for k := range l.n {
			v := float64(dy[k*l.d+i])
			sg += float64(v * xhat(k, i))
			sb += v
		}
		dg[i], db[i] = float32(sg), float32(sb)
	}
	if l.dx == nil {
		return l.dgamma, nil
	}
	dx := f32(l.dx)
	for k := range l.n {
		var s, sx float64
		for i := range l.d {
			gi := float64(float64(dy[k*l.d+i]) * float64(gamma[i]))
			s += gi
			sx += float64(gi * xhat(k, i))
		}
		mean, meanx, rstd := s/float64(l.d), sx/float64(l.d), l.stats[2*k+1]
		for i := range l.d {
			gi := float64(float64(dy[k*l.d+i]) * float64(gamma[i]))
			c := float64(xhat(k, i) * meanx)
			dx[k*l.d+i] = float32(float64((gi - mean - c) * rstd))
		}
	}
	return l.dgamma, nil
}

func (op *layerNormBetaGradOp) Do(inputs ...G.Value) (G.Value, error) {
	if _, err := op.args(inputs, op.l.d); err != nil {
		return nil, err
	}
	return op.l.dbeta, nil
}

func (op *layerNormInputGradOp) Do(inputs ...G.Value) (G.Value, error) {
	if _, err := op.args(inputs, op.l.d); err != nil {
		return nil, err
	}
	return op.l.dx, nil
}
