package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// denseScoresLayer is the logistic regression's scores z = X w of a dense
// batch X [n,p], in place of Gorgonia's Mul of a matrix by a vector. It
// sums each score, and each gradient element, in order of the features
// (the samples), unfused, as SparseMatVec does over the nonzeros: the same
// bits as the sparse path on the same data, on every architecture (gonum's
// Sgemv, which Mul calls, sums in another order on amd64, in assembly,
// than on arm64). It writes into buffers of the layer instead of allocating.
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
// weights w [p], the product Gorgonia's Mul computes, each score summed in
// order of the features as SparseMatVec sums it (not in the order of
// gonum's Sgemv, which Mul calls).
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
	x, w, z := a[0], a[1][:l.p], f32(l.z)
	for i := range l.n {
		var s float32
		for k, v := range x[i*l.p : (i+1)*l.p] {
			s += float32(v * w[k])
		}
		z[i] = s
	}
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
	x, dz, dw := a[0], a[1][:l.n], f32(l.dw)
	clear(dw)
	for i, g := range dz {
		for k, v := range x[i*l.p : (i+1)*l.p] {
			dw[k] += float32(g * v)
		}
	}
	return l.dw, nil
}
