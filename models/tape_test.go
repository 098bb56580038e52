package models

import (
	"fmt"
	"math"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/gtstorm/gtstorm/data"
)

// The program of exec.go replaced Gorgonia's TapeMachine, and it must give
// the TapeMachine's results bit for bit. For the CNNs the tests run the
// workers' own graphs on a TapeMachine as well. The logistic regression's
// graph changed with it (op_bce.go, op_scores.go and op_sum.go replaced
// stock Gorgonia ops that allocate on every run), so its worker is compared
// with the original graph of stock ops (stockLogReg) on a TapeMachine.

// tapeValues runs g once on a fresh TapeMachine and returns a copy of the
// values of nodes.
func tapeValues(t *testing.T, g *G.ExprGraph, nodes ...*G.Node) [][]float32 {
	t.Helper()
	vm := G.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatalf("TapeMachine: %v", err)
	}
	out := make([][]float32, len(nodes))
	for i, n := range nodes {
		v := n.Value()
		if d, ok := floatData(v); ok {
			out[i] = append([]float32(nil), d...)
		} else if d, ok := scalarData(v); ok {
			out[i] = []float32{d}
		} else {
			t.Fatalf("TapeMachine: node %v holds %T", n, v)
		}
	}
	return out
}

// sameBits reports the first difference between got and want, compared as
// bit patterns.
func sameBits(got, want []float32) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d values, want %d", len(got), len(want))
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return fmt.Errorf("value %d is %v, TapeMachine's %v", i, got[i], want[i])
		}
	}
	return nil
}

// TestProgramMatchesTapeMachineCNN runs the CNN workers' training and
// evaluation graphs on a TapeMachine after the workers ran them, and
// checks that loss, gradients and logits are the same to the bit.
func TestProgramMatchesTapeMachineCNN(t *testing.T) {
	mnist := imageSet(7, 20, 10, false, 1, 28, 28)
	cifar := imageSet(8, 20, 10, true, 3, 32, 32)
	for _, c := range []struct {
		m     Model
		d     *data.Dataset
		sizes []int
	}{
		{NewMNISTCNN(), mnist, []int{1, 5, 16}},
		{NewCIFARCNN(), cifar, []int{1, 3, 16}},
	} {
		for _, n := range c.sizes {
			t.Run(fmt.Sprintf("%s/batch%d", c.m.Name(), n), func(t *testing.T) {
				w := newWorker(t, c.m).(*classWorker)
				for seed := range uint64(2) {
					params := c.m.Init(40 + seed)
					b := batchOf(c.d, seq(c.d.Len())[int(seed):int(seed)+n]...)
					loss, g := grad(t, w, params, b)
					cg := w.train[n]
					p := cg.prog
					nodes := []*G.Node{p.nodes[cg.loss]}
					for _, s := range cg.grads {
						nodes = append(nodes, p.nodes[s])
					}
					want := tapeValues(t, p.g, nodes...)
					if err := sameBits([]float32{loss}, want[0]); err != nil {
						t.Errorf("seed %d: loss: %v", seed, err)
					}
					for i, q := range c.m.Params() {
						if err := sameBits(g[q.Offset:q.Offset+q.Size()], want[i+1]); err != nil {
							t.Errorf("seed %d: gradient of %s: %v", seed, q.Name, err)
						}
					}

					if _, _, err := w.Eval(params, b); err != nil {
						t.Fatal(err)
					}
					eg := w.eval[n]
					logits, err := eg.prog.float32s(eg.logits)
					if err != nil {
						t.Fatal(err)
					}
					logits = append([]float32(nil), logits...)
					want = tapeValues(t, eg.prog.g, eg.prog.nodes[eg.logits])
					if err := sameBits(logits, want[0]); err != nil {
						t.Errorf("seed %d: logits: %v", seed, err)
					}
				}
			})
		}
	}
}

