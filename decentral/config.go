package decentral

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// ErrDiverged is wrapped by the error Step returns when a node's parameters or
// its tracked direction stop being finite.
var ErrDiverged = errors.New("diverged")

// Config chooses a method, its step sizes and how the run is spread.
type Config struct {
	// Method is the algorithm with its knobs, such as DGETMethod{Period: 10}
	// or CHOCOMethod{Compress: "topk:0.01"}. When nil, Algorithm names a
	// registered method, which runs with its default knobs.
	Method Method
	// Algorithm is a registered method's name: DSGD, GNSD, GTSTORM, D2,
	// DGET or CHOCO. With Method set it must be empty or Method's name.
	Algorithm string
	// StepSizes chooses the step sizes η_t and GT-STORM's β_t, which
	// Schedule turns into the [Schedule] the optimizer computes, reports
	// and saves in a Snapshot.
	StepSizes
	// Rounds is the run's round count T, which a cosine or step schedule
	// and a warm-up's bound read; 0 when the schedule is the paper's.
	Rounds int
	// WeightDecay λ ≥ 0 adds λx to every stochastic gradient at the point
	// x it is evaluated (GT-STORM's two gradients and D-GET's large batches
	// included); 0 keeps the gradients as the oracle gives them.
	WeightDecay float64
	// Workers bounds the goroutines doing node work and the worker ids passed
	// to the Oracle (never more than the nodes); 0 means runtime.GOMAXPROCS(0).
	Workers int
	// Exchange carries the vectors between neighbours; nil means a
	// MemExchange on the mixing matrix's graph.
	Exchange Exchange
	// Topology gives round t's mixing matrix W_t; nil means the matrix
	// passed to New every round. Its matrices must be over New's m nodes.
	Topology graph.Topology
	// Local lists the nodes this optimizer runs, in increasing order: the
	// nodes of one process (a rank) of a run spread over several. Empty
	// means all m. The others' vectors arrive through the Exchange, whose
	// Recv must return them; their rows of the optimizer's slabs are not
	// kept up to date, so measures over every node (Mean, ConsensusError,
	// GradNormSq, Loss, Counters) describe the local nodes only.
	Local []int
	// Seed seeds the stochastic compressors (rand-k, QSGD): node i's message
	// of round t is drawn from a stream that depends only on (Seed, i, t).
	Seed uint64
	// Byzantine lists the nodes that lie, distinct and in increasing order,
	// fewer than m. The measures (Mean, ConsensusError, Loss, GradNormSq's
	// x̄) count the other, honest nodes only. The optimizer makes no node
	// lie: package [github.com/gtstorm/gtstorm/decentral/robust] sets
	// Byzantine with the Mixer and the Exchange that make its attacks and
	// rules (robust.Apply), or the batch source gives the Byzantine nodes
	// poisoned data.
	Byzantine []int
	// Mixer combines what a node receives for every slab its method mixes
	// ([RoundContext.Mix]); nil is plain gossip Σ_j W_ij v_j. A method that
	// sends compressed messages (CHOCO) takes none, nor an Exchange that
	// reads the shared vectors ([ViewingExchange]).
	Mixer Mixer
	// Network, if not nil, is the simulated network and compute that
	// [Optimizer.SimSeconds] turns rounds into seconds with. It needs every
	// node in one process (Local empty).
	Network *Network
}

// method returns the configured method: Method, or the registered one
// Algorithm names.
func (c Config) method() (Method, error) {
	if c.Method == nil {
		return NewMethod(c.Algorithm, nil)
	}
	if name := c.Method.Describe().Name; c.Algorithm != "" && c.Algorithm != name {
		return nil, fmt.Errorf("algorithm %q, but the method is %s", c.Algorithm, name)
	}
	return c.Method, nil
}

// WorkerCount returns the number of goroutines an optimizer running m
// nodes does node work on, min(Workers or GOMAXPROCS, m): its Oracle sees
// worker ids 0..WorkerCount(m)−1.
func (c Config) WorkerCount(m int) int {
	n := c.Workers
	if n == 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return min(n, m)
}

// Schedule returns the step-size and β schedule the configuration selects.
func (c Config) Schedule() (Schedule, error) {
	mth, err := c.method()
	if err != nil {
		return Schedule{}, err
	}
	return c.schedule(mth.Describe())
}

// schedule returns the schedule of the method described by d.
func (c Config) schedule(d Description) (Schedule, error) {
	shape, constant, err := ParseSchedule(c.StepSchedule)
	if err != nil {
		return Schedule{}, err
	}
	s := Schedule{Eta0: c.Eta0, Decay: DefaultDecay, Power: d.Power, Rho: c.Rho, Shape: shape, Warmup: c.Warmup}
	if shape != "" || c.Warmup > 0 {
		s.Rounds = c.Rounds
	}
	switch {
	case c.ConstantStep || constant:
		s.Power = 0
	case c.CubeRoot && s.Power != 0: // a constant step stays constant
		s.Power = CbrtPower
	}
	if err := s.Validate(); err != nil {
		return Schedule{}, err
	}
	return s, nil
}
