package models

import (
	"fmt"

	"github.com/gtstorm/gtstorm/data"
)

// Logits returns the logits of the CNN m (NewMNISTCNN or NewCIFARCNN) at
// params for the samples of b: b.Len() rows of 10 class scores, row k for
// sample b.Index[k], computed by the same forward graph as Eval, in pieces
// of at most 64 samples. It builds a worker of its own, so it suits one-off
// use (exports, tests) rather than a training loop; see [Pool.Logits] for
// a whole dataset on a pool's workers.
func Logits(m Model, params []float32, b data.Batch) ([]float32, error) {
	cm, ok := m.(*classifier)
	if !ok {
		return nil, fmt.Errorf("%s: logits are defined for the CNNs only", m.Name())
	}
	wk, err := cm.NewWorker()
	if err != nil {
		return nil, err
	}
	out := make([]float32, b.Len()*cm.classes)
	if err := wk.(*classWorker).logits(params, b, out); err != nil {
		return nil, err
	}
	return out, nil
}
