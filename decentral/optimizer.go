package decentral

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/decentral/compress"
)

// Optimizer runs one decentralized algorithm, a [Method], over m nodes with
// p parameters each: it is the driver that schedules the nodes' work on its
// workers, runs the exchange, asks the [graph.Topology] for each round's W_t,
// counts and measures, and never switches on the algorithm. All nodes'
// vectors live in flat m × p slabs, node i at [i·p, (i+1)·p). An Optimizer
// is not safe for concurrent use; Close releases its worker goroutines.
type Optimizer struct {
	cfg     Config
	meth    Method
	desc    Description // meth's, read once
	sched   Schedule
	topo    graph.Topology
	mix     *graph.Mixing // W_t of the round in progress, or of the last one
	ex      Exchange
	sampler BatchSource
	oracle  Oracle
	m, p    int
	local   []int // the nodes this optimizer runs: Config.Local, or all
	procs   int   // goroutines and worker ids used: min(Config.Workers, len(local))
	x0      []float32

	// The method's state slabs, m × p each, x first: cur[k] is slab k's
	// current value, nxt[k] its next one, scratch between rounds.
	cur, nxt [][]float32
	x        []float32 // cur[0], the models

	round       int
	initialized bool
	failed      error

	// Per-node counters, committed at the end of a round.
	samples, evals, bytes []int64
	rSamples, rEvals      []int64 // this round's, per node
	rBytes                []int64
	loss, rLoss           []float64

	// Per-round η_t, η_{t+1} and β_{t+1}, read-only while nodes work.
	eta32, etaNext32, beta32 float32

	// Compressed messages (a method with Description.Compress): node i's encoded
	// message of the round, what it decodes to, and its length in bytes.
	comp     compress.Compressor
	enc      [][]byte
	dec      [][]float32
	msgBytes []int64

	// honest lists the nodes the measures count: all but Config.Byzantine.
	honest []int
	// mixer combines what a node receives: Config.Mixer, or plain gossip.
	mixer Mixer

	// The simulated clock (Config.Network): T_i, when node i finished the
	// last round, in seconds.
	simT, simReady []float64

	send    [][][]float32 // send[i]: node i's vectors this round
	scratch [][]float32   // two p-float gradient buffers per worker
	acc     []float64     // p floats for reductions
	mean32  []float32     // x̄ as float32
	evalB   []Batch
	evalL   []float64

	pipe pipeline // the next round's state when rounds overlap (pipeline.go)

	// Parallel node work.
	phase int
	jobs  int
	next  atomic.Int64
	errs  []error
	team  *team
}

// Init puts every node at x0 and runs the algorithm's initialisation (GNSD's
// y_0 and GT-STORM's v_0 are local stochastic gradients at x0; DSGD has
// none). It resets the round and the counters.
func (o *Optimizer) Init(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	o.initialized, o.failed, o.round = false, nil, 0
	o.pipe.restart()
	for i := 0; i < o.m; i++ {
		copy(o.row(o.x, i), o.x0)
		o.samples[i], o.evals[i], o.bytes[i], o.loss[i] = 0, 0, 0, math.NaN()
		o.rLoss[i] = math.NaN()
	}
	clear(o.simT)
	o.setRates(0)
	if err := o.parallel(phaseInit, len(o.local)); err != nil {
		return fmt.Errorf("%s init: %w", o.desc.Name, err)
	}
	o.startClock()
	o.commitCounters()
	o.initialized = true
	return nil
}

