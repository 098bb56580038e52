package graphops

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// channelNormLayer is layer normalisation across the channels at each
// position of x [n,C,H,W] (kernels.ChannelNorm), scaled and shifted per
// channel by γ and β [C]. The forward pass keeps each position's mean and
// reciprocal standard deviation in float64 for the backward pass, which
// recomputes x̂ from x.
type channelNormLayer struct {
	name          string
	shape         kernels.ChannelNormShape
	eps           float64
	y             tensor.Tensor
	stats         []float64     // means, then rstds, per image and position
	scratch       []float64     // the backward pass's sums
	dx            tensor.Tensor // input gradient; nil where it is not formed
	dgamma, dbeta tensor.Tensor
}

// channelNormOp is the forward pass: (x, γ, β) → y.
type channelNormOp struct {
	kop
	l *channelNormLayer
}

// channelNormGradOp is (x, γ, dy) → dγ; it also forms dβ and dx, which
// channelNormBetaGradOp and channelNormInputGradOp hand on.
type channelNormGradOp struct {
	kop
	l *channelNormLayer
}

// channelNormBetaGradOp returns the dβ that channelNormGradOp formed; its
// input is that op's output, so the tape runs it after.
type channelNormBetaGradOp struct {
	kop
	l *channelNormLayer
}

// channelNormInputGradOp returns the dx that channelNormGradOp formed,
// likewise.
type channelNormInputGradOp struct {
	kop
	l *channelNormLayer
}

// ChannelNorm adds layer normalisation across the channels at each
// position of x [n,C,H,W] (ConvNeXt's channels_first LayerNorm, torch's
// nn.LayerNorm(C) of x.permute(0, 2, 3, 1)): each position's C values are
// normalised by their mean and biased variance with eps added, then
// y = γ_c·x̂ + β_c for gamma and beta [C] (kernels.ChannelNorm: float64
// sums in a fixed order, the same bits on every kernel set). The layer
// takes name, unique within the graph, for its buffers and ops. The
// gradient with respect to x is formed only when x is computed by another
// op.
func (g *Graph) ChannelNorm(name string, x, gamma, beta *G.Node, eps float32) *G.Node {
	if !g.ok(name, x, gamma, beta) {
		return nil
	}
	xs := x.Shape()
	if len(xs) != 4 || gamma.Shape().TotalSize() != xs[1] || beta.Shape().TotalSize() != xs[1] {
		g.err = fmt.Errorf("%s: input %v, scales %v and shifts %v do not match, want [n,C,H,W] and [C] each", name, xs, gamma.Shape(), beta.Shape())
		return nil
	}
	if !(eps > 0) || math.IsInf(float64(eps), 0) {
		g.err = fmt.Errorf("%s: ε %g, want a finite number above 0", name, eps)
		return nil
	}
	s := kernels.ChannelNormShape{N: xs[0], C: xs[1], HW: xs[2] * xs[3]}
	if err := s.Validate(); err != nil {
		g.err = fmt.Errorf("%s: %w", name, err)
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	l := &channelNormLayer{name: name, shape: s, eps: float64(eps),
		y:     g.ws.tensor(name+".y", xs...),
		stats: g.ws.Float64s(name+".stats", s.Stats()),
	}
	if g.training {
		l.dgamma = g.ws.tensor(name+".dg", gamma.Shape()...)
		l.dbeta = g.ws.tensor(name+".db", beta.Shape()...)
		l.scratch = g.ws.Float64s(name+".scratch", s.Scratch())
		if x.Op() != nil {
			l.dx = g.ws.tensor(name+".dx", xs...)
		}
	}
	return g.apply(&channelNormOp{kop{name + ".forward", l, dims(x, gamma, beta), l.y.Shape()}, l}, name, x, gamma, beta)
}

func (op *channelNormOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.shape.In(), l.shape.C, l.shape.C)
	if err != nil {
		return nil, err
	}
	kernels.ChannelNorm(f32(l.y), l.stats, a[0], a[1], a[2], l.eps, l.shape)
	return l.y, nil
}

func (op *channelNormOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil, true, true} }

func (op *channelNormOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dgamma == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", l.name)
	}
	in := G.Nodes{inputs[0], inputs[1], grad}
	dg, err := G.ApplyOp(&channelNormGradOp{kop{l.name + ".dg", l, dims(in...), l.dgamma.Shape()}, l}, in...)
	if err != nil {
		return nil, err
	}
	db, err := G.ApplyOp(&channelNormBetaGradOp{kop{l.name + ".db", l, dims(dg), l.dbeta.Shape()}, l}, dg)
	if err != nil {
		return nil, err
	}
	var dx *G.Node
	if l.dx != nil {
		if dx, err = G.ApplyOp(&channelNormInputGradOp{kop{l.name + ".dx", l, dims(dg), l.dx.Shape()}, l}, dg); err != nil {
			return nil, err
		}
	}
	return G.Nodes{dx, dg, db}, nil
}

func (op *channelNormGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.shape.In(), l.shape.C, l.shape.In())
	if err != nil {
		return nil, err
	}
	var dx []float32
	if l.dx != nil {
		dx = f32(l.dx)
	}
	kernels.ChannelNormBackward(dx, f32(l.dgamma), f32(l.dbeta), a[2], a[0], a[1], l.stats, l.scratch, l.shape)
	return l.dgamma, nil
}

func (op *channelNormBetaGradOp) Do(inputs ...G.Value) (G.Value, error) {
	if _, err := op.args(inputs, op.l.shape.C); err != nil {
		return nil, err
	}
	return op.l.dbeta, nil
}

func (op *channelNormInputGradOp) Do(inputs ...G.Value) (G.Value, error) {
	if _, err := op.args(inputs, op.l.shape.C); err != nil {
		return nil, err
	}
	return op.l.dx, nil
}
