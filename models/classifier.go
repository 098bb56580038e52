package models

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/internal/detmath"
	"github.com/gtstorm/gtstorm/models/internal/graphops"
)

// classifier is a network mapping dense samples to class logits, trained
// with softmax cross-entropy. The CNNs are classifiers that differ only in
// their layers.
type classifier struct {
	layout
	name    string
	shape   []int // shape of one sample, e.g. [1 28 28]
	classes int
	net     *Net // the description the layout, forward pass and export come from
	// fileParams are the initialisers of an imported ONNX file, in layout
	// order (FileParams); nil for the other networks.
	fileParams []float32
	// constants names the initialisers of an imported file that multiply
	// or are added to the data and stay constants (see ConstantInitialisers).
	constants []string
}

func (m *classifier) Name() string { return m.name }

// dim returns the number of features of one sample.
func (m *classifier) dim() int { return product(m.shape) }

// NewWorker returns a worker with no graphs yet; they are built on first
// use of each batch size.
func (m *classifier) NewWorker() (Worker, error) {
	return &classWorker{
		m:      m,
		params: make([]float32, m.size),
		ws:     graphops.NewWorkspace(),
		train:  map[int]*classGraph{},
		eval:   map[int]*classGraph{},
	}, nil
}

// evalBatch is the most samples Eval runs through one forward graph: larger
// batches are evaluated in pieces, so an evaluation chunk costs no more
// memory than a training batch.
const evalBatch = 64

// classWorker owns compiled graphs of a classifier, one per batch size and
// mode (training with gradient, or forward only). All graphs read the
// parameters from the one params buffer and share the buffers of ws.
type classWorker struct {
	m           *classifier
	params      []float32
	ws          *graphops.Workspace
	train, eval map[int]*classGraph
}

// classGraph is one compiled instance for a fixed batch size.
type classGraph struct {
	prog   *graphops.Program
	x      []float32  // input samples, bound by view
	labels []uint8    // read by the cross-entropy; nil when forward only
	logits int        // slot of the logits in prog
	loss   int        // slot of the loss; unused when forward only
	grads  []int      // slots of the gradients in layout order; nil when forward only
	masks  []dropMask // the Dropout layers' masks, filled by load; nil when forward only
}

