package decentral

import (
	"errors"
	"runtime"
)

// ErrDiverged is wrapped by the error Step returns when a node's parameters or
// its tracked direction stop being finite.
var ErrDiverged = errors.New("diverged")

// Config chooses an algorithm and its step sizes.
type Config struct {
	Algorithm string  // a registered Method's name: DSGD, GNSD, GTSTORM, D2, DGET or CHOCO
	Eta0      float64 // initial step size η_0 > 0
	// Rho is GT-STORM's ρ ≥ 0 in β_{t+1} = 1 − ρη_t²; 0 means the paper's
	// default 1/η_0² (β_1 = 0 exactly). A tiny ρ such as 1e-300 gives β = 1.
	Rho float64
	// CubeRoot puts every algorithm with a decaying step on
	// η_t = η_0/(1 + 0.1t)^{1/3} (paper appendix A.1); otherwise DSGD, D²
	// and GNSD use the square root. D-GET's constant step stays constant.
	CubeRoot bool
	// ConstantStep puts every algorithm on η_t = η_0, the setting of
	// constant-step analyses (DSGD's heterogeneity bias is then a fixed
	// distance from the optimum). It overrides CubeRoot.
	ConstantStep bool
	// Workers bounds the goroutines doing node work and the worker ids passed
	// to the Oracle (never more than the nodes); 0 means runtime.GOMAXPROCS(0).
	Workers int
	// Exchange carries the vectors between neighbours; nil means a
	// MemExchange on the mixing matrix's graph.
	Exchange Exchange
	// Topology gives round t's mixing matrix W_t; nil means the matrix
	// passed to New every round. Its matrices must be over New's m nodes.
	Topology Topology
	// Local lists the nodes this optimizer runs, in increasing order: the
	// nodes of one process (a rank) of a run spread over several. Empty
	// means all m. The others' vectors arrive through the Exchange, whose
	// Recv must return them; their rows of the optimizer's slabs are not
	// kept up to date, so measures over every node (Mean, ConsensusError,
	// GradNormSq, Loss, Counters) describe the local nodes only.
	Local []int
	// Period is D-GET's q: a node takes its large-batch gradient every q
	// rounds; 0 means DefaultPeriod.
	Period int
	// BigBatch is the size of D-GET's large batch S1: that many samples
	// drawn from the node's share, or its whole share when 0.
	BigBatch int
	// Compress is the compressor of a method that sends compressed
	// messages (CHOCO): a spec of package compress such as "topk:0.01";
	// empty means "none". Other methods refuse anything but empty or "none".
	Compress string
	// Gamma is CHOCO's consensus step γ in (0, 1]; 0 means DefaultGamma.
	Gamma float64
	// Seed seeds the stochastic compressors (rand-k, QSGD): node i's message
	// of round t is drawn from a stream that depends only on (Seed, i, t).
	Seed uint64
	// Network, if not nil, is the simulated network and compute that
	// [Optimizer.SimSeconds] turns rounds into seconds with. It needs every
	// node in one process (Local empty).
	Network *Network
}

// GammaOrDefault returns Gamma, or DefaultGamma when it is 0.
func (c Config) GammaOrDefault() float64 {
	if c.Gamma != 0 {
		return c.Gamma
	}
	return DefaultGamma
}

// DefaultPeriod is D-GET's default period q.
const DefaultPeriod = 100

// PeriodOrDefault returns Period, or DefaultPeriod when it is 0.
func (c Config) PeriodOrDefault() int {
	if c.Period > 0 {
		return c.Period
	}
	return DefaultPeriod
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
	mth, err := newMethod(c.Algorithm)
	if err != nil {
		return Schedule{}, err
	}
	s := Schedule{Eta0: c.Eta0, Decay: DefaultDecay, Power: mth.Power(), Rho: c.Rho}
	switch {
	case c.ConstantStep:
		s.Power = 0
	case c.CubeRoot && s.Power != 0: // a constant step stays constant
		s.Power = CbrtPower
	}
	if err := s.Validate(); err != nil {
		return Schedule{}, err
	}
	return s, nil
}
