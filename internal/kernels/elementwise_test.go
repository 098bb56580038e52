package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestElementwiseSameBits checks ReLU, its gradient and Add of every
// vector set bit for bit against the pure-Go loops, with NaN, ±0 and ±∞,
// on lengths that are and are not multiples of the vector steps, in place
// and not.
func TestElementwiseSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	for _, ks := range sameBitsSets() {
		for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 40, 63, 64, 100, 1029} {
			x, y, dy := specialInput(rng, n), specialInput(rng, n), specialInput(rng, n)
			if n > 2 {
				x[1], y[2] = float32(math.Inf(1)), float32(math.Inf(-1))
			}
			what := fmt.Sprintf("%s n=%d", ks.name, n)
			got, want := make([]float32, n), make([]float32, n)
			reluSet(ks, got, x)
			reluSet(generic, want, x)
			sameFloats(t, what+" ReLU", got, want)
			reluBackwardSet(ks, got, dy, y)
			reluBackwardSet(generic, want, dy, y)
			sameFloats(t, what+" ReLUBackward", got, want)
			addSet(ks, got, x, dy)
			addSet(generic, want, x, dy)
			sameFloats(t, what+" Add", got, want)
			// In place: y = relu(y), dy = relu'(dy), x = x + dy.
			in := append([]float32(nil), x...)
			reluSet(ks, in, in)
			reluSet(generic, want, x)
			sameFloats(t, what+" ReLU in place", in, want)
			in = append(in[:0], dy...)
			reluBackwardSet(ks, in, in, y)
			reluBackwardSet(generic, want, dy, y)
			sameFloats(t, what+" ReLUBackward in place", in, want)
			in = append(in[:0], x...)
			addSet(ks, in, in, dy)
			addSet(generic, want, x, dy)
			sameFloats(t, what+" Add in place", in, want)
		}
	}
	// The pure-Go ReLU is max(x, 0) but for NaN's sign.
	for _, v := range []float32{-1, float32(math.Copysign(0, -1)), 0, 2, float32(math.Inf(-1))} {
		got := []float32{0}
		reluSet(generic, got, []float32{v})
		if math.Float32bits(got[0]) != math.Float32bits(max(v, 0)) {
			t.Errorf("ReLU(%g) = %g, want %g", v, got[0], max(v, 0))
		}
	}
}
