package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// tokenLinearLayer is MLP-Mixer's token-mixing Linear: a dense layer over
// the n·C rows of P position values of x [n,C,H,W] (P = H·W), y = x·w + b
// for w [P,K] and b [K]: y [n,C,K,1]. The products are kernels.Sgemm's,
// the bias gradient kernels.BiasGradRows': the same bits on every kernel
// set and architecture.
type tokenLinearLayer struct {
	name       string
	rows, p, k int
	bias       bool
	y          tensor.Tensor
	dx, dw, db tensor.Tensor // gradients; nil where they are not formed
}

// tokenLinearOp is the forward pass: (x, w[, b]) → y.
type tokenLinearOp struct {
	kop
	l *tokenLinearLayer
}

// tokenLinearDXOp is (dy, w) → dy·wᵀ.
type tokenLinearDXOp struct {
	kop
	l *tokenLinearLayer
}

// tokenLinearDWOp is (x, dy) → xᵀ·dy.
type tokenLinearDWOp struct {
	kop
	l *tokenLinearLayer
}

// tokenLinearDBOp is dy → the column sums of dy.
type tokenLinearDBOp struct {
	kop
	l *tokenLinearLayer
}

// TokenLinear adds MLP-Mixer's token-mixing Linear for x [n,C,H,W], a
// token sequence of P = H·W positions held channel-major, w [P,K] (in,
// out, as Dense's) and b [K] or nil (no bias): y [n,C,K,1] with
// y[i,c,k] = Σ_p x[i,c,p]·w[p,k] + b[k], torch's nn.Linear(P, K) on
// x.transpose(1, 2). The layer takes name, unique within the graph, for its
// buffers and ops. The gradients of w and b, summed over the n·C rows, are
// formed in a training graph; that of x where x is computed by another
// op.
func (g *Graph) TokenLinear(name string, x, w, b *G.Node) *G.Node {
	in := []*G.Node{x, w}
	if b != nil {
		in = append(in, b)
	}
	if !g.ok(name, in...) {
		return nil
	}
	xs, wsh := x.Shape(), w.Shape()
	if len(xs) != 4 || len(wsh) != 2 || wsh[0] != xs[2]*xs[3] || (b != nil && b.Shape().TotalSize() != wsh[1]) {
		bs := tensor.Shape{}
		if b != nil {
			bs = b.Shape()
		}
		g.err = fmt.Errorf("%s: input %v, weights %v and bias %v do not make a token-mixing layer, want [n,C,H,W], [H·W,K] and [K]", name, xs, wsh, bs)
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	n, c, k := xs[0], xs[1], wsh[1]
	l := &tokenLinearLayer{name: name, rows: n * c, p: wsh[0], k: k, bias: b != nil, y: g.ws.tensor(name+".y", n, c, k, 1)}
	if g.training {
		if x.Op() != nil {
			l.dx = g.ws.tensor(name+".dx", xs...)
		}
		l.dw = g.ws.tensor(name+".dw", wsh...)
		if b != nil {
			l.db = g.ws.tensor(name+".db", b.Shape()...)
		}
	}
	return g.apply(&tokenLinearOp{kop{name + ".forward", l, dims(in...), l.y.Shape()}, l}, name, in...)
}

func (op *tokenLinearOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	var a [maxArity][]float32
	var err error
	if l.bias {
		a, err = op.args(inputs, l.rows*l.p, l.p*l.k, l.k)
	} else {
		a, err = op.args(inputs, l.rows*l.p, l.p*l.k)
	}
	if err != nil {
		return nil, err
	}
	y := f32(l.y)
	kernels.Sgemm(false, false, l.rows, l.k, l.p, 1, a[0], l.p, a[1], l.k, 0, y, l.k)
	if l.bias {
		kernels.AddBiasRows(y, a[2], l.rows, false)
	}
	return l.y, nil
}

func (op *tokenLinearOp) DiffWRT(n int) []bool {
	l := op.l
	return []bool{l.dx != nil, l.dw != nil, l.db != nil}[:n]
}

func (op *tokenLinearOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	d := make(G.Nodes, len(inputs))
	var err error
	if l.dx != nil {
		if d[0], err = G.ApplyOp(&tokenLinearDXOp{kop{l.name + ".dx", l, dims(grad, inputs[1]), l.dx.Shape()}, l}, grad, inputs[1]); err != nil {
			return nil, fmt.Errorf("%s: input gradient: %w", l.name, err)
		}
	}
	if l.dw != nil {
		if d[1], err = G.ApplyOp(&tokenLinearDWOp{kop{l.name + ".dw", l, dims(inputs[0], grad), l.dw.Shape()}, l}, inputs[0], grad); err != nil {
			return nil, fmt.Errorf("%s: weight gradient: %w", l.name, err)
		}
	}
	if l.db != nil && len(inputs) == 3 {
		if d[2], err = G.ApplyOp(&tokenLinearDBOp{kop{l.name + ".db", l, dims(grad), l.db.Shape()}, l}, grad); err != nil {
			return nil, fmt.Errorf("%s: bias gradient: %w", l.name, err)
		}
	}
	return d, nil
}

func (op *tokenLinearDXOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.rows*l.k, l.p*l.k)
	if err != nil {
		return nil, err
	}
	kernels.Sgemm(false, true, l.rows, l.p, l.k, 1, a[0], l.k, a[1], l.k, 0, f32(l.dx), l.p)
	return l.dx, nil
}

func (op *tokenLinearDWOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.rows*l.p, l.rows*l.k)
	if err != nil {
		return nil, err
	}
	kernels.Sgemm(true, false, l.p, l.k, l.rows, 1, a[0], l.p, a[1], l.k, 0, f32(l.dw), l.k)
	return l.dw, nil
}

func (op *tokenLinearDBOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.rows*l.k)
	if err != nil {
		return nil, err
	}
	db := f32(l.db)
	clear(db)
	kernels.BiasGradRows(db, a[0], l.rows)
	return l.db, nil
}
