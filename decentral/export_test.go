package decentral

import (
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// The helpers of the internal tests, for the tests of package
// decentral_test, which import package robust (and robust imports this
// package).
var (
	NewLS        = newLS
	NewLSSampler = newLSSampler
	MustGraph    = mustGraph
	MustMixing   = mustMixing
	SameSlabs    = sameSlabs
	LSRunWith    = lsRunWith
)

// RaceEnabled reports whether the tests run under the race detector.
const RaceEnabled = raceEnabled

// LSOracle returns the oracle of the least-squares problem pr.
func LSOracle(pr *lsProblem) Oracle { return lsOracle{pr} }

// LSRun builds and initialises an optimizer on pr (see lsRun).
func LSRun(t testing.TB, cfg Config, mx *graph.Mixing, pr *lsProblem, batch int, seed uint64) *Optimizer {
	t.Helper()
	o, _ := lsRun(t, cfg, mx, pr, batch, seed)
	return o
}

// MixedRows returns what every node's Mix of slab 0 gives in o's next
// round, from rows xs (one per node), without stepping: the round begins
// on a RoundExchange, every node sends its vectors, and each mixes.
func MixedRows(t *testing.T, o *Optimizer, xs [][]float32) [][]float32 {
	t.Helper()
	for i, x := range xs {
		copy(o.row(o.x, i), x)
	}
	if rx, ok := o.ex.(RoundExchange); ok {
		if err := rx.BeginRound(o.round, o.mix, o.desc.Shares()); err != nil {
			t.Fatal(err)
		}
	}
	for i := range o.m {
		o.send[i] = o.share(i, o.send[i][:0])
		if _, err := o.ex.Send(i, o.mix.To(i), o.send[i]); err != nil {
			t.Fatal(err)
		}
	}
	out := make([][]float32, o.m)
	for i := range o.m {
		out[i] = make([]float32, o.p)
		RoundContext{o, 0, i}.Mix(out[i], 0, o.row(o.x, i))
	}
	return out
}
