package decentral

import "github.com/gtstorm/gtstorm/decentral/compress"

// RoundContext is what a [Method] sees of one node's round (or
// initialisation): its rows of the state slabs, mixing with W_t, its batch,
// gradients, η_t, β_{t+1} and the loss it reports. Its gradient calls count
// samples and evaluations. It is a small value passed to each call; do not
// keep it. A method's own knobs are fields of the method, not of the context.
type RoundContext struct {
	o    *Optimizer
	w, i int
}

// Node returns the node's index i.
func (c RoundContext) Node() int { return c.i }

// Worker returns the worker id running the node, for the Oracle.
func (c RoundContext) Worker() int { return c.w }

// Round returns t: the rounds completed before this one.
func (c RoundContext) Round() int { return c.o.round }

// Eta returns η_t, the step size of this round.
func (c RoundContext) Eta() float32 { return c.o.eta32 }

// EtaNext returns η_{t+1}, the step size of the next round.
func (c RoundContext) EtaNext() float32 { return c.o.etaNext32 }

// Beta returns β_{t+1}, the weight this round gives the mixed direction.
func (c RoundContext) Beta() float32 { return c.o.beta32 }

// Cur returns the node's current row of slab k (Slabs[k]; 0 is x).
func (c RoundContext) Cur(k int) []float32 { return c.o.row(c.o.cur[k], c.i) }

// Next returns the node's next row of slab k, current after the round.
func (c RoundContext) Next(k int) []float32 { return c.o.row(c.o.nxt[k], c.i) }

// Scratch returns the worker's two p-float gradient buffers.
func (c RoundContext) Scratch() (a, b []float32) {
	return c.o.scratch[2*c.w], c.o.scratch[2*c.w+1]
}

// Mix sets dst = Σ_j W_t,ij vec_j, where vec_j is the k-th vector neighbour
// j shared this round and own is the node's: plain gossip, or the run's
// Config.Mixer over what the neighbours sent.
func (c RoundContext) Mix(dst []float32, k int, own []float32) {
	c.o.mixer.Mix(c.w, dst, c.o.mix, c.o.ex, c.i, k, own)
}

// Batch draws the node's next minibatch.
func (c RoundContext) Batch() Batch { return c.o.sampler.Sample(c.i) }

// Grad evaluates the node's stochastic gradient at x on b into dst and
// counts the samples and the evaluation.
func (c RoundContext) Grad(x []float32, b Batch, dst []float32) (float32, error) {
	return c.o.grad(c.w, c.i, x, b, dst)
}

// GradPair evaluates the node's gradients at xNew and xOld on the same batch
// (through [PairGrader] when the oracle has it) and counts both.
func (c RoundContext) GradPair(xNew, xOld []float32, b Batch, gNew, gOld []float32) (float32, error) {
	return c.o.gradPair(c.w, c.i, xNew, xOld, b, gNew, gOld)
}

// FullGrad evaluates the node's gradient at x on a large batch into dst:
// size samples drawn from its share, or its whole share when size is 0 (the
// [FullBatcher] decides which). It counts the large batch's samples and one
// evaluation, and uses the worker's Scratch buffers.
func (c RoundContext) FullGrad(x, dst []float32, size int) (float32, error) {
	return c.o.fullGrad(c.w, c.i, x, dst, size)
}

// Compressor returns the compressor of the method's Description.Compress.
func (c RoundContext) Compressor() compress.Compressor { return c.o.comp }

// Compress encodes v with the method's compressor, seeded by Config.Seed,
// the node and the round, and returns the node's message buffer set to the
// vector the method applies: the decoded message times the compressor's
// Scale. Every neighbour applies the same vector, and it is the buffer
// [RoundContext.Message] returns until the next Compress. The encoded
// message is what the node sends each neighbour this round.
func (c RoundContext) Compress(v []float32) ([]float32, error) {
	return c.o.compressRow(c.i, v)
}

// Message returns the node's decoded and scaled message of this round, as
// Compress left it.
func (c RoundContext) Message() []float32 { return c.o.dec[c.i] }

// SetLoss records the loss of the node's last evaluation at its own
// parameters (NaN for none), for [Optimizer.Loss].
func (c RoundContext) SetLoss(l float64) { c.o.rLoss[c.i] = l }
