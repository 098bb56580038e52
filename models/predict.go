package models

import (
	"fmt"
	"slices"
	"sync"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/internal/detmath"
)

// Classifier reports the sample shape and class count of a model that maps
// samples to class logits (the CNNs), and false for any other model (the
// logistic regression).
func Classifier(m Model) (shape []int, classes int, ok bool) {
	c, ok := m.(*classifier)
	if !ok {
		return nil, 0, false
	}
	return slices.Clone(c.shape), c.classes, true
}

// logitWorker is a Worker that can return its model's class logits.
type logitWorker interface {
	logits(params []float32, b data.Batch, out []float32) error
}

// Logits writes the class logits of every sample of d at params into out,
// row i holding sample i's (length d.Len()·classes). The samples run
// through the forward graphs Evaluate uses, in pieces of at most 64 spread
// over all the pool's workers; a sample's logits do not depend on the
// number of workers. d's labels must lie below the class count (all 0 will
// do). It uses every worker: do not call it while other goroutines use the
// pool. Models other than classifiers return an error.
func (p *Pool) Logits(params []float32, d *data.Dataset, out []float32) error {
	_, classes, ok := Classifier(p.model)
	if !ok {
		return fmt.Errorf("%s has no class logits (it is not a classifier)", p.model.Name())
	}
	if d == nil || d.Len() == 0 {
		return fmt.Errorf("logits of %s: empty dataset", p.model.Name())
	}
	n := d.Len()
	if len(out) != n*classes {
		return fmt.Errorf("logits of %s on %s: output of length %d, want %d samples × %d classes", p.model.Name(), d.Name, len(out), n, classes)
	}
	index := make([]int, n)
	for i := range index {
		index[i] = i
	}
	pieces := (n + evalBatch - 1) / evalBatch
	lws := make([]logitWorker, min(len(p.workers), pieces))
	for w := range lws {
		if lws[w], ok = p.workers[w].(logitWorker); !ok {
			return fmt.Errorf("%s: worker of type %T has no logits", p.model.Name(), p.workers[w])
		}
	}
	errs := make([]error, pieces)
	var wg sync.WaitGroup
	for w, lw := range lws {
		wg.Go(func() {
			for c := w; c < pieces; c += len(p.workers) {
				lo, hi := c*evalBatch, min(n, (c+1)*evalBatch)
				b := data.Batch{Data: d, Index: index[lo:hi]}
				if errs[c] = lw.logits(params, b, out[lo*classes:hi*classes]); errs[c] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("logits of %s on %s: %w", p.model.Name(), d.Name, err)
		}
	}
	return nil
}

// Probabilities returns the softmax of every sample's logits (see Logits):
// row i is sample i's class probabilities, computed in float64.
func (p *Pool) Probabilities(params []float32, d *data.Dataset) ([][]float64, error) {
	_, classes, ok := Classifier(p.model)
	if !ok {
		return nil, fmt.Errorf("%s has no class probabilities (it is not a classifier)", p.model.Name())
	}
	if d == nil || d.Len() == 0 {
		return nil, fmt.Errorf("probabilities of %s: empty dataset", p.model.Name())
	}
	z := make([]float32, d.Len()*classes)
	if err := p.Logits(params, d, z); err != nil {
		return nil, err
	}
	out := make([][]float64, d.Len())
	for i := range out {
		out[i] = Softmax(z[i*classes:(i+1)*classes], nil)
	}
	return out, nil
}

// Softmax returns exp(z_j − logΣexp z) for each j in float64, the
// probabilities whose negative logarithms are the cross-entropy Eval sums,
// appended to dst[:0].
func Softmax(z []float32, dst []float64) []float64 {
	lse := logSumExp(z)
	dst = dst[:0]
	for _, v := range z {
		dst = append(dst, detmath.Exp(float64(v)-lse))
	}
	return dst
}

// logits runs the forward graph on pieces of at most evalBatch samples, as
// Eval does, and copies the logits out.
func (w *classWorker) logits(params []float32, b data.Batch, out []float32) error {
	if err := w.check(params, b); err != nil {
		return err
	}
	c := w.m.classes
	if len(out) != b.Len()*c {
		return fmt.Errorf("%s: output of length %d for %d samples × %d classes", w.m.name, len(out), b.Len(), c)
	}
	for lo := 0; lo < b.Len(); lo += evalBatch {
		hi := min(lo+evalBatch, b.Len())
		piece := data.Batch{Data: b.Data, Index: b.Index[lo:hi]}
		g, err := w.graph(piece.Len(), false)
		if err != nil {
			return err
		}
		w.load(g, params, piece)
		if err := g.prog.Run(); err != nil {
			return fmt.Errorf("%s: run on %v: %w", w.m.name, piece, err)
		}
		z, err := g.prog.Float32s(g.logits)
		if err != nil {
			return fmt.Errorf("%s: %w", w.m.name, err)
		}
		if len(z) != piece.Len()*c {
			return fmt.Errorf("%s: logits hold %d values, want %d", w.m.name, len(z), piece.Len()*c)
		}
		copy(out[lo*c:hi*c], z)
	}
	return nil
}
