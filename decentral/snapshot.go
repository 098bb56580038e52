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

	X []float32 // m × p, node i at [i·p, (i+1)·p)
	V []float32 // GT-STORM's v or GNSD's y, m × p; nil for DSGD
	G []float32 // GNSD's last gradients, m × p; nil otherwise

	Samples   []int64   // per node
	GradEvals []int64   // per node
	BytesSent []int64   // per node
	Loss      []float64 // per node, of the last evaluation (NaN if none)
}

// State returns a copy of the optimizer's state. It fails before Init or
// Restore.
func (o *Optimizer) State() (*Snapshot, error) {
	if !o.initialized {
		return nil, fmt.Errorf("%s: State before Init or Restore", o.meth.name())
	}
	return &Snapshot{
		Algorithm: o.meth.name(),
		Schedule:  o.sched,
		Nodes:     o.m,
		Dim:       o.p,
		Round:     o.round,
		X:         slices.Clone(o.x),
		V:         slices.Clone(o.v),
		G:         slices.Clone(o.g),
		Samples:   slices.Clone(o.samples),
		GradEvals: slices.Clone(o.evals),
		BytesSent: slices.Clone(o.bytes),
		Loss:      slices.Clone(o.loss),
	}, nil
}

// Restore replaces the optimizer's state by s, in place of Init. It refuses
// a snapshot of another algorithm, schedule or shape.
func (o *Optimizer) Restore(s *Snapshot) error {
	n := o.m * o.p
	want := func(name string, got []float32, need bool) error {
		switch {
		case need && len(got) != n:
			return fmt.Errorf("restore: %s has %d values, want %d × %d = %d", name, len(got), o.m, o.p, n)
		case !need && len(got) != 0:
			return fmt.Errorf("restore: %s has %d values, want none for %s", name, len(got), o.meth.name())
		case !finite(got):
			return fmt.Errorf("restore: %s is not finite", name)
		}
		return nil
	}
	switch {
	case s == nil:
		return fmt.Errorf("restore: no snapshot")
	case s.Algorithm != o.meth.name():
		return fmt.Errorf("restore: snapshot of %q, optimizer runs %q", s.Algorithm, o.meth.name())
	case s.Schedule != o.sched:
		return fmt.Errorf("restore: snapshot schedule %+v, optimizer's is %+v", s.Schedule, o.sched)
	case s.Nodes != o.m || s.Dim != o.p:
		return fmt.Errorf("restore: snapshot of %d nodes × %d parameters, optimizer has %d × %d", s.Nodes, s.Dim, o.m, o.p)
	case s.Round < 0:
		return fmt.Errorf("restore: round %d, want ≥ 0", s.Round)
	case len(s.Samples) != o.m || len(s.GradEvals) != o.m || len(s.BytesSent) != o.m || len(s.Loss) != o.m:
		return fmt.Errorf("restore: per-node counters of lengths %d, %d, %d, %d, want %d",
			len(s.Samples), len(s.GradEvals), len(s.BytesSent), len(s.Loss), o.m)
	}
	if err := want("X", s.X, true); err != nil {
		return err
	}
	if err := want("V", s.V, o.v != nil); err != nil {
		return err
	}
	if err := want("G", s.G, o.g != nil); err != nil {
		return err
	}
	for i, l := range s.Loss {
		if math.IsInf(l, 0) {
			return fmt.Errorf("restore: loss of node %d is infinite", i)
		}
	}
	copy(o.x, s.X)
	copy(o.v, s.V)
	copy(o.g, s.G)
	copy(o.samples, s.Samples)
	copy(o.evals, s.GradEvals)
	copy(o.bytes, s.BytesSent)
	copy(o.loss, s.Loss)
	o.round = s.Round
	o.failed = nil
	o.initialized = true
	return nil
}
