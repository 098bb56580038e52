package models

import (
	"fmt"
	"sync"

	"github.com/gtstorm/gtstorm/data"
)

// Pool holds one Worker of a model per goroutine: calls with distinct
// worker ids may run concurrently, calls with the same id may not.
type Pool struct {
	model   Model
	workers []Worker
}

// NewPool returns a pool of n workers of m.
func NewPool(m Model, n int) (*Pool, error) {
	if n < 1 {
		return nil, fmt.Errorf("pool of %s: %d workers, want at least 1", m.Name(), n)
	}
	p := &Pool{model: m, workers: make([]Worker, n)}
	for i := range p.workers {
		w, err := m.NewWorker()
		if err != nil {
			return nil, fmt.Errorf("pool of %s: %w", m.Name(), err)
		}
		p.workers[i] = w
	}
	return p, nil
}

// Model returns the pool's model.
func (p *Pool) Model() Model { return p.model }

// Size returns the number of workers.
func (p *Pool) Size() int { return len(p.workers) }

// Grad evaluates the gradient of the batch-mean loss on worker's graphs (see
// Worker.Grad).
func (p *Pool) Grad(worker int, params []float32, b data.Batch, grad []float32) (float32, error) {
	if worker < 0 || worker >= len(p.workers) {
		return 0, fmt.Errorf("worker %d out of range [0, %d)", worker, len(p.workers))
	}
	return p.workers[worker].Grad(params, b, grad)
}

// Evaluate returns the accuracy and mean loss of params over the whole of d,
// evaluated in chunks of at most chunk samples spread over all the pool's
// workers. The reduction is in chunk order and in float64, so the result
// does not depend on the number of workers. It uses every worker: do not
// call it while other goroutines use the pool.
func (p *Pool) Evaluate(params []float32, d *data.Dataset, chunk int) (acc, loss float64, err error) {
	if d == nil || d.Len() == 0 {
		return 0, 0, fmt.Errorf("evaluate %s: empty dataset", p.model.Name())
	}
	if chunk < 1 {
		return 0, 0, fmt.Errorf("evaluate %s on %s: chunk size %d, want at least 1", p.model.Name(), d.Name, chunk)
	}
	n := d.Len()
	index := make([]int, n)
	for i := range index {
		index[i] = i
	}
	chunks := (n + chunk - 1) / chunk
	lossSums := make([]float64, chunks)
	corrects := make([]int, chunks)
	errs := make([]error, chunks)

	var wg sync.WaitGroup
	for w := range min(len(p.workers), chunks) {
		wg.Go(func() {
			for c := w; c < chunks; c += len(p.workers) {
				b := data.Batch{Data: d, Index: index[c*chunk : min(n, (c+1)*chunk)]}
				lossSums[c], corrects[c], errs[c] = p.workers[w].Eval(params, b)
				if errs[c] != nil {
					return
				}
			}
		})
	}
	wg.Wait()

	var lossSum float64
	correct := 0
	for c := range chunks {
		if errs[c] != nil {
			return 0, 0, fmt.Errorf("evaluate %s on %s: %w", p.model.Name(), d.Name, errs[c])
		}
		lossSum += lossSums[c]
		correct += corrects[c]
	}
	return float64(correct) / float64(n), lossSum / float64(n), nil
}
