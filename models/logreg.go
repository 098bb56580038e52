package models

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/internal/detmath"
	"github.com/gtstorm/gtstorm/models/internal/graphops"
)

// DefaultAlpha is the paper's weight of the non-convex regulariser.
const DefaultAlpha = 0.1

// NewLogReg returns the paper's non-convex logistic regression (§4.1) on
// samples with the given number of features: the batch mean of the binary
// cross-entropy of σ(xᵀζ) plus α Σ_k x_k²/(1+x_k²), where x is the parameter
// vector (no bias) and ζ a sample with label y ∈ {0, 1}. Sparse datasets are
// read row by row, never densified. NewWorker fails unless features ≥ 1
// and α is finite and ≥ 0.
func NewLogReg(features int, alpha float64) Model {
	m := &logReg{features: features, alpha: alpha}
	if features > 0 {
		m.add("w", features, features)
	}
	return m
}

type logReg struct {
	layout
	features int
	alpha    float64
}

func (m *logReg) Name() string { return "logreg" }

func (m *logReg) NewWorker() (Worker, error) {
	if m.features < 1 {
		return nil, fmt.Errorf("logreg: %d features, want at least 1", m.features)
	}
	if math.IsNaN(m.alpha) || math.IsInf(m.alpha, 0) || m.alpha < 0 {
		return nil, fmt.Errorf("logreg: alpha %v, want a finite value ≥ 0", m.alpha)
	}
	return &lrWorker{
		m:      m,
		params: make([]float32, m.size),
		rows:   &graphops.SparseRows{},
		graphs: map[lrKey]*lrGraph{},
	}, nil
}

// lrWorker owns compiled graphs of the logistic regression, one per batch
// size, storage (sparse or dense) and mode (with gradient or forward only).
type lrWorker struct {
	m      *logReg
	params []float32
	rows   *graphops.SparseRows // the batch every sparse graph of this worker reads
	graphs map[lrKey]*lrGraph
}

type lrKey struct {
	n             int
	sparse, train bool
}

type lrGraph struct {
	prog  *graphops.Program
	x     []float32 // dense features [n,p]; nil for sparse data
	y     []float32 // labels in {0,1}; nil when forward only
	z     int       // slot of the scores xᵀw [n]
	loss  int       // slot of the loss; unused when forward only
	grads [2]int    // slots of the gradient's terms from the scores and the regulariser; unused when forward only
}

