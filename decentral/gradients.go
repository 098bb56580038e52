package decentral

import (
	"errors"
	"fmt"
)

// grad evaluates node i's stochastic gradient at x on b into dst and counts
// the samples and the evaluation.
func (o *Optimizer) grad(w, i int, x []float32, b Batch, dst []float32) (float32, error) {
	if b == nil {
		return 0, errNoBatch
	}
	n := b.Len()
	loss, err := o.oracle.Grad(w, x, b, dst)
	if err != nil {
		return 0, err
	}
	o.decay(dst, x)
	o.rSamples[i] += int64(n)
	o.rEvals[i]++
	return loss, nil
}

// decay adds Config.WeightDecay λ times x to the gradient g evaluated at x:
// the one rule of SPEC §14 that every gradient goes through. λ = 0 leaves g
// as the oracle gave it, bit for bit. The loss stays the oracle's.
func (o *Optimizer) decay(g, x []float32) {
	if o.cfg.WeightDecay == 0 {
		return
	}
	addScaled(g, float32(o.cfg.WeightDecay), x)
}

// gradPair evaluates node i's gradients at xNew and xOld on the same batch,
// through PairGrader when the oracle has it, and counts both evaluations.
func (o *Optimizer) gradPair(w, i int, xNew, xOld []float32, b Batch, gNew, gOld []float32) (float32, error) {
	po, ok := o.oracle.(PairGrader)
	if !ok {
		loss, err := o.grad(w, i, xNew, b, gNew)
		if err != nil {
			return 0, err
		}
		_, err = o.grad(w, i, xOld, b, gOld)
		return loss, err
	}
	if b == nil {
		return 0, errNoBatch
	}
	n := b.Len()
	loss, err := po.GradPair(w, xNew, xOld, b, gNew, gOld)
	if err != nil {
		return 0, err
	}
	o.decay(gNew, xNew)
	o.decay(gOld, xOld)
	o.rSamples[i] += 2 * int64(n)
	o.rEvals[i] += 2
	return loss, nil
}

// fullGrad evaluates node i's gradient at x over its large batch into dst:
// the mean of the pieces' gradients weighted by their sizes.
func (o *Optimizer) fullGrad(w, i int, x, dst []float32, size int) (float32, error) {
	fb, ok := o.sampler.(FullBatcher)
	if !ok {
		return 0, fmt.Errorf("%s needs large batches and the batch source (%T) gives none", o.desc.Name, o.sampler)
	}
	pieces := fb.FullBatch(i, size)
	total := 0
	for _, b := range pieces {
		if b == nil {
			return 0, errNoBatch
		}
		total += b.Len()
	}
	if total == 0 {
		return 0, errors.New("the batch source gave an empty large batch")
	}
	g := o.scratch[2*w]
	var loss float64
	for k, b := range pieces {
		out := dst
		if len(pieces) > 1 {
			out = g
		}
		l, err := o.oracle.Grad(w, x, b, out)
		if err != nil {
			return 0, err
		}
		share := float64(b.Len()) / float64(total)
		loss += float64(share * float64(l))
		if len(pieces) > 1 {
			if k == 0 {
				setScaled(dst, float32(share), g)
			} else {
				addScaled(dst, float32(share), g)
			}
		}
	}
	o.decay(dst, x)
	o.rSamples[i] += int64(total)
	o.rEvals[i]++
	return float32(loss), nil
}

// errNoBatch is the error of a gradient evaluation on a nil Batch.
var errNoBatch = errors.New("the batch source gave no batch (nil Batch)")
