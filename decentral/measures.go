package decentral

import (
	"context"
	"fmt"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// Mean writes x̄ = (1/m) Σ_i x_i into dst (length p), summing in float64;
// over the honest nodes only when some are Byzantine (see [Optimizer.Honest]).
func (o *Optimizer) Mean(dst []float32) {
	o.meanAcc()
	for k, s := range o.acc {
		dst[k] = float32(s)
	}
}

// meanAcc leaves x̄ in o.acc.
func (o *Optimizer) meanAcc() {
	clear(o.acc)
	for _, i := range o.honest {
		x := o.row(o.x, i)
		for k, v := range x {
			o.acc[k] += float64(v)
		}
	}
	inv := 1 / float64(len(o.honest))
	for k := range o.acc {
		o.acc[k] *= inv
	}
}

// ConsensusError returns (1/m) Σ_i ‖x_i − x̄‖², in float64; over the honest
// nodes only, about their mean, when some are Byzantine.
func (o *Optimizer) ConsensusError() float64 {
	o.meanAcc()
	s := 0.0
	for _, i := range o.honest {
		x := o.row(o.x, i)
		for k, v := range x {
			d := float64(v) - o.acc[k]
			s += float64(d * d)
		}
	}
	return s / float64(len(o.honest))
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
		normSq += float64(s * s)
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

// Byzantine returns the nodes that lie (Config.Byzantine), nil for none.
func (o *Optimizer) Byzantine() []int {
	var out []int
	h := 0
	for i := range o.m {
		if h < len(o.honest) && o.honest[h] == i {
			h++
			continue
		}
		out = append(out, i)
	}
	return out
}

// Honest returns the honest nodes in increasing order: every node of a run
// without Byzantine ones. The measures (Mean, ConsensusError, Loss,
// GradNormSq) count these only. The slice belongs to the optimizer.
func (o *Optimizer) Honest() []int { return o.honest }

// Round returns t, the number of communication rounds done.
func (o *Optimizer) Round() int { return o.round }

// Algorithm returns the algorithm's name.
func (o *Optimizer) Algorithm() string { return o.desc.Name }

// Nodes returns m.
func (o *Optimizer) Nodes() int { return o.m }

// Dim returns p, the number of parameters per node.
func (o *Optimizer) Dim() int { return o.p }

// Workers returns the number of goroutines doing node work, min(Config.Workers
// or GOMAXPROCS, m): the Oracle is called with worker ids 0..Workers()-1.
func (o *Optimizer) Workers() int { return o.procs }

// Mixing returns the mixing matrix of the round in progress or, between
// rounds, of the last one (New's before the first).
func (o *Optimizer) Mixing() *graph.Mixing { return o.mix }

// Schedule returns the step-size and β schedule.
func (o *Optimizer) Schedule() Schedule { return o.sched }

// Eta returns η_t for t = Round(): the step size of the next round.
func (o *Optimizer) Eta() float64 { return o.sched.Eta(o.round) }

// Beta returns β_t for t = Round(): the weight a method with
// Description.Momentum such as
// GT-STORM gave the mixed v in forming the current v_t (0 at t = 0, where
// v_0 is a plain gradient). Methods without momentum (DSGD, GNSD, D²,
// D-GET, CHOCO) have no β and report 0.
func (o *Optimizer) Beta() float64 {
	if !o.desc.Momentum {
		return 0
	}
	return o.sched.Beta(o.round)
}

// Node returns node i's current parameters x_i. The slice aliases the
// optimizer's state: do not modify it, and do not keep it past the next Step,
// Init or Restore.
func (o *Optimizer) Node(i int) []float32 { return o.row(o.x, i) }

// Direction returns node i's tracked direction — GT-STORM's v_i or GNSD's
// y_i — or nil for DSGD. Like Node, it aliases the state.
func (o *Optimizer) Direction(i int) []float32 {
	if o.desc.Direction == 0 {
		return nil
	}
	return o.row(o.cur[o.desc.Direction], i)
}

// Loss returns the mean over nodes of the minibatch loss of each node's last
// gradient evaluation at its own parameters (GT-STORM: at x_t; GNSD: at x_t;
// DSGD: at x_{t−1}, before its last move); NaN before any. It counts the
// honest nodes only when some are Byzantine.
func (o *Optimizer) Loss() float64 {
	s := 0.0
	for _, i := range o.honest {
		s += o.loss[i]
	}
	return s / float64(len(o.honest))
}

// Close stops the worker goroutines. The optimizer stays usable; a later
// Step starts them again.
func (o *Optimizer) Close() error {
	if o.team != nil {
		o.team.stop()
		o.team = nil
	}
	return nil
}
