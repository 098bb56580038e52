package models

import (
	"fmt"

	"github.com/gtstorm/gtstorm/data"
)

// PairWorker is implemented by workers that evaluate the gradients of two
// parameter vectors on one batch for less than two Grad calls cost.
// GT-STORM's round needs exactly that: the stochastic gradients at the new
// and the previous iterate, on the same minibatch. The results are
// bit-identical to Grad(xNew, b, gNew) followed by Grad(xOld, b, gOld).
type PairWorker interface {
	GradPair(xNew, xOld []float32, b data.Batch, gNew, gOld []float32) (lossNew, lossOld float32, err error)
}

// GradPair loads the batch into the training graph once (for the CIFAR CNN
// at batch 128, reading and normalising the images costs about a sixth of
// a gradient) and runs the graph at xNew, then at xOld.
func (w *classWorker) GradPair(xNew, xOld []float32, b data.Batch, gNew, gOld []float32) (lossNew, lossOld float32, err error) {
	g, err := w.trainGraph(b, xNew, gNew)
	if err != nil {
		return 0, 0, err
	}
	if err := checkVec("old params", xOld, w.m.size); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", w.m.name, err)
	}
	if err := checkVec("old grad", gOld, w.m.size); err != nil {
		return 0, 0, fmt.Errorf("%s: %w", w.m.name, err)
	}
	w.load(g, xNew, b)
	if lossNew, err = w.runGrad(g, b, gNew); err != nil {
		return 0, 0, err
	}
	copy(w.params, xOld)
	if lossOld, err = w.runGrad(g, b, gOld); err != nil {
		return 0, 0, err
	}
	return lossNew, lossOld, nil
}

// GradPair evaluates the gradients at xNew and xOld on the same batch on
// worker's graphs, sharing the batch's loading where the model's worker
// implements PairWorker (the CNNs) and calling Grad twice otherwise. The
// results are those of the two Grad calls, bit for bit.
func (p *Pool) GradPair(worker int, xNew, xOld []float32, b data.Batch, gNew, gOld []float32) (lossNew, lossOld float32, err error) {
	if worker < 0 || worker >= len(p.workers) {
		return 0, 0, fmt.Errorf("worker %d out of range [0, %d)", worker, len(p.workers))
	}
	w := p.workers[worker]
	if pg, ok := w.(PairWorker); ok {
		return pg.GradPair(xNew, xOld, b, gNew, gOld)
	}
	if lossNew, err = w.Grad(xNew, b, gNew); err != nil {
		return 0, 0, err
	}
	if lossOld, err = w.Grad(xOld, b, gOld); err != nil {
		return 0, 0, err
	}
	return lossNew, lossOld, nil
}
