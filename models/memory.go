package models

import (
	"fmt"
	"slices"

	"github.com/gtstorm/gtstorm/models/internal/graphops"
)

// graphOverhead is what one compiled graph costs besides its buffers (the
// Gorgonia nodes, the Program's slots and values): 45–70 KB measured for
// the MNIST CNN at batch 1 to 4096, rounded up.
const graphOverhead = 128 << 10

// WorkerBytes returns the bytes one Worker of m holds once it has computed
// gradients on batches of each size in train and evaluated chunks of each
// size in eval: its copy of the parameters, the buffers of its compiled
// graphs and the graphs themselves. A classifier's graphs share one set of
// buffers, each as large as the largest graph needs (a workspace of
// models/internal/graphops), and evaluates in pieces of at most evalBatch
// samples; the logistic regression keeps separate buffers per graph and is
// assumed to read sparse data (as loaded from LibSVM files).
//
// For a classifier it builds the graphs of batches of 1 and 2 samples and
// extrapolates each buffer's size, which is affine in the batch size: a few
// milliseconds and a megabyte, whatever the sizes asked about.
//
// A classifier of more than bigModel parameters is not built: its size is
// taken as its parameters and their gradient buffers, 8 bytes a parameter,
// which is less than it needs, so that a memory check refuses it without
// allocating it.
func WorkerBytes(m Model, train, eval []int) (int64, error) {
	switch mod := m.(type) {
	case *classifier:
		if mod.size > bigModel {
			return 8 * int64(mod.size), nil
		}
		return mod.workerBytes(train, eval)
	case *logReg:
		return mod.workerBytes(train, eval), nil
	}
	return 0, fmt.Errorf("worker memory of %s: unknown model type %T", m.Name(), m)
}

// bigModel is the most parameters (1 GiB of them) of a classifier whose
// worker WorkerBytes builds to measure.
const bigModel = 1 << 28

// bufferFit is a buffer's size as a function of the batch size n: a + b·n.
type bufferFit struct{ a, b int64 }

// fitBuffers builds the graphs of batch 1 and 2 (with or without gradient)
// in fresh workspaces and returns each buffer's affine size in bytes.
func (m *classifier) fitBuffers(withGrad bool) (map[string]bufferFit, error) {
	var sizes [2]map[string]int64
	for k, n := range []int{1, 2} {
		w := &classWorker{m: m, params: make([]float32, m.size), ws: graphops.NewWorkspace(),
			train: map[int]*classGraph{}, eval: map[int]*classGraph{}}
		if _, err := w.graph(n, withGrad); err != nil {
			return nil, err
		}
		sizes[k] = w.ws.Sizes()
	}
	fit := map[string]bufferFit{}
	for name, s1 := range sizes[0] {
		slope := sizes[1][name] - s1
		fit[name] = bufferFit{s1 - slope, slope}
	}
	return fit, nil
}

func (m *classifier) workerBytes(train, eval []int) (int64, error) {
	need := map[string]int64{}
	add := func(fit map[string]bufferFit, n int) {
		for name, f := range fit {
			need[name] = max(need[name], f.a+f.b*int64(n))
		}
	}
	var graphs []int // distinct graphs, as ±(batch size): + training, − forward
	if len(train) > 0 {
		fit, err := m.fitBuffers(true)
		if err != nil {
			return 0, err
		}
		for _, n := range train {
			if n > 0 {
				add(fit, n)
				graphs = append(graphs, n)
			}
		}
	}
	if len(eval) > 0 {
		fit, err := m.fitBuffers(false)
		if err != nil {
			return 0, err
		}
		for _, n := range eval {
			for _, piece := range []int{min(n, evalBatch), n % evalBatch} {
				if piece > 0 {
					add(fit, piece)
					graphs = append(graphs, -piece)
				}
			}
		}
	}
	slices.Sort(graphs)
	total := int64(4*m.size) + int64(len(slices.Compact(graphs)))*graphOverhead
	for _, b := range need {
		total += b
	}
	return total, nil
}

// workerBytes counts, per distinct graph, the overhead, the gradient's
// and regulariser's p-float buffers and a few n-float buffers of scores,
// labels and their gradients.
func (m *logReg) workerBytes(train, eval []int) int64 {
	p := int64(m.features)
	total := 4 * p
	seen := map[lrKey]bool{}
	for _, set := range []struct {
		sizes []int
		train bool
	}{{train, true}, {eval, false}} {
		for _, n := range set.sizes {
			k := lrKey{n: n, sparse: true, train: set.train}
			if n <= 0 || seen[k] {
				continue
			}
			seen[k] = true
			total += graphOverhead/2 + 16*int64(n)
			if set.train {
				total += 16 * p
			}
		}
	}
	return total
}
