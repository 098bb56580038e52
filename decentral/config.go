package decentral

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
)

// Algorithm names accepted in Config.Algorithm.
const (
	DSGD    = "dsgd"
	GNSD    = "gnsd"
	GTSTORM = "gt-storm"
)

// Algorithms returns the algorithm names in the order the paper compares them.
func Algorithms() []string { return []string{DSGD, GNSD, GTSTORM} }

// ErrDiverged is wrapped by the error Step returns when a node's parameters or
// its tracked direction stop being finite.
var ErrDiverged = errors.New("diverged")

// Config chooses an algorithm and its step sizes.
type Config struct {
	Algorithm string  // DSGD, GNSD or GTSTORM
	Eta0      float64 // initial step size η_0 > 0
	// Rho is GT-STORM's ρ ≥ 0 in β_{t+1} = 1 − ρη_t²; 0 means the paper's
	// default 1/η_0² (β_1 = 0 exactly). A tiny ρ such as 1e-300 gives β = 1.
	Rho float64
	// CubeRoot puts all algorithms on η_t = η_0/(1 + 0.1t)^{1/3} (paper
	// appendix A.1); otherwise DSGD and GNSD use the square root.
	CubeRoot bool
	// Workers bounds the goroutines doing node work and the worker ids passed
	// to the Oracle (never more than the nodes); 0 means runtime.GOMAXPROCS(0).
	Workers int
	// Exchange carries the vectors between neighbours; nil means a
	// MemExchange on the mixing matrix's graph.
	Exchange Exchange
}

// WorkerCount returns the number of goroutines an optimizer of m nodes runs
// node work on, min(Workers or GOMAXPROCS, m): its Oracle sees worker ids
// 0..WorkerCount(m)−1.
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
	s := Schedule{Eta0: c.Eta0, Decay: DefaultDecay, Power: mth.power(), Rho: c.Rho}
	if c.CubeRoot {
		s.Power = CbrtPower
	}
	if err := s.Validate(); err != nil {
		return Schedule{}, err
	}
	return s, nil
}

// method is one algorithm's update rule over the Optimizer's state. Its
// per-node functions run concurrently for distinct nodes and must touch only
// that node's rows of the state slabs and worker w's scratch.
type method interface {
	name() string
	power() float64            // default step-size exponent
	alloc(o *Optimizer)        // allocate the state slabs beyond x and xNext
	stateFloats(p int) int     // floats of state per node beyond the model
	shares() int               // vectors sent to each neighbour per round
	share(o *Optimizer, i int) // fill o.send[i] with node i's vectors
	initNode(o *Optimizer, w, i int) error
	stepNode(o *Optimizer, w, i int) error
	commit(o *Optimizer) // swap the slabs after a successful round
}

func newMethod(name string) (method, error) {
	switch name {
	case DSGD:
		return dsgd{}, nil
	case GNSD:
		return gnsd{}, nil
	case GTSTORM:
		return gtstorm{}, nil
	}
	return nil, fmt.Errorf("algorithm %q: want one of %s", name, strings.Join(Algorithms(), ", "))
}