func (w *lrWorker) graph(k lrKey) (*lrGraph, error) {
	if g, ok := w.graphs[k]; ok {
		return g, nil
	}
	var g *lrGraph
	err := graphops.Build(func() (err error) {
		g, err = w.build(k)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("logreg: build graph for batch %d: %w", k.n, err)
	}
	w.graphs[k] = g
	return g, nil
}

// build adds the network: the scores z = X w [n], then for training the
// loss BCE(σ(z), y) + α Σ_k w_k²/(1+w_k²) and its gradient. The parameter
// vector enters the training graph as two input nodes, both views of
// w.params: one the scores read, one the regulariser reads. Gorgonia then
// leaves the gradient as its two terms, which Grad adds (the same float32
// additions as the Add node Gorgonia would insert for a shared input, which
// would allocate a tensor on every run).
func (w *lrWorker) build(k lrKey) (*lrGraph, error) {
	p := w.m.features
	lg := &lrGraph{}
	g := graphops.New(nil, k.train)
	params, _ := paramNodes(g, &w.m.layout, w.params)
	wt := params[0] // w [p]
	var z *G.Node
	if k.sparse {
		z = g.SparseMatVec(wt, w.rows, k.n) // [n], from the batch's CSR rows
	} else {
		lg.x = make([]float32, k.n*p)
		z = g.MatVec(g.Input("x", lg.x, k.n, p), wt) // [n]
	}
	outs := []*G.Node{z}
	if k.train {
		lg.y = make([]float32, k.n)
		y := g.Input("y", lg.y, k.n)
		reg := g.Input("w.reg", w.params, p)
		loss := g.AddScalars(g.BinaryCrossEntropy(z, y), g.NonConvexReg(reg, w.m.alpha))
		outs = append(outs, loss)
		outs = append(outs, g.Gradients(loss, wt, reg)...)
	}
	prog, slots, err := g.Compile(outs...)
	if err != nil {
		return nil, err
	}
	lg.prog, lg.z = prog, slots[0]
	if k.train {
		lg.loss, lg.grads = slots[1], [2]int{slots[2], slots[3]}
	}
	return lg, nil
}

func (w *lrWorker) check(params []float32, b data.Batch) error {
	if err := checkVec("params", params, w.m.size); err != nil {
		return fmt.Errorf("logreg: %w", err)
	}
	if err := checkBatch(b, w.m.features, 2); err != nil {
		return fmt.Errorf("logreg: %w", err)
	}
	return nil
}

// load binds the parameters and the batch (and labels when g has them).
func (w *lrWorker) load(g *lrGraph, params []float32, b data.Batch) {
	copy(w.params, params)
	if g.x != nil {
		p := w.m.features
		for k := range b.Index {
			b.Dense(k, g.x[k*p:(k+1)*p])
		}
	} else {
		w.rows.Data, w.rows.Index = b.Data, b.Index
	}
	if g.y != nil {
		for k, i := range b.Index {
			g.y[k] = float32(b.Data.Labels[i])
		}
	}
}

// Grad writes the gradient of the batch-mean loss into grad.
func (w *lrWorker) Grad(params []float32, b data.Batch, grad []float32) (float32, error) {
	if err := w.check(params, b); err != nil {
		return 0, err
	}
	if err := checkVec("grad", grad, w.m.size); err != nil {
		return 0, fmt.Errorf("logreg: %w", err)
	}
	g, err := w.graph(lrKey{n: b.Len(), sparse: b.Data.IsSparse(), train: true})
	if err != nil {
		return 0, err
	}
	w.load(g, params, b)
	defer w.release()
	if err := g.prog.Run(); err != nil {
		return 0, fmt.Errorf("logreg: run on %v: %w", b, err)
	}
	loss, err := g.prog.Scalar(g.loss)
	if err != nil {
		return 0, fmt.Errorf("logreg: %w", err)
	}
	dz, err := g.prog.Float32s(g.grads[0])
	if err != nil {
		return 0, fmt.Errorf("logreg: %w", err)
	}
	dr, err := g.prog.Float32s(g.grads[1])
	if err != nil {
		return 0, fmt.Errorf("logreg: %w", err)
	}
	if len(dz) != len(grad) || len(dr) != len(grad) {
		return 0, fmt.Errorf("logreg: gradient terms have %d and %d values, want %d", len(dr), len(dz), len(grad))
	}
	for i := range grad {
		grad[i] = dr[i] + dz[i]
	}
	return loss, nil
}

// release drops the worker's reference to the caller's batch.
func (w *lrWorker) release() { w.rows.Data, w.rows.Index = nil, nil }

// Eval runs the forward graph for the scores and sums, in float64, each
// sample's cross-entropy plus the regulariser, so that lossSum/b.Len() is
// the loss Grad returns. A sample counts as correct when its score's sign
// matches its label.
func (w *lrWorker) Eval(params []float32, b data.Batch) (float64, int, error) {
	if err := w.check(params, b); err != nil {
		return 0, 0, err
	}
	g, err := w.graph(lrKey{n: b.Len(), sparse: b.Data.IsSparse()})
	if err != nil {
		return 0, 0, err
	}
	w.load(g, params, b)
	defer w.release()
	if err := g.prog.Run(); err != nil {
		return 0, 0, fmt.Errorf("logreg: run on %v: %w", b, err)
	}
	z, err := g.prog.Float32s(g.z)
	if err != nil {
		return 0, 0, fmt.Errorf("logreg: %w", err)
	}
	if len(z) != b.Len() {
		return 0, 0, fmt.Errorf("logreg: scores hold %d values, want %d", len(z), b.Len())
	}
	var reg float64
	for _, v := range params {
		v := float64(v)
		reg += v * v / (1 + float64(v*v))
	}
	reg = float64(reg * w.m.alpha)
	var lossSum float64
	correct := 0
	for k, i := range b.Index {
		zk, y := float64(z[k]), float64(b.Data.Labels[i])
		lossSum += math.Max(zk, 0) + detmath.Log1p(detmath.Exp(-math.Abs(zk))) - float64(y*zk) + reg
		if (zk > 0) == (y == 1) {
			correct++
		}
	}
	return lossSum, correct, nil
}
