package decentral

import (
	"fmt"
	"strings"

	"github.com/gtstorm/gtstorm/decentral/compress"
)

// Method is one decentralized algorithm: its update rule and the state it
// keeps. The [Optimizer] is the driver: it schedules the nodes on its
// workers, runs the [Exchange], counts and measures, and never knows which
// Method runs. A Method keeps no per-run data itself; its state lives in
// named m × p slabs the optimizer allocates from [Method.Slabs], saves in a
// [Snapshot] and double-buffers (a round reads a slab's current rows and
// writes its next ones, which become current once every node succeeded).
//
// Init and Step run concurrently for distinct nodes and must touch only the
// node's rows (through the [RoundContext]) and the worker's scratch.
type Method interface {
	// Name is the name Config.Algorithm selects the method by.
	Name() string
	// Power is the default step-size exponent: η_t = η_0/(1 + 0.1t)^Power;
	// 0 is a constant step.
	Power() float64
	// Slabs names the state slabs, x first: what a Snapshot holds.
	Slabs() []string
	// StateFloats is the state per node beyond the model that the
	// algorithm needs, in floats, as Counters.StateFloats reports it.
	StateFloats(p int) int
	// Shares is the number of vectors a node sends each neighbour per round.
	Shares() int
	// Share appends node c.Node()'s vectors of round t to send.
	Share(c RoundContext, send [][]float32) [][]float32
	// Init runs the initialisation of node c.Node(), after x_0 is set.
	Init(c RoundContext) error
	// Step runs round t of node c.Node(): it reads the current rows and
	// writes the next ones of every slab.
	Step(c RoundContext) error
	// Samples returns the samples a node draws in round t (t = 0 is Init,
	// round t ≥ 1 the t-th Step) at the given cost: what its Init and Step
	// count, which lets a budget of samples be turned into rounds.
	Samples(t int, c Cost) int64
}

// Cost is what a round's samples depend on: the minibatch size, the size of
// a large batch (D-GET's S1) and the period of large batches.
type Cost struct {
	Batch, Full, Period int
}

// MixingChecker is a [Method] that cannot use every doubly stochastic W (D²
// needs λ_min(W) > −1/3): the optimizer calls CheckMixing with every W_t
// before the first round that mixes with it, and stops on its error.
type MixingChecker interface {
	CheckMixing(w *Mixing) error
}

// Preparer is a [Method] whose nodes work before the round's messages are
// sent (CHOCO takes its local step and compresses what it sends): the
// optimizer runs Prepare for every node, in parallel, before Share. Prepare
// may write the node's next rows, which Step then reads.
type Preparer interface {
	Prepare(c RoundContext) error
}

// Compressing is a [Method] that sends compressed messages made by
// [RoundContext.Compress] with Config.Compress: the optimizer keeps a
// message per node and counts its encoded length as the bytes sent.
// Methods that do not implement it refuse a compressor.
type Compressing interface {
	Compresses()
}

// StaticOnly is a [Method] that needs the same W every round (CHOCO keeps
// Σ_j W_ij x̂_j): New refuses a time-varying topology for it.
type StaticOnly interface {
	StaticOnly()
}

// Tracker is a [Method] with a tracked direction (GNSD's y, GT-STORM's v):
// Direction is its slab's index in Slabs, what [Optimizer.Direction] returns.
type Tracker interface {
	Direction() int
}

// Momentum is a [Method] that weighs the mixed direction with the schedule's
// β_t, reported by [Optimizer.Beta]; other methods report 0.
type Momentum interface {
	UsesBeta()
}

// methods is the registry: one line per algorithm, in the order the paper
// compares them.
var methods = []Method{
	dsgd{},
	d2{},
	gnsd{},
	dget{},
	gtstorm{},
	choco{},
}

// Algorithms returns the algorithm names in the order the paper compares them.
func Algorithms() []string {
	names := make([]string, len(methods))
	for i, m := range methods {
		names[i] = m.Name()
	}
	return names
}

func newMethod(name string) (Method, error) {
	for _, m := range methods {
		if m.Name() == name {
			return m, nil
		}
	}
	return nil, fmt.Errorf("algorithm %q: want one of %s", name, strings.Join(Algorithms(), ", "))
}

// NeedsStaticGraph reports whether the algorithm named algo needs the same
// W every round (it is a [StaticOnly] method, as CHOCO is); false for an
// unknown name.
func NeedsStaticGraph(algo string) bool {
	m, err := newMethod(algo)
	if err != nil {
		return false
	}
	_, ok := m.(StaticOnly)
	return ok
}

// SamplesAfter returns the samples a node of algo draws in Init and rounds
// 1..rounds at cost c.
func SamplesAfter(algo string, rounds int, c Cost) (int64, error) {
	m, err := newMethod(algo)
	if err != nil {
		return 0, err
	}
	var n int64
	for t := 0; t <= rounds; t++ {
		n += m.Samples(t, c)
	}
	return n, nil
}

