package graphops

import (
	"fmt"
	"slices"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// concatLayer is y = [x_1, …, x_K] along axis 1: each sample's values of
// the inputs, one after the other. Forward and backward are copies, the
// same bits on every kernel set and architecture.
type concatLayer struct {
	name  string
	n     int             // batch
	sizes []int           // values per sample of each input
	offs  []int           // where each input's values start within a sample of y
	total int             // values per sample of y
	y     tensor.Tensor   // output
	dx    []tensor.Tensor // gradient of each input; nil where it is not formed
}

// concatOp is the forward pass: (x_1, …, x_K) → y.
type concatOp struct {
	kop
	l *concatLayer
}

// concatGradOp is dy → dx_k, input k's part of each sample of dy.
type concatGradOp struct {
	kop
	l *concatLayer
	k int
}

// Concat adds the concatenation of xs, two or more tensors [n,…] of one
// batch n, along axis 1 (torch.cat(xs, dim=1)): tensors [n,C_k,rest…] of
// equal rest (NCHW maps of equal H and W) give [n,ΣC_k,rest…]; tensors
// whose dimensions beyond axis 1 differ are read flat, each sample's
// values in row-major order, and give [n,Σ values per sample] (a
// flattened map joined to a vector). Either way a sample of the output is
// the inputs' samples one after the other. Parameter-free, the layer takes
// name, unique within the graph, for its buffers and ops. The gradient of
// each input is its part of the upstream gradient, formed only for inputs
// computed by another op.
func (g *Graph) Concat(name string, xs ...*G.Node) *G.Node {
	if !g.ok(name, xs...) {
		return nil
	}
	if len(xs) < 2 {
		g.err = fmt.Errorf("%s: %d inputs, want at least 2", name, len(xs))
		return nil
	}
	first := xs[0].Shape()
	same := true
	l := &concatLayer{name: name}
	for k, x := range xs {
		s := x.Shape()
		if len(s) < 2 || s[0] != first[0] {
			g.err = fmt.Errorf("%s: input %d of shape %v, want [%d,…] as input 0 (%v)", name, k, s, first[0], first)
			return nil
		}
		if len(s) != len(first) || !slices.Equal(s[2:], first[2:]) {
			same = false
		}
		l.offs = append(l.offs, l.total)
		l.sizes = append(l.sizes, s.TotalSize()/s[0])
		l.total += l.sizes[k]
	}
	l.n = first[0]
	out := []int{l.n, l.total}
	if same {
		out = slices.Clone([]int(first))
		out[1] = 0
		for _, x := range xs {
			out[1] += x.Shape()[1]
		}
	}
	if !g.claim(name) {
		return nil
	}
	l.y = g.ws.tensor(name+".y", out...)
	l.dx = make([]tensor.Tensor, len(xs))
	for k, x := range xs {
		if g.training && x.Op() != nil {
			l.dx[k] = g.ws.tensor(fmt.Sprintf("%s.dx%d", name, k), x.Shape()...)
		}
	}
	return g.apply(&concatOp{kop{name + ".forward", l, dims(xs...), l.y.Shape()}, l}, name, xs...)
}

func (op *concatOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	if len(inputs) != len(l.sizes) {
		return nil, fmt.Errorf("%s: %d inputs, want %d", op.name, len(inputs), len(l.sizes))
	}
	y := f32(l.y)
	for k, v := range inputs {
		x, ok := floatData(v)
		s := l.sizes[k]
		if !ok || len(x) != l.n*s {
			return nil, fmt.Errorf("%s: input %d is not %d float32 values", op.name, k, l.n*s)
		}
		for i := range l.n {
			copy(y[i*l.total+l.offs[k]:i*l.total+l.offs[k]+s], x[i*s:(i+1)*s])
		}
	}
	return l.y, nil
}

func (op *concatOp) DiffWRT(int) []bool {
	d := make([]bool, len(op.l.dx))
	for k, dx := range op.l.dx {
		d[k] = dx != nil
	}
	return d
}

func (op *concatOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if len(inputs) != len(l.dx) {
		return nil, fmt.Errorf("%s: %d inputs, want %d", l.name, len(inputs), len(l.dx))
	}
	dxs := make(G.Nodes, len(inputs))
	for k, dx := range l.dx {
		if dx == nil {
			continue
		}
		gop := &concatGradOp{kop{fmt.Sprintf("%s.dx%d", l.name, k), l, dims(grad), dx.Shape()}, l, k}
		var err error
		if dxs[k], err = G.ApplyOp(gop, grad); err != nil {
			return nil, fmt.Errorf("%s: gradient of input %d: %w", l.name, k, err)
		}
	}
	return dxs, nil
}

func (op *concatGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.total)
	if err != nil {
		return nil, err
	}
	s, off, dx := l.sizes[op.k], l.offs[op.k], f32(l.dx[op.k])
	for i := range l.n {
		copy(dx[i*s:(i+1)*s], a[0][i*l.total+off:i*l.total+off+s])
	}
	return l.dx[op.k], nil
}
