package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestGroupNormReLUSameBits checks, on every kernel set, that the fused
// GroupNormReLU and its backward pass give the bits of GroupNorm, ReLU,
// ReLUBackward and GroupNormBackward run one after the other, with and
// without an input gradient, with special values among the inputs and the
// gradients, on shapes that do and do not fill the vector lanes and on a
// layer wider than gnMaxC.
func TestGroupNormReLUSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(95, 96))
	shapes := append([]GroupNormShape{
		{N: 3, C: 16, HW: 37, Groups: 2}, {N: 2, C: 12, HW: 8, Groups: 2}, {N: 5, C: 6, HW: 13, Groups: 1},
		{N: 2, C: 300, HW: 5, Groups: 3}, {N: 9, C: 16, HW: 64, Groups: 2}, {N: 2, C: 8, HW: 1, Groups: 8},
	}, groupNormShapes...)
	for _, ks := range kernelSets() {
		for _, s := range shapes {
			what := fmt.Sprintf("%s %+v", ks.name, s)
			x, gamma, beta, dy := specialInput(rng, s.In()), randSlice(rng, s.C), randSlice(rng, s.C), specialInput(rng, s.In())
			// the two-kernel forms
			z, y0, stats0 := make([]float32, s.In()), make([]float32, s.In()), make([]float64, s.Stats())
			groupNormSet(ks, z, stats0, x, gamma, beta, s)
			reluSet(ks, y0, z)
			dz, dx0 := make([]float32, s.In()), make([]float32, s.In())
			dg0, db0 := make([]float32, s.C), make([]float32, s.C)
			reluBackwardSet(ks, dz, dy, y0)
			groupNormBackwardSet(ks, dx0, dg0, db0, dz, x, gamma, stats0, s)

			y, stats := specialInput(rng, s.In()), make([]float64, s.Stats())
			groupNormReLUSet(ks, y, stats, x, gamma, beta, s, true)
			sameFloats(t, what+" y", y, y0)
			for i := range stats0 {
				if math.Float64bits(stats[i]) != math.Float64bits(stats0[i]) {
					t.Fatalf("%s: stats[%d] = %v, want %v", what, i, stats[i], stats0[i])
				}
			}
			dx, dg, db := specialInput(rng, s.In()), make([]float32, s.C), make([]float32, s.C)
			// with dx, no scratch is needed
			groupNormReLUBackwardSet(ks, dx, dg, db, dy, x, gamma, stats, s, reluMask{y: y})
			sameFloats(t, what+" dx without scratch", dx, dx0)
			dx = specialInput(rng, s.In())
			r := reluMask{y: y, scratch: specialInput(rng, GroupNormReLUScratch(s))}
			groupNormReLUBackwardSet(ks, dx, dg, db, dy, x, gamma, stats, s, r)
			sameFloats(t, what+" dx", dx, dx0)
			sameFloats(t, what+" dgamma", dg, dg0)
			sameFloats(t, what+" dbeta", db, db0)
			clear(dg)
			clear(db)
			groupNormReLUBackwardSet(ks, nil, dg, db, dy, x, gamma, stats, s, r)
			sameFloats(t, what+" dgamma without dx", dg, dg0)
			sameFloats(t, what+" dbeta without dx", db, db0)
		}
	}
}

// TestGroupNormReLUChecksScratch checks that the backward pass without an
// input gradient refuses scratch too short for one image group.
func TestGroupNormReLUChecksScratch(t *testing.T) {
	s := GroupNormShape{N: 2, C: 4, HW: 9, Groups: 2}
	if got, want := GroupNormReLUScratch(s), 18; got != want {
		t.Fatalf("GroupNormReLUScratch = %d, want %d", got, want)
	}
	defer func() {
		if recover() == nil {
			t.Error("scratch of 17 values accepted")
		}
	}()
	n := s.In()
	GroupNormReLUBackward(nil, make([]float32, 4), make([]float32, 4), make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, 4), make([]float64, s.Stats()), s, make([]float32, 17))
}
