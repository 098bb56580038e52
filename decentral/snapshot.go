package decentral

import (
	"fmt"
	"math"
	"slices"
)

// Snapshot is an optimizer's complete state as plain data, for a checkpoint:
// restoring it into an optimizer with the same configuration, mixing matrix,
// sampler state and oracle continues the run bit for bit. The samplers'
// random states are not part of it.
type Snapshot struct {
	Algorithm string
	Schedule  Schedule
	Nodes     int // m
	Dim       int // p
	Round     int

	// Slabs is the algorithm's state, one m × p slab per name of its
	// Method.Slabs, in that order (x first); node i at [i·p, (i+1)·p).
	Slabs []Slab

	Samples   []int64   // per node
	GradEvals []int64   // per node
	BytesSent []int64   // per node
	Loss      []float64 // per node, of the last evaluation (NaN if none)
	// SimTime is the simulated clock T_i per node (Config.Network), nil for
	// a run without one.
	SimTime []float64
}

// Slab is one named m × p state slab of a [Snapshot].
type Slab struct {
	Name string
	Data []float32
}

// Slab returns the data of the slab called name, or nil.
func (s *Snapshot) Slab(name string) []float32 {
	for _, sl := range s.Slabs {
		if sl.Name == name {
			return sl.Data
		}
	}
	return nil
}

// Validate checks s on its own: a known algorithm, a valid schedule, a
// positive shape, the algorithm's slabs in its order with m × p values each,
// and m non-negative counters of each kind. [Optimizer.Restore] and package
// weights both use it.
func (s *Snapshot) Validate() error {
	names, err := StateSlabs(s.Algorithm)
	if err != nil {
		return fmt.Errorf("unknown algorithm %q (want one of %v)", s.Algorithm, Algorithms())
	}
	if err := s.Schedule.Validate(); err != nil {
		return err
	}
	switch {
	case s.Nodes < 1:
		return fmt.Errorf("%d nodes, want ≥ 1", s.Nodes)
	case s.Dim < 1:
		return fmt.Errorf("dimension %d, want ≥ 1", s.Dim)
	case s.Nodes > math.MaxInt/s.Dim:
		return fmt.Errorf("%d nodes × %d parameters overflows", s.Nodes, s.Dim)
	case s.Round < 0:
		return fmt.Errorf("round %d, want ≥ 0", s.Round)
	}
	if got := slabNames(s.Slabs); !slices.Equal(got, names) {
		return fmt.Errorf("slabs %q, want %q for %s", got, names, s.Algorithm)
	}
	n := s.Nodes * s.Dim
	for _, sl := range s.Slabs {
		if len(sl.Data) != n {
			return fmt.Errorf("slab %q has %d values, want %d nodes × %d = %d", sl.Name, len(sl.Data), s.Nodes, s.Dim, n)
		}
	}
	for _, c := range []struct {
		name string
		v    []int64
	}{{"Samples", s.Samples}, {"GradEvals", s.GradEvals}, {"BytesSent", s.BytesSent}} {
		if len(c.v) != s.Nodes {
			return fmt.Errorf("%s has %d values, want one per node (%d)", c.name, len(c.v), s.Nodes)
		}
		for i, x := range c.v {
			if x < 0 {
				return fmt.Errorf("%s of node %d is %d, want ≥ 0", c.name, i, x)
			}
		}
	}
	if len(s.Loss) != s.Nodes {
		return fmt.Errorf("Loss has %d values, want one per node (%d)", len(s.Loss), s.Nodes)
	}
	if s.SimTime != nil && len(s.SimTime) != s.Nodes {
		return fmt.Errorf("SimTime has %d values, want one per node (%d) or none", len(s.SimTime), s.Nodes)
	}
	for i, v := range s.SimTime {
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("SimTime of node %d is %v, want a finite time ≥ 0", i, v)
		}
	}
	return nil
}

func slabNames(sl []Slab) []string {
	names := make([]string, len(sl))
	for i, s := range sl {
		names[i] = s.Name
	}
	return names
}

// State returns a copy of the optimizer's state. It fails before Init or
// Restore.
func (o *Optimizer) State() (*Snapshot, error) {
	if !o.initialized {
		return nil, fmt.Errorf("%s: State before Init or Restore", o.desc.Name)
	}
	s := &Snapshot{
		Algorithm: o.desc.Name,
		Schedule:  o.sched,
		Nodes:     o.m,
		Dim:       o.p,
		Round:     o.round,
		Samples:   slices.Clone(o.samples),
		GradEvals: slices.Clone(o.evals),
		BytesSent: slices.Clone(o.bytes),
		Loss:      slices.Clone(o.loss),
		SimTime:   slices.Clone(o.simT),
	}
	for k, name := range o.desc.Slabs {
		s.Slabs = append(s.Slabs, Slab{name, slices.Clone(o.cur[k])})
	}
	return s, nil
}

// sameAs reports whether a snapshot's schedule s is the optimizer's o. A
// checkpoint file (package weights) stores the paper's parameters only: a
// snapshot without a Shape, Rounds and Warmup matches on those, and the
// run's recorded settings (config.json) carry the rest.
func (s Schedule) sameAs(o Schedule) bool {
	if s.Shape == "" && s.Rounds == 0 && s.Warmup == 0 {
		o.Shape, o.Rounds, o.Warmup = "", 0, 0
	}
	return s == o
}

// Restore replaces the optimizer's state by s, in place of Init. It refuses
// a snapshot of another algorithm, schedule or shape.
func (o *Optimizer) Restore(s *Snapshot) error {
	switch {
	case s == nil:
		return fmt.Errorf("restore: no snapshot")
	case s.Algorithm != o.desc.Name:
		return fmt.Errorf("restore: snapshot of %q, optimizer runs %q", s.Algorithm, o.desc.Name)
	case !s.Schedule.sameAs(o.sched):
		return fmt.Errorf("restore: snapshot schedule %+v, optimizer's is %+v", s.Schedule, o.sched)
	case s.Nodes != o.m || s.Dim != o.p:
		return fmt.Errorf("restore: snapshot of %d nodes × %d parameters, optimizer has %d × %d", s.Nodes, s.Dim, o.m, o.p)
	}
	if err := s.Validate(); err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	switch {
	case o.simT != nil && s.SimTime == nil:
		return fmt.Errorf("restore: the snapshot has no simulated clock and the optimizer simulates a network")
	case o.simT == nil && s.SimTime != nil:
		return fmt.Errorf("restore: the snapshot has a simulated clock and the optimizer simulates no network")
	}
	for _, sl := range s.Slabs {
		if !finite(sl.Data) {
			return fmt.Errorf("restore: slab %q is not finite", sl.Name)
		}
	}
	for i, l := range s.Loss {
		if math.IsInf(l, 0) {
			return fmt.Errorf("restore: loss of node %d is infinite", i)
		}
	}
	for k, sl := range s.Slabs {
		copy(o.cur[k], sl.Data)
	}
	copy(o.samples, s.Samples)
	copy(o.evals, s.GradEvals)
	copy(o.bytes, s.BytesSent)
	copy(o.loss, s.Loss)
	copy(o.simT, s.SimTime)
	o.round = s.Round
	o.failed = nil
	o.pipe.restart() // a restored round begins afresh
	o.initialized = true
	return nil
}
