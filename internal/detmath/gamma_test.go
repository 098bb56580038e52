package detmath

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// gammaAlphas are shapes on both sides of Gamma's switches: below and at
// the small-shape threshold 0.2, below 1 (the Pow boost), 1 (exponential),
// and above, up to where d·v is nearly constant.
var gammaAlphas = []float64{0.05, 0.1, 0.19, 0.2, 0.5, 0.99, 1, 1.5, 3, 10, 1e3, 1e10}

func TestGammaAsGonum(t *testing.T) {
	onFMAAMD64(t)
	for k, alpha := range gammaAlphas {
		seed := [2]uint64{uint64(k) + 1, 0x5eed}
		// gonum v0.17.0's distuv uses math/rand/v2: Rand() wraps Src in a
		// fresh rand.New each call, so the state lives in the source.
		src := rand.NewPCG(seed[0], seed[1])
		g := distuv.Gamma{Alpha: alpha, Beta: 1, Src: src}
		ours := rand.New(rand.NewPCG(seed[0], seed[1]))
		for i := range 200000 {
			if got, want := Gamma(ours, alpha), g.Rand(); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("alpha %v, draw %d: Gamma = %v (%#x), gonum gives %v (%#x)", alpha, i, got, math.Float64bits(got), want, math.Float64bits(want))
			}
		}
		if ours.Uint64() != src.Uint64() {
			t.Fatalf("alpha %v: Gamma consumed a different number of values than gonum's", alpha)
		}
	}
}

func TestGammaPanics(t *testing.T) {
	for _, alpha := range []float64{0, math.Copysign(0, -1), -1, math.Inf(-1), math.NaN()} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Gamma(r, %v) did not panic", alpha)
				}
			}()
			Gamma(rand.New(rand.NewPCG(1, 2)), alpha)
		}()
	}
}