// RoundsWithin returns the most rounds whose samples per node, Init's
// included, stay within budget at cost c: how a comparison at an equal
// budget of samples gives each algorithm its rounds. It is 0 when Init alone
// spends more than the budget.
func RoundsWithin(algo string, budget int64, c Cost) (int, error) {
	m, err := newMethod(algo)
	if err != nil {
		return 0, err
	}
	spent := m.Samples(0, c)
	rounds := 0
	for {
		n := m.Samples(rounds+1, c)
		if n <= 0 {
			return 0, fmt.Errorf("%s: round %d draws %d samples at %+v, want > 0", algo, rounds+1, n, c)
		}
		if spent+n > budget {
			return rounds, nil
		}
		spent += n
		rounds++
	}
}

// StateSlabs returns the names of the state slabs a [Snapshot] of algo
// holds, x first.
func StateSlabs(algo string) ([]string, error) {
	m, err := newMethod(algo)
	if err != nil {
		return nil, err
	}
	return m.Slabs(), nil
}

// RoundContext is what a [Method] sees of one node's round (or
// initialisation): its rows of the state slabs, mixing with W_t, its batch,
// gradients, η_t, β_{t+1} and the loss it reports. Its gradient calls count
// samples and evaluations. It is a small value passed to each call; do not
// keep it.
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

// Period returns D-GET's q, the rounds between large-batch gradients.
func (c RoundContext) Period() int { return c.o.cfg.PeriodOrDefault() }

// Beta returns β_{t+1}, the weight this round gives the mixed direction.
func (c RoundContext) Beta() float32 { return c.o.beta32 }

// Cur returns the node's current row of slab k (Slabs()[k]; 0 is x).
func (c RoundContext) Cur(k int) []float32 { return c.o.row(c.o.cur[k], c.i) }

// Next returns the node's next row of slab k, current after the round.
func (c RoundContext) Next(k int) []float32 { return c.o.row(c.o.nxt[k], c.i) }

// Scratch returns the worker's two p-float gradient buffers.
func (c RoundContext) Scratch() (a, b []float32) {
	return c.o.scratch[2*c.w], c.o.scratch[2*c.w+1]
}

// Mix sets dst = Σ_j W_t,ij vec_j, where vec_j is the k-th vector neighbour
// j shared this round and own is the node's.
func (c RoundContext) Mix(dst []float32, k int, own []float32) { c.o.mixRow(dst, c.i, k, own) }

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

// FullGrad evaluates the node's gradient at x on its large batch S1 into
// dst: its whole share, or Config.BigBatch samples drawn from it (the
// [FullBatcher] decides which). It counts S1's samples and one evaluation,
// and uses the worker's Scratch buffers.
func (c RoundContext) FullGrad(x, dst []float32) (float32, error) {
	return c.o.fullGrad(c.w, c.i, x, dst)
}

// Gamma returns CHOCO's consensus step γ (Config.Gamma or DefaultGamma).
func (c RoundContext) Gamma() float32 { return float32(c.o.cfg.GammaOrDefault()) }

// Compressor returns the run's compressor, Config.Compress.
func (c RoundContext) Compressor() compress.Compressor { return c.o.comp }

// Compress encodes v with the run's compressor, seeded by Config.Seed, the
// node and the round, and returns the node's message buffer set to the
// vector the method applies: the decoded message times the compressor's
// Scale. Every neighbour applies the same vector, and it is the buffer
// [RoundContext.Message] returns until the next Compress. The encoded
// message's length is what the node sends each neighbour this round.
func (c RoundContext) Compress(v []float32) ([]float32, error) {
	return c.o.compressRow(c.i, v)
}

// Message returns the node's decoded and scaled message of this round, as
// Compress left it.
func (c RoundContext) Message() []float32 { return c.o.dec[c.i] }

// SetLoss records the loss of the node's last evaluation at its own
// parameters (NaN for none), for [Optimizer.Loss].
func (c RoundContext) SetLoss(l float64) { c.o.rLoss[c.i] = l }

// CheckTopology returns an error naming the first round whose W_t algo
// cannot use (see [MixingChecker]: D² on a graph whose links fail), or nil.
// W_t depends only on the topology and t, so a run of rounds rounds can be
// refused before its first round instead of stopping at round t.
func CheckTopology(algo string, topo Topology, rounds int) error {
	m, err := newMethod(algo)
	if err != nil {
		return err
	}
	c, ok := m.(MixingChecker)
	if !ok {
		return nil
	}
	var last *Mixing
	for t := range rounds {
		mx := topo.Mixing(t)
		if mx == nil {
			return fmt.Errorf("round %d: the topology gave no mixing matrix", t+1)
		}
		if mx == last {
			continue
		}
		if err := c.CheckMixing(mx); err != nil {
			return fmt.Errorf("round %d: %w", t+1, err)
		}
		last = mx
	}
	return nil
}
