package kernels

import (
	"math/rand/v2"
	"testing"
)

// TestSgemmParallelDeterministic checks that SgemmParallel gives bit-for-bit
// Sgemm's result for every worker count, on row and column splits and every
// operand layout.
func TestSgemmParallelDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	shapes := [][3]int{{130, 70, 150}, {6, 4000, 75}, {400, 64, 64}, {33, 1000, 40}}
	for _, ks := range kernelSets() {
		for _, sh := range shapes {
			m, n, k := sh[0], sh[1], sh[2]
			for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
				lda, ldb := k, n
				if tr[0] {
					lda = m
				}
				if tr[1] {
					ldb = k
				}
				a, b := randSlice(rng, m*k), randSlice(rng, k*n)
				c0 := randSlice(rng, m*n)
				want := append([]float32(nil), c0...)
				sgemm(ks, 0, tr[0], tr[1], m, n, k, 1, 0.5, a, lda, 0, b, ldb, 0, 0.25, want, n)
				for _, workers := range []int{1, 2, 3, 4} {
					got := append([]float32(nil), c0...)
					sgemmParallel(ks, workers, tr[0], tr[1], m, n, k, 0.5, a, lda, b, ldb, 0.25, got, n)
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("%s %d×%d×%d trans=%v workers=%d: C[%d] = %g, serial %g", ks.name, m, n, k, tr, workers, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}