// Step runs one communication round: every node sends its vectors to its
// neighbours, mixes what it receives, draws a minibatch and updates. It
// returns ctx's error without doing anything once ctx is done. If a node's
// work fails or diverges the error names the round and node, the state stays
// that of the last completed round, and later Steps return the same error.
func (o *Optimizer) Step(ctx context.Context) error {
	switch {
	case !o.initialized:
		return fmt.Errorf("%s: Step before Init or Restore", o.desc.Name)
	case o.failed != nil:
		return o.failed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	t := o.round
	pipelined := o.pipe.begun == t+1 // round t began during round t−1, and its vectors went out
	o.pipe.begun = 0
	if err := o.beginRound(t, pipelined); err != nil {
		return err
	}
	if err := o.sendRound(t, pipelined); err != nil {
		return err
	}
	if err := o.ex.Wait(ctx); err != nil {
		return fmt.Errorf("%s round %d: %w", o.desc.Name, t+1, err)
	}
	o.beginNext(t)
	err := o.parallel(phaseStep, len(o.local)) // with o.pipe.sending, each node then sends its next vectors
	o.pipe.sending = false
	if err != nil {
		o.failed = fmt.Errorf("%s round %d: %w", o.desc.Name, t+1, err)
		return o.failed
	}
	o.endRound()
	return nil
}

// beginRound sets round t's mixing matrix and rates, opens the round on a
// RoundExchange and runs the method's Prepare phase. A pipelined round
// takes the matrix and vectors that went out during round t−1.
func (o *Optimizer) beginRound(t int, pipelined bool) error {
	if pipelined {
		if err := o.pipe.err; err != nil {
			o.pipe.err = nil
			return fmt.Errorf("%s round %d: %w", o.desc.Name, t+1, err)
		}
		o.mix = o.pipe.mix
		o.send, o.pipe.send = o.pipe.send, o.send
	} else if mx := o.topo.Mixing(t); mx != o.mix {
		if err := o.checkMixing(mx); err != nil {
			return fmt.Errorf("%s round %d: %w", o.desc.Name, t+1, err)
		}
		o.mix = mx
	}
	o.setRates(t)
	if rx, ok := o.ex.(RoundExchange); ok && !pipelined {
		if err := rx.BeginRound(t, o.mix, o.desc.Shares()); err != nil {
			return fmt.Errorf("%s round %d: %w", o.desc.Name, t+1, err)
		}
	}
	if _, ok := o.meth.(Preparer); ok {
		if err := o.parallel(phasePrepare, len(o.local)); err != nil {
			o.failed = fmt.Errorf("%s round %d: %w", o.desc.Name, t+1, err)
			return o.failed
		}
	}
	return nil
}

// sendRound sends every local node's shared vectors of round t to its
// neighbours and records the bytes; a pipelined round's went out already.
func (o *Optimizer) sendRound(t int, pipelined bool) error {
	for _, i := range o.local {
		if pipelined {
			if err := o.pipe.errs[i]; err != nil {
				return fmt.Errorf("%s round %d: node %d: %w", o.desc.Name, t+1, i, err)
			}
			o.rBytes[i] = o.pipe.bytes[i]
			continue
		}
		n, err := o.sendShared(i)
		if err != nil {
			return fmt.Errorf("%s round %d: node %d: %w", o.desc.Name, t+1, i, err)
		}
		o.rBytes[i] = n
	}
	return nil
}

// sendShared sends node i's shared vectors of the round, as encoded
// messages when the method compresses and the exchange carries them, and
// returns the bytes they count for.
func (o *Optimizer) sendShared(i int) (int64, error) {
	to := o.mix.To(i)
	ee, encoded := o.ex.(EncodedExchange)
	encoded = encoded && o.comp != nil
	o.send[i] = o.share(i, o.send[i][:0])
	var n int64
	var err error
	if encoded {
		n, err = ee.SendEncoded(i, to, o.enc[i], o.dec[i])
	} else {
		n, err = o.ex.Send(i, to, o.send[i])
	}
	if err != nil || o.comp == nil {
		return n, err
	}
	// The encoded message to every neighbour, whatever carried it.
	want := o.msgBytes[i] * int64(len(to))
	if encoded && n != want {
		return 0, fmt.Errorf("the exchange sent %d bytes of encoded messages, want %d", n, want)
	}
	return want, nil
}

// endRound makes the next slabs current and commits the round's clock,
// counters and bytes.
func (o *Optimizer) endRound() {
	o.cur, o.nxt = o.nxt, o.cur
	o.x = o.cur[0]
	o.advanceClock()
	o.commitCounters()
	for i, b := range o.rBytes {
		o.bytes[i] += b
	}
	o.round++
}

// setRates sets η_t, η_{t+1} and β_{t+1} for round t.
func (o *Optimizer) setRates(t int) {
	o.eta32, o.etaNext32 = float32(o.sched.Eta(t)), float32(o.sched.Eta(t+1))
	o.beta32 = float32(o.sched.Beta(t + 1))
}

// checkMixing refuses a mixing matrix that is not over the optimizer's m
// nodes or that the mixer, the exchange or the method cannot use (each
// that is a MixingChecker).
func (o *Optimizer) checkMixing(mx *graph.Mixing) error {
	if mx == nil || mx.Nodes() != o.m {
		return fmt.Errorf("the topology gave no mixing matrix over %d nodes", o.m)
	}
	for _, v := range []any{o.mixer, o.ex, o.meth} {
		if c, ok := v.(MixingChecker); ok {
			if err := c.CheckMixing(mx); err != nil {
				return err
			}
		}
	}
	return nil
}

func (o *Optimizer) commitCounters() {
	for _, i := range o.local {
		o.samples[i] += o.rSamples[i]
		o.evals[i] += o.rEvals[i]
		o.loss[i] = o.rLoss[i]
	}
}

// Local returns the nodes this optimizer runs, in increasing order: all m,
// or Config.Local. The slice belongs to the optimizer.
func (o *Optimizer) Local() []int { return o.local }

// row returns node i's p-float row of slab.
func (o *Optimizer) row(slab []float32, i int) []float32 {
	return slab[i*o.p : (i+1)*o.p : (i+1)*o.p]
}

// checkFinite returns an ErrDiverged error if vec, named what, is not finite.
func checkFinite(what string, vec []float32) error {
	if finite(vec) {
		return nil
	}
	return fmt.Errorf("%w: %s has a NaN or Inf value", ErrDiverged, what)
}
