package detmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestNormFloat64AsRand(t *testing.T) {
	onFMAAMD64(t)
	for _, seed := range [][2]uint64{{1, 2}, {42, 0}, {0x9e3779b97f4a7c15, 0xdeadbeef}} {
		ours, theirs := rand.New(rand.NewPCG(seed[0], seed[1])), rand.New(rand.NewPCG(seed[0], seed[1]))
		n := 2000000
		if seed != [2]uint64{1, 2} {
			n = 200000
		}
		for i := range n {
			if got, want := NormFloat64(ours), theirs.NormFloat64(); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("seed %v, draw %d: NormFloat64 = %v (%#x), rand gives %v (%#x)", seed, i, got, math.Float64bits(got), want, math.Float64bits(want))
			}
		}
		if ours.Uint64() != theirs.Uint64() {
			t.Fatalf("seed %v: NormFloat64 consumed a different number of values than rand's", seed)
		}
	}
}