// graph returns the compiled graph for batch size n, building it on first use.
func (w *classWorker) graph(n int, withGrad bool) (*classGraph, error) {
	cache := w.eval
	if withGrad {
		cache = w.train
	}
	if g, ok := cache[n]; ok {
		return g, nil
	}
	var g *classGraph
	err := graphops.Build(func() (err error) {
		g, err = w.build(n, withGrad)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: build graph for batch %d: %w", w.m.name, n, err)
	}
	cache[n] = g
	return g, nil
}

// build compiles the network for batches of n: the parameters and the
// samples as input nodes viewing the worker's buffers, the network's
// logits, and with withGrad the cross-entropy and its gradients.
func (w *classWorker) build(n int, withGrad bool) (*classGraph, error) {
	m := w.m
	g := graphops.New(w.ws, withGrad)
	cg := &classGraph{x: w.ws.Floats("x", n*m.dim())}
	params, byName := paramNodes(g, &m.layout, w.params)
	x := g.Input("x", cg.x, append([]int{n}, m.shape...)...)
	logits, masks := m.net.forward(g, x, byName)
	cg.masks = masks
	outs := []*G.Node{logits}
	if withGrad {
		cg.labels = w.ws.Bytes("labels", n)
		loss := g.SoftmaxCrossEntropy(logits, cg.labels)
		outs = append(outs, loss)
		outs = append(outs, g.Gradients(loss, params...)...)
	}
	prog, slots, err := g.Compile(outs...)
	if err != nil {
		return nil, err
	}
	cg.prog, cg.logits = prog, slots[0]
	if withGrad {
		cg.loss, cg.grads = slots[1], slots[2:]
	}
	return cg, nil
}

// load copies the parameters and the batch's samples (and labels when g
// has them) into the graph's bound buffers.
func (w *classWorker) load(g *classGraph, params []float32, b data.Batch) {
	copy(w.params, params)
	dim := w.m.dim()
	for k := range b.Index {
		b.Dense(k, g.x[k*dim:(k+1)*dim]) // augmented when b is a training batch that asks for it
	}
	if g.labels != nil {
		for k, i := range b.Index {
			g.labels[k] = b.Data.Labels[i]
		}
	}
	for _, mask := range g.masks {
		mask.fill(b.Draw)
	}
}

func (w *classWorker) check(params []float32, b data.Batch) error {
	if err := checkVec("params", params, w.m.size); err != nil {
		return fmt.Errorf("%s: %w", w.m.name, err)
	}
	if err := checkBatch(b, w.m.dim(), w.m.classes); err != nil {
		return fmt.Errorf("%s: %w", w.m.name, err)
	}
	return nil
}

// Grad writes the gradient of the batch-mean cross-entropy into grad.
func (w *classWorker) Grad(params []float32, b data.Batch, grad []float32) (float32, error) {
	g, err := w.trainGraph(b, params, grad)
	if err != nil {
		return 0, err
	}
	w.load(g, params, b)
	return w.runGrad(g, b, grad)
}

// trainGraph checks the arguments of a gradient evaluation on b and returns
// the training graph for b's size.
func (w *classWorker) trainGraph(b data.Batch, params, grad []float32) (*classGraph, error) {
	if err := w.check(params, b); err != nil {
		return nil, err
	}
	if err := checkVec("grad", grad, w.m.size); err != nil {
		return nil, fmt.Errorf("%s: %w", w.m.name, err)
	}
	if err := w.m.checkDraw(b); err != nil {
		return nil, err
	}
	return w.graph(b.Len(), true)
}

// runGrad runs the training graph g, loaded with b and the parameters, and
// copies out the gradient.
func (w *classWorker) runGrad(g *classGraph, b data.Batch, grad []float32) (float32, error) {
	if err := g.prog.Run(); err != nil {
		return 0, fmt.Errorf("%s: run on %v: %w", w.m.name, b, err)
	}
	loss, err := g.prog.Scalar(g.loss)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", w.m.name, err)
	}
	if err := copyGrads(&w.m.layout, g.prog, g.grads, grad); err != nil {
		return 0, fmt.Errorf("%s: %w", w.m.name, err)
	}
	return loss, nil
}

// Eval runs the forward graph on pieces of at most evalBatch samples and
// sums the cross-entropy in float64.
func (w *classWorker) Eval(params []float32, b data.Batch) (float64, int, error) {
	if err := w.check(params, b); err != nil {
		return 0, 0, err
	}
	var lossSum float64
	correct := 0
	for lo := 0; lo < b.Len(); lo += evalBatch {
		piece := data.Batch{Data: b.Data, Index: b.Index[lo:min(lo+evalBatch, b.Len())]}
		l, c, err := w.evalPiece(params, piece)
		if err != nil {
			return 0, 0, err
		}
		lossSum += l
		correct += c
	}
	return lossSum, correct, nil
}

func (w *classWorker) evalPiece(params []float32, b data.Batch) (float64, int, error) {
	g, err := w.graph(b.Len(), false)
	if err != nil {
		return 0, 0, err
	}
	w.load(g, params, b)
	if err := g.prog.Run(); err != nil {
		return 0, 0, fmt.Errorf("%s: run on %v: %w", w.m.name, b, err)
	}
	z, err := g.prog.Float32s(g.logits)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w", w.m.name, err)
	}
	c := w.m.classes
	if len(z) != b.Len()*c {
		return 0, 0, fmt.Errorf("%s: logits hold %d values, want %d", w.m.name, len(z), b.Len()*c)
	}
	var lossSum float64
	correct := 0
	for k, i := range b.Index {
		row := z[k*c : (k+1)*c]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		label := int(b.Data.Labels[i])
		if best == label {
			correct++
		}
		lossSum += logSumExp(row) - float64(row[label])
	}
	return lossSum, correct, nil
}

// logSumExp returns log Σ exp(z_j) in float64.
func logSumExp(z []float32) float64 {
	hi := math.Inf(-1)
	for _, v := range z {
		hi = math.Max(hi, float64(v))
	}
	var s float64
	for _, v := range z {
		s += detmath.Exp(float64(v) - hi)
	}
	return hi + detmath.Log(s)
}
