package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// groupNormLayer is group normalisation of x [n,C,H,W] with per-channel
// scales γ and shifts β [C] (kernels.GroupNorm), followed by ReLU where
// relu is set (kernels.GroupNormReLU). The forward pass keeps each image
// and group's mean and reciprocal standard deviation in float64 for the
// backward pass, which recomputes x̂ from x rather than keeping it.
type groupNormLayer struct {
	name          string
	shape         kernels.GroupNormShape
	relu          bool
	y             tensor.Tensor // output [n,C,H,W]
	stats         []float64     // mean and rstd per image and group
	scratch       []float32     // the gradient through the ReLU where there is no dx (relu only)
	dx            tensor.Tensor // input gradient [n,C,H,W]; nil for a first layer
	dgamma, dbeta tensor.Tensor // [C]
}

// groupNormOp is the forward pass: (x, γ, β) → y.
type groupNormOp struct {
	kop
	l *groupNormLayer
}

// groupNormGradOp is (x, γ, dy) → dγ, or (x, γ, dy, y) → dγ with the
// ReLU, whose gradient reads the output y. It also forms dβ and dx, which
// groupNormBetaGradOp and groupNormInputGradOp hand on.
type groupNormGradOp struct {
	kop
	l *groupNormLayer
}

// groupNormBetaGradOp returns the dβ that groupNormGradOp formed; its input
// is that op's output, so the tape runs it after.
type groupNormBetaGradOp struct {
	kop
	l *groupNormLayer
}

// groupNormInputGradOp returns the dx that groupNormGradOp formed, likewise.
type groupNormInputGradOp struct {
	kop
	l *groupNormLayer
}

// GroupNorm adds group normalisation of x [n,C,H,W] (torch.nn.GroupNorm(groups, C)):
// each image's channels fall into groups groups of C/groups consecutive
// channels, each group's C/groups·H·W values are normalised by their mean
// and biased variance with ε = 1e-5, then y = γ_c·x̂ + β_c with gamma and
// beta [C]. Means and variances are summed in float64 (kernels.GroupNorm).
// The layer is named after gamma ("gn1.g" → "gn1"), whose companion beta
// is "gn1.b". The gradient with respect to x is formed only when x is
// computed by another op.
func (g *Graph) GroupNorm(x, gamma, beta *G.Node, groups int) *G.Node {
	return g.groupNorm(x, gamma, beta, groups, false)
}

// GroupNormReLU adds GroupNorm followed by ReLU, max(GroupNorm(x), 0), in
// one layer: each image group is normalised and clipped, and its gradient
// masked by the ReLU, while it is in cache (kernels.GroupNormReLU), with
// the bits of GroupNorm and ReLU as separate layers. The tensor between
// them is not kept, so nothing else may read it.
func (g *Graph) GroupNormReLU(x, gamma, beta *G.Node, groups int) *G.Node {
	return g.groupNorm(x, gamma, beta, groups, true)
}

func (g *Graph) groupNorm(x, gamma, beta *G.Node, groups int, relu bool) *G.Node {
	if !g.ok("group norm", x, gamma, beta) {
		return nil
	}
	name := layerName(gamma, ".g")
	xs := x.Shape()
	if len(xs) != 4 || gamma.Shape().TotalSize() != xs[1] || beta.Shape().TotalSize() != xs[1] {
		g.err = fmt.Errorf("%s: input %v, scales %v and shifts %v do not match", name, xs, gamma.Shape(), beta.Shape())
		return nil
	}
	s := kernels.GroupNormShape{N: xs[0], C: xs[1], HW: xs[2] * xs[3], Groups: groups}
	if err := s.Validate(); err != nil {
		g.err = fmt.Errorf("%s: %w", name, err)
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	l := &groupNormLayer{name: name, shape: s, relu: relu,
		y:     g.ws.tensor(name+".y", xs...),
		stats: g.ws.Float64s(name+".stats", s.Stats()),
	}
	if g.training {
		l.dgamma = g.ws.tensor(name+".dg", gamma.Shape()...)
		l.dbeta = g.ws.tensor(name+".db", beta.Shape()...)
		switch {
		case x.Op() != nil:
			l.dx = g.ws.tensor(name+".dx", xs...)
		case relu: // the gradient through the ReLU needs room of its own
			l.scratch = g.ws.Floats(name+".scratch", kernels.GroupNormReLUScratch(s))
		}
	}
	op := &groupNormOp{kop{name + ".forward", l, dims(x, gamma, beta), l.y.Shape()}, l}
	return g.apply(op, name, x, gamma, beta)
}

func (op *groupNormOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.shape.In(), l.shape.C, l.shape.C)
	if err != nil {
		return nil, err
	}
	if l.relu {
		kernels.GroupNormReLU(f32(l.y), l.stats, a[0], a[1], a[2], l.shape)
	} else {
		kernels.GroupNorm(f32(l.y), l.stats, a[0], a[1], a[2], l.shape)
	}
	return l.y, nil
}

func (op *groupNormOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil, true, true} }

func (op *groupNormOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dgamma == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", l.name)
	}
	x, gamma := inputs[0], inputs[1]
	in := G.Nodes{x, gamma, grad}
	if l.relu {
		in = append(in, output)
	}
	dg, err := G.ApplyOp(&groupNormGradOp{kop{l.name + ".dg", l, dims(in...), l.dgamma.Shape()}, l}, in...)
	if err != nil {
		return nil, err
	}
	db, err := G.ApplyOp(&groupNormBetaGradOp{kop{l.name + ".db", l, dims(dg), l.dbeta.Shape()}, l}, dg)
	if err != nil {
		return nil, err
	}
	var dx *G.Node
	if l.dx != nil {
		if dx, err = G.ApplyOp(&groupNormInputGradOp{kop{l.name + ".dx", l, dims(dg), l.dx.Shape()}, l}, dg); err != nil {
			return nil, err
		}
	}
	return G.Nodes{dx, dg, db}, nil
}

func (op *groupNormGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	want := []int{l.shape.In(), l.shape.C, l.shape.In(), l.shape.In()}
	if !l.relu {
		want = want[:3]
	}
	a, err := op.args(inputs, want...)
	if err != nil {
		return nil, err
	}
	var dx []float32
	if l.dx != nil {
		dx = f32(l.dx)
	}
	if l.relu {
		kernels.GroupNormReLUBackward(dx, f32(l.dgamma), f32(l.dbeta), a[2], a[3], a[0], a[1], l.stats, l.shape, l.scratch)
	} else {
		kernels.GroupNormBackward(dx, f32(l.dgamma), f32(l.dbeta), a[2], a[0], a[1], l.stats, l.shape)
	}
	return l.dgamma, nil
}

func (op *groupNormBetaGradOp) Do(inputs ...G.Value) (G.Value, error) {
	if _, err := op.args(inputs, op.l.shape.C); err != nil {
		return nil, err
	}
	return op.l.dbeta, nil
}

func (op *groupNormInputGradOp) Do(inputs ...G.Value) (G.Value, error) {
	if _, err := op.args(inputs, op.l.shape.C); err != nil {
		return nil, err
	}
	return op.l.dx, nil
}
