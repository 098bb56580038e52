package detmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestExpFloat64AsRand(t *testing.T) {
	onFMAAMD64(t)
	for _, tc := range []struct {
		seed [2]uint64
		n    int
	}{
		{[2]uint64{1, 2}, 2000000},
		{[2]uint64{42, 0}, 200000},
		{[2]uint64{0x9e3779b97f4a7c15, 0xdeadbeef}, 200000},
	} {
		ours, theirs := rand.New(rand.NewPCG(tc.seed[0], tc.seed[1])), rand.New(rand.NewPCG(tc.seed[0], tc.seed[1]))
		for i := range tc.n {
			if got, want := ExpFloat64(ours), theirs.ExpFloat64(); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("seed %v, draw %d: ExpFloat64 = %v (%#x), rand gives %v (%#x)", tc.seed, i, got, math.Float64bits(got), want, math.Float64bits(want))
			}
		}
		if ours.Uint64() != theirs.Uint64() {
			t.Fatalf("seed %v: ExpFloat64 consumed a different number of values than rand's", tc.seed)
		}
	}
}
