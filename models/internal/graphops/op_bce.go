package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// bceLayer is the batch mean of the binary cross-entropy
// −[y log σ(z) + (1−y) log(1−σ(z))] of scores z [n] against labels y [n] in
// {0, 1}, computed stably as softplus(z) − y z.
//
// It replaces the chain of stock Gorgonia ops the logistic regression was
// first built from — Softplus, HadamardProd, Sub, Sum, Mul by the constant
// 1/n, and the Sigmoid, Neg, Repeat and products of their gradients — and
// does the same float32 operations in the same order, with Gorgonia's own
// softplus and sigmoid formulas, so the loss and gradient are those of the
// chain bit for bit (tape_test.go checks it). The chain allocated about
// two hundred objects per run; these ops write into buffers of the layer.
type bceLayer struct {
	n    int
	inv  float32       // 1/n, the chain's constant
	loss *G.F32        // output, reused across runs
	dz   tensor.Tensor // gradient with respect to z [n]; nil when forward only
}

// bceOp is the forward pass: (z, y) → loss.
type bceOp struct {
	kop
	l *bceLayer
}

// bceGradOp is (z, y, dloss) → dz = dloss/n · (σ(z) − y), formed as the
// chain formed it: y·(−dloss/n) + σ(z)·(dloss/n).
type bceGradOp struct {
	kop
	l *bceLayer
}

// BinaryCrossEntropy adds the batch mean of the binary cross-entropy of
// σ(z) for the scores z [n] against the labels y [n] in {0, 1}, a scalar.
func (g *Graph) BinaryCrossEntropy(z, y *G.Node) *G.Node {
	if !g.ok("cross-entropy", z, y) {
		return nil
	}
	n := z.Shape().TotalSize()
	if y.Shape().TotalSize() != n {
		g.err = fmt.Errorf("cross-entropy: %d scores for %d labels", n, y.Shape().TotalSize())
		return nil
	}
	l := &bceLayer{n: n, inv: 1 / float32(n), loss: G.NewF32(0)}
	if g.training {
		l.dz = newVec(n)
	}
	return g.apply(&bceOp{kop{"bce.forward", l, dims(z, y), nil}, l}, "cross-entropy", z, y)
}

func (op *bceOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n, l.n)
	if err != nil {
		return nil, err
	}
	z, y := a[0], a[1]
	var s float32
	for k := range z {
		s += softplus32(z[k]) - float32(y[k]*z[k])
	}
	*l.loss = G.F32(float32(s * l.inv))
	return l.loss, nil
}

func (op *bceOp) DiffWRT(int) []bool { return []bool{true, false} }

func (op *bceOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dz == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", op.name)
	}
	z, y := inputs[0], inputs[1]
	d, err := G.ApplyOp(&bceGradOp{kop{"bce.dz", l, dims(z, y, grad), l.dz.Shape()}, l}, z, y, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d, nil}, nil
}

func (op *bceGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	if len(inputs) != 3 {
		return nil, fmt.Errorf("%s: %d inputs, want 3", op.name, len(inputs))
	}
	a, err := op.args(inputs[:2], l.n, l.n)
	if err != nil {
		return nil, err
	}
	g, ok := scalarData(inputs[2])
	if !ok {
		return nil, fmt.Errorf("%s: upstream gradient holds %T, want float32", op.name, inputs[2])
	}
	z, y, dz := a[0], a[1], f32(l.dz)
	ds := float32(l.inv * g)
	for k := range z {
		dz[k] = float32(y[k]*-ds) + float32(sigmoid32(z[k])*ds)
	}
	return l.dz, nil
}

// softplus32 is Gorgonia's float32 softplus, log(1 + eˣ).
func softplus32(x float32) float32 {
	if x < -103 {
		return 0
	}
	if x > 14 {
		return x
	}
	return float32(detmath.Log1p(detmath.Exp(float64(x))))
}

// sigmoid32 is Gorgonia's float32 sigmoid, 1/(1 + e⁻ˣ) (its build without
// the fastmath tag).
func sigmoid32(x float32) float32 {
	if x < -88 {
		return 0
	}
	if x > 15 {
		return 1
	}
	return float32(1.0 / (1.0 + detmath.Exp(float64(-x))))
}
