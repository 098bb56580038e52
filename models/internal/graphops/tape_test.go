package graphops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/data"
)

// The Program (exec.go) replaced Gorgonia's TapeMachine, and it must give
// the TapeMachine's results bit for bit. The CNN layers are checked by
// running networks of them on both (package models checks its own
// networks' graphs the same way). The logistic regression's ops
// (op_bce.go, op_scores.go, op_sum.go) replaced stock Gorgonia ops that
// allocate on every run, so their graph is compared with the original
// graph of stock ops (stockLogReg) on a LispMachine.

// lispValues runs g once, forward only, on a Gorgonia LispMachine and
// returns a copy of the values of nodes. The stock graph is run there, not
// on a TapeMachine: the TapeMachine's register allocator may reuse the
// register of an intermediate node (gorgonia#576), and in one CI run it gave
// the sparse gradient as if σ(z) were 1. The LispMachine gives every node
// its own value and runs the same ops' Do in the same order.
func lispValues(t *testing.T, g *G.ExprGraph, nodes ...*G.Node) [][]float32 {
	t.Helper()
	vm := G.NewLispMachine(g, G.ExecuteFwdOnly())
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatalf("LispMachine: %v", err)
	}
	out := make([][]float32, len(nodes))
	for i, n := range nodes {
		v := n.Value()
		if d, ok := floatData(v); ok {
			out[i] = append([]float32(nil), d...)
		} else if d, ok := scalarData(v); ok {
			out[i] = []float32{d}
		} else {
			t.Fatalf("LispMachine: node %v holds %T", n, v)
		}
	}
	return out
}

// cnnSpec is a CNN of every kernel-backed layer: convolutions (k×k, each
// followed by BiasReLUMaxPool2x2), then dense layers (DenseReLU but the
// last) and the softmax cross-entropy.
type cnnSpec struct {
	name  string
	input []int    // [C,H,W]
	convs [][2]int // out channels, kernel size
	dense []int    // output units of each dense layer
}

// The paper's two CNNs: the MNIST one has 16 and 32 filters, the CIFAR
// one 6 and 16, so both weight-gradient recipes of Conv2D run.
var cnnSpecs = []cnnSpec{
	{"mnist-shaped", []int{1, 28, 28}, [][2]int{{16, 5}, {32, 5}}, []int{10}},
	{"cifar-shaped", []int{3, 32, 32}, [][2]int{{6, 5}, {16, 5}}, []int{120, 84, 10}},
}

// cnnGraph is a compiled instance of a cnnSpec for one batch size.
type cnnGraph struct {
	prog          *Program
	x, params     []float32
	labels        []uint8
	shapes        [][]int // of the parameter tensors, in the order of params
	logits, loss  int
	grads         []int
	input, output int // values per sample and classes
}

// build compiles s for a batch of n, on ws, with gradients if train.
func (s cnnSpec) build(ws *Workspace, n int, train bool) (*cnnGraph, error) {
	cg := &cnnGraph{}
	c, h, w := s.input[0], s.input[1], s.input[2]
	for _, cv := range s.convs {
		cg.shapes = append(cg.shapes, []int{cv[0], c, cv[1], cv[1]}, []int{cv[0]})
		c, h, w = cv[0], (h-cv[1]+1)/2, (w-cv[1]+1)/2
	}
	in := c * h * w
	for _, out := range s.dense {
		cg.shapes = append(cg.shapes, []int{in, out}, []int{out})
		in = out
	}
	cg.output = in
	size := 0
	for _, sh := range cg.shapes {
		size += tensor.Shape(sh).TotalSize()
	}
	cg.params = make([]float32, size)
	cg.input = s.input[0] * s.input[1] * s.input[2]
	cg.x = make([]float32, n*cg.input)
	err := Build(func() error {
		g := New(ws, train)
		var params []*G.Node
		off := 0
		for i, sh := range cg.shapes {
			k := tensor.Shape(sh).TotalSize()
			name := fmt.Sprintf("layer%d.%s", i/2, map[bool]string{true: "w", false: "b"}[i%2 == 0])
			params = append(params, g.Input(name, cg.params[off:off+k], sh...))
			off += k
		}
		h := g.Input("x", cg.x, append([]int{n}, s.input...)...)
		i := 0
		for range s.convs {
			h = g.BiasReLUMaxPool2x2(g.Conv2D(h, params[i]), params[i+1])
			i += 2
		}
		for range s.dense {
			if i+2 < len(params) {
				h = g.DenseReLU(h, params[i], params[i+1])
			} else {
				h = g.Dense(h, params[i], params[i+1])
			}
			i += 2
		}
		outs := []*G.Node{h}
		if train {
			cg.labels = make([]uint8, n)
			loss := g.SoftmaxCrossEntropy(h, cg.labels)
			outs = append(outs, loss)
			outs = append(outs, g.Gradients(loss, params...)...)
		}
		prog, slots, err := g.Compile(outs...)
		if err != nil {
			return err
		}
		cg.prog, cg.logits = prog, slots[0]
		if train {
			cg.loss, cg.grads = slots[1], slots[2:]
		}
		return nil
	})
	return cg, err
}