// TestLogRegMatchesStockGraph checks the logistic regression's loss,
// gradient and scores against its original graph of stock Gorgonia ops
// run on a TapeMachine, to the bit, on sparse and dense batches, with
// weights large enough to reach the cut-offs of softplus and sigmoid.
func TestLogRegMatchesStockGraph(t *testing.T) {
	const p = 200
	sparse := sparseSet(9, 20, p, 0.05)
	dense := densify(sparse)
	for _, c := range []struct {
		d     *data.Dataset
		index []int
	}{
		{sparse, []int{4}},
		{sparse, []int{0, 3}},
		{sparse, []int{0, 3, 3, 8, 11}},
		{sparse, seq(16)},
		{dense, []int{7}},
		{dense, []int{2, 9, 10}},
		{dense, seq(20)},
	} {
		for _, alpha := range []float64{DefaultAlpha, 1} {
			for _, scale := range []float32{1, 30, 1000} {
				name := fmt.Sprintf("sparse=%v/batch%d/alpha%v/scale%v", c.d.IsSparse(), len(c.index), alpha, scale)
				t.Run(name, func(t *testing.T) {
					m := NewLogReg(p, alpha)
					params := m.Init(uint64(len(c.index)))
					for i := range params {
						params[i] *= scale
					}
					b := batchOf(c.d, c.index...)
					w := newWorker(t, m).(*lrWorker)
					loss, g := grad(t, w, params, b)
					if _, _, err := w.Eval(params, b); err != nil {
						t.Fatal(err)
					}
					fg := w.graphs[lrKey{n: b.Len(), sparse: c.d.IsSparse()}]
					z, err := fg.prog.float32s(fg.z)
					if err != nil {
						t.Fatal(err)
					}
					want := stockLogReg(t, m.(*logReg), params, b)
					if err := sameBits([]float32{loss}, want[0]); err != nil {
						t.Errorf("loss: %v", err)
					}
					if err := sameBits(g, want[1]); err != nil {
						t.Errorf("gradient: %v", err)
					}
					if err := sameBits(z, want[2]); err != nil {
						t.Errorf("scores: %v", err)
					}
				})
			}
		}
	}
}

// stockLogReg builds the logistic regression's original training graph —
// Gorgonia's Mul (dense) or the sparse scores op, Softplus, HadamardProd,
// Sub, Sum, Mul by 1/n, Add and the regulariser op, differentiated by
// G.Grad — runs it on a TapeMachine and returns loss, gradient and scores.
func stockLogReg(t *testing.T, m *logReg, params []float32, b data.Batch) [][]float32 {
	t.Helper()
	n, p := b.Len(), m.features
	var out [][]float32
	err := buildGraph(func() error {
		bld := newBuilder()
		bld.training = true
		par := bld.params(&m.layout, append([]float32(nil), params...))[0]
		var z *G.Node
		if b.Data.IsSparse() {
			z = bld.sparseScores(par, &sparseRows{d: b.Data, index: b.Index}, n)
		} else {
			x := make([]float32, n*p)
			for k, i := range b.Index {
				b.Data.Dense(i, x[k*p:(k+1)*p])
			}
			var err error
			z, err = G.Mul(bld.input("x", x, n, p), par)
			z = bld.keep(z, err, "scores")
		}
		y := make([]float32, n)
		for k, i := range b.Index {
			y[k] = float32(b.Data.Labels[i])
		}
		loss := stockAdd(bld, stockBCE(bld, z, bld.input("y", y, n)), bld.nonConvexReg(par, m.alpha))
		grads := bld.gradients(loss, []*G.Node{par})
		if bld.err != nil {
			return bld.err
		}
		out = tapeValues(t, bld.g, loss, grads[0], z)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// stockBCE is the batch-mean binary cross-entropy of stock Gorgonia ops,
// softplus(z) − y z, as the logistic regression first computed it.
func stockBCE(b *builder, z, y *G.Node) *G.Node {
	if b.err != nil {
		return nil
	}
	sp, err := G.Softplus(z)
	if b.keep(sp, err, "softplus") == nil {
		return nil
	}
	yz, err := G.HadamardProd(y, z)
	if b.keep(yz, err, "y·z") == nil {
		return nil
	}
	l, err := G.Sub(sp, yz)
	if b.keep(l, err, "bce") == nil {
		return nil
	}
	s, err := G.Sum(l)
	if b.keep(s, err, "sum bce") == nil {
		return nil
	}
	s, err = G.Mul(s, G.NewConstant(1/float32(z.Shape().TotalSize())))
	return b.keep(s, err, "mean bce")
}

// stockAdd is Gorgonia's x + y.
func stockAdd(b *builder, x, y *G.Node) *G.Node {
	if b.err != nil {
		return nil
	}
	s, err := G.Add(x, y)
	return b.keep(s, err, "add")
}
