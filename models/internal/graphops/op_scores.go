package graphops

import (
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// denseScoresLayer is the logistic regression's scores z = X w of a dense
// batch X [n,p]. Like Gorgonia's Mul of a matrix by a vector, which it
// replaces, it calls gonum's Sgemv (the BLAS Gorgonia's tensors use unless
// told otherwise) with the same arguments, and so has the same results bit
// for bit; but it writes into buffers of the layer instead of allocating.
type denseScoresLayer struct {
	n, p int
	z    tensor.Tensor // output [n]
	dw   tensor.Tensor // gradient with respect to w [p]; nil when forward only
}

// denseScoresOp is (X, w) → X w.
type denseScoresOp struct {
	kop
	l *denseScoresLayer
}

// denseScoresGradOp is (X, dz) → Xᵀ dz.
type denseScoresGradOp struct {
	kop
	l *denseScoresLayer
}

// MatVec adds the scores z = X w [n] of a dense batch X [n,p] by the
// weights w [p], as Gorgonia's Mul computes them (gonum's Sgemv).
func (g *Graph) MatVec(x, w *G.Node) *G.Node {
	if !g.ok("scores", x, w) {
		return nil
	}
	xs, ws := x.Shape(), w.Shape()
	if len(xs) != 2 || ws.TotalSize() != xs[1] {
		g.err = fmt.Errorf("scores: samples %v and weights %v do not match", xs, ws)
		return nil
	}
	l := &denseScoresLayer{n: xs[0], p: xs[1], z: newVec(xs[0])}
	if g.training {
		l.dw = newVec(xs[1])
	}
	return g.apply(&denseScoresOp{kop{"scores.forward", l, dims(x, w), l.z.Shape()}, l}, "scores", x, w)
}

func (op *denseScoresOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.p, l.p)
	if err != nil {
		return nil, err
	}
	gonum.Implementation{}.Sgemv(blas.NoTrans, l.n, l.p, 1, a[0], l.p, a[1], 1, 0, f32(l.z), 1)
	return l.z, nil
}

func (op *denseScoresOp) DiffWRT(int) []bool { return []bool{false, true} }

func (op *denseScoresOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dw == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", op.name)
	}
	x := inputs[0]
	dw, err := G.ApplyOp(&denseScoresGradOp{kop{"scores.dw", l, dims(x, grad), l.dw.Shape()}, l}, x, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{nil, dw}, nil
}

func (op *denseScoresGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.p, l.n)
	if err != nil {
		return nil, err
	}
	gonum.Implementation{}.Sgemv(blas.Trans, l.n, l.p, 1, a[0], l.p, a[1], 1, 0, f32(l.dw), 1)
	return l.dw, nil
}
