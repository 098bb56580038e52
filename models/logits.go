package models

import (
	"fmt"

	"github.com/gtstorm/gtstorm/data"
)

// Logits returns the logits of the CNN m (NewMNISTCNN or NewCIFARCNN) at
// params for the samples of b: b.Len() rows of 10 class scores, row k for
// sample b.Index[k], computed by the same forward graph as Eval, in pieces
// of at most 64 samples. It builds a worker of its own, so it suits one-off
// use (exports, tests) rather than a training loop.
func Logits(m Model, params []float32, b data.Batch) ([]float32, error) {
	cm, ok := m.(*classifier)
	if !ok {
		return nil, fmt.Errorf("%s: logits are defined for the CNNs only", m.Name())
	}
	wk, err := cm.NewWorker()
	if err != nil {
		return nil, err
	}
	w := wk.(*classWorker)
	if err := w.check(params, b); err != nil {
		return nil, err
	}
	c := cm.classes
	out := make([]float32, 0, b.Len()*c)
	for lo := 0; lo < b.Len(); lo += evalBatch {
		piece := data.Batch{Data: b.Data, Index: b.Index[lo:min(lo+evalBatch, b.Len())]}
		g, err := w.graph(piece.Len(), false)
		if err != nil {
			return nil, err
		}
		w.load(g, params, piece)
		if err := g.prog.Run(); err != nil {
			return nil, fmt.Errorf("%s: run on %v: %w", cm.name, piece, err)
		}
		z, err := g.prog.Float32s(g.logits)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cm.name, err)
		}
		if len(z) != piece.Len()*c {
			return nil, fmt.Errorf("%s: logits hold %d values, want %d", cm.name, len(z), piece.Len()*c)
		}
		out = append(out, z...)
	}
	return out, nil
}