// fill draws the parameters (fan-in scaled), the samples and the labels.
func (cg *cnnGraph) fill(rng *rand.Rand) {
	off := 0
	for i, sh := range cg.shapes {
		k := tensor.Shape(sh).TotalSize()
		w := cg.shapes[i&^1] // the layer's weights: [OC,C,KH,KW] or [in,out]
		fanIn := w[0]
		if len(w) == 4 {
			fanIn = w[1] * w[2] * w[3]
		}
		copy(cg.params[off:], uniform(rng, k, 1/math.Sqrt(float64(fanIn))))
		off += k
	}
	copy(cg.x, uniform(rng, len(cg.x), 1))
	for i := range cg.labels {
		cg.labels[i] = uint8(rng.IntN(cg.output))
	}
}

// TestProgramMatchesTapeMachineCNN runs training and forward graphs of the
// CNN layers on a Program, then on a TapeMachine, and checks that loss,
// gradients and logits are the same to the bit; and that a rerun of the
// Program allocates nothing.
func TestProgramMatchesTapeMachineCNN(t *testing.T) {
	for _, s := range cnnSpecs {
		for _, n := range []int{1, 5, 16} {
			t.Run(fmt.Sprintf("%s/batch%d", s.name, n), func(t *testing.T) {
				ws := NewWorkspace() // shared by both graphs, as in a worker
				train, err := s.build(ws, n, true)
				if err != nil {
					t.Fatal(err)
				}
				eval, err := s.build(ws, n, false)
				if err != nil {
					t.Fatal(err)
				}
				for seed := range uint64(2) {
					rng := rand.New(rand.NewPCG(40+seed, uint64(n)))
					train.fill(rng)
					if err := train.prog.Run(); err != nil {
						t.Fatal(err)
					}
					loss, err := train.prog.Scalar(train.loss)
					if err != nil {
						t.Fatal(err)
					}
					var grads [][]float32
					for _, sl := range train.grads {
						g, err := train.prog.Float32s(sl)
						if err != nil {
							t.Fatal(err)
						}
						grads = append(grads, append([]float32(nil), g...))
					}
					want, err := train.prog.TapeValues(append([]int{train.loss}, train.grads...)...)
					if err != nil {
						t.Fatal(err)
					}
					if err := sameBits([]float32{loss}, want[0]); err != nil {
						t.Errorf("seed %d: loss: %v", seed, err)
					}
					for i, g := range grads {
						if err := sameBits(g, want[i+1]); err != nil {
							t.Errorf("seed %d: gradient %d %v: %v", seed, i, train.shapes[i], err)
						}
					}

					copy(eval.params, train.params)
					copy(eval.x, train.x)
					if err := eval.prog.Run(); err != nil {
						t.Fatal(err)
					}
					logits, err := eval.prog.Float32s(eval.logits)
					if err != nil {
						t.Fatal(err)
					}
					logits = append([]float32(nil), logits...)
					want, err = eval.prog.TapeValues(eval.logits)
					if err != nil {
						t.Fatal(err)
					}
					if err := sameBits(logits, want[0]); err != nil {
						t.Errorf("seed %d: logits: %v", seed, err)
					}
				}
				for name, prog := range map[string]*Program{"training": train.prog, "forward": eval.prog} {
					if a := testing.AllocsPerRun(5, func() {
						if err := prog.Run(); err != nil {
							t.Fatal(err)
						}
					}); a != 0 {
						t.Errorf("%s graph: %v allocations per run, want 0", name, a)
					}
				}
			})
		}
	}
}

