package graph

// Topology gives each round's mixing matrix W_t: a time-varying graph
// returns a different [Mixing] per round, a static one the same every round
// (at no cost beyond a method call). All of a topology's matrices are over
// the same m nodes.
type Topology interface {
	// Mixing returns W_t, the matrix round t mixes with.
	Mixing(t int) *Mixing
}

// Static is the [Topology] whose every round mixes with the same matrix.
type Static struct{ W *Mixing }

// Mixing returns s.W for every round.
func (s Static) Mixing(int) *Mixing { return s.W }
