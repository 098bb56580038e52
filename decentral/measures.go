package decentral

import (
	"context"
	"fmt"
)

// Mean writes x̄ = (1/m) Σ_i x_i into dst (length p), summing in float64.
func (o *Optimizer) Mean(dst []float32) {
	o.meanAcc()
	for k, s := range o.acc {
		dst[k] = float32(s)
	}
}

// meanAcc leaves x̄ in o.acc.
func (o *Optimizer) meanAcc() {
	clear(o.acc)
	for i := 0; i < o.m; i++ {
		x := o.row(o.x, i)
		for k, v := range x {
			o.acc[k] += float64(v)
		}
	}
	inv := 1 / float64(o.m)
	for k := range o.acc {
		o.acc[k] *= inv
	}
}

// ConsensusError returns (1/m) Σ_i ‖x_i − x̄‖², in float64.
func (o *Optimizer) ConsensusError() float64 {
	o.meanAcc()
	s := 0.0
	for i := 0; i < o.m; i++ {
		x := o.row(o.x, i)
		for k, v := range x {
			d := float64(v) - o.acc[k]
			s += d * d
		}
	}
	return s / float64(o.m)
}

// GradNormSq returns ‖(1/n) Σ_k ∇f(x̄; batches[k])‖², the squared norm of the
// global gradient at the average model, and the mean loss at x̄ over the n
// batches. Pass one batch per node — a fixed subset of each node's data —
// for the paper's (1/m) Σ_i ∇f_i(x̄), or a single batch of global data. Each
// batch weighs the same; 1 ≤ n ≤ m. The evaluations run on the workers and
// are not counted as samples; sums are in float64, in batch order.
func (o *Optimizer) GradNormSq(ctx context.Context, batches []Batch) (normSq, loss float64, err error) {
	if n := len(batches); n < 1 || n > o.m {
		return 0, 0, fmt.Errorf("gradient norm: %d batches, want 1 to %d", n, o.m)
	}
	if err := ctx.Err(); err != nil {
		return 0, 0, err
	}
	o.Mean(o.mean32)
	o.evalB = batches
	defer func() { o.evalB = nil }()
	if err := o.parallel(phaseEval, len(batches)); err != nil {
		return 0, 0, fmt.Errorf("gradient norm: %w", err)
	}
	clear(o.acc)
	for k := range batches {
		g := o.row(o.nxt[0], k)
		for j, v := range g {
			o.acc[j] += float64(v)
		}
		loss += o.evalL[k]
	}
	inv := 1 / float64(len(batches))
	for _, s := range o.acc {
		s *= inv
		normSq += s * s
	}
	return normSq, loss * inv, nil
}

// evalJob evaluates the gradient of batch k at x̄ into row k of the free
// next-round x slab.
func (o *Optimizer) evalJob(w, k int) error {
	loss, err := o.oracle.Grad(w, o.mean32, o.evalB[k], o.row(o.nxt[0], k))
	if err != nil {
		return err
	}
	o.evalL[k] = float64(loss)
	return nil
}