// TestLogRegMatchesStockGraph checks the logistic regression's ops —
// MatVec or SparseMatVec, BinaryCrossEntropy, NonConvexReg and
// AddScalars, wired as package models wires them — against the original
// graph of stock Gorgonia ops run on a LispMachine, to the bit, on sparse
// batches, and dense batches against the sparse ops on the same samples
// (MatVec sums in SparseMatVec's order, not in gonum's Sgemv's), with
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
		for _, alpha := range []float64{0.1, 1} {
			for _, scale := range []float32{1, 30, 1000} {
				name := fmt.Sprintf("sparse=%v/batch%d/alpha%v/scale%v", c.d.IsSparse(), len(c.index), alpha, scale)
				t.Run(name, func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(len(c.index)), 0x6d6f64656c73))
					params := uniform(rng, p, 1/math.Sqrt(p))
					for i := range params {
						params[i] *= scale
					}
					b := data.Batch{Data: c.d, Index: c.index}
					loss, g, z := opsLogReg(t, params, b, alpha)
					var want [][]float32
					if c.d.IsSparse() {
						want = stockLogReg(t, params, b, alpha)
					} else {
						// Dense batches give the sparse ops' bits (checked
						// against the stock graph above): the same sums in
						// the same order, plus exact zeros.
						sl, sg, sz := opsLogReg(t, params, data.Batch{Data: sparse, Index: c.index}, alpha)
						want = [][]float32{{sl}, sg, sz}
					}
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

// batchInputs returns the batch's dense features (nil for sparse data) and
// its labels as float32.
func batchInputs(b data.Batch) (x, y []float32) {
	n, p := b.Len(), b.Data.Dim()
	if !b.Data.IsSparse() {
		x = make([]float32, n*p)
		for k, i := range b.Index {
			b.Data.Dense(i, x[k*p:(k+1)*p])
		}
	}
	y = make([]float32, n)
	for k, i := range b.Index {
		y[k] = float32(b.Data.Labels[i])
	}
	return x, y
}

// opsLogReg builds the logistic regression's training graph as package
// models does — the weights entering as two input nodes, one for the
// scores and one for the regulariser, whose gradient terms it adds — runs
// it on a Program and returns loss, gradient and scores.
func opsLogReg(t *testing.T, params []float32, b data.Batch, alpha float64) (loss float32, grad, z []float32) {
	t.Helper()
	n, p := b.Len(), len(params)
	w := append([]float32(nil), params...)
	x, y := batchInputs(b)
	err := Build(func() error {
		g := New(nil, true)
		wt := g.Input("w", w, p)
		var zn *G.Node
		if x == nil {
			zn = g.SparseMatVec(wt, &SparseRows{Data: b.Data, Index: b.Index}, n)
		} else {
			zn = g.MatVec(g.Input("x", x, n, p), wt)
		}
		reg := g.Input("w.reg", w, p)
		l := g.AddScalars(g.BinaryCrossEntropy(zn, g.Input("y", y, n)), g.NonConvexReg(reg, alpha))
		prog, slots, err := g.Compile(append([]*G.Node{zn, l}, g.Gradients(l, wt, reg)...)...)
		if err != nil {
			return err
		}
		if err := prog.Run(); err != nil {
			return err
		}
		if loss, err = prog.Scalar(slots[1]); err != nil {
			return err
		}
		var vals [3][]float32
		for i, s := range []int{slots[0], slots[2], slots[3]} {
			if vals[i], err = prog.Float32s(s); err != nil {
				return err
			}
		}
		z = append([]float32(nil), vals[0]...)
		grad = make([]float32, p)
		for i := range grad {
			grad[i] = vals[2][i] + vals[1][i]
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return loss, grad, z
}

// stockLogReg builds the logistic regression's original training graph —
// Gorgonia's Mul (dense) or the sparse scores op, Softplus, HadamardProd,
// Sub, Sum, Mul by 1/n, Add and the regulariser op, differentiated by
// G.Grad — runs it on a LispMachine and returns loss, gradient and scores.
func stockLogReg(t *testing.T, params []float32, b data.Batch, alpha float64) [][]float32 {
	t.Helper()
	n, p := b.Len(), len(params)
	x, y := batchInputs(b)
	var out [][]float32
	err := Build(func() error {
		bld := New(nil, true)
		par := bld.Input("w", append([]float32(nil), params...), p)
		var z *G.Node
		if x == nil {
			z = bld.SparseMatVec(par, &SparseRows{Data: b.Data, Index: b.Index}, n)
		} else {
			var err error
			z, err = G.Mul(bld.Input("x", x, n, p), par)
			z = bld.keep(z, err, "scores")
		}
		loss := stockAdd(bld, stockBCE(bld, z, bld.Input("y", y, n)), bld.NonConvexReg(par, alpha))
		grads := bld.Gradients(loss, par)
		if bld.err != nil {
			return bld.err
		}
		out = lispValues(t, bld.eg, loss, grads[0], z)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// stockBCE is the batch-mean binary cross-entropy of stock Gorgonia ops,
// softplus(z) − y z, as the logistic regression first computed it.
func stockBCE(b *Graph, z, y *G.Node) *G.Node {
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
func stockAdd(b *Graph, x, y *G.Node) *G.Node {
	if b.err != nil {
		return nil
	}
	s, err := G.Add(x, y)
	return b.keep(s, err, "add")
}
