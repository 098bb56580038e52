package kernels

import (
	"math/rand/v2"
	"testing"
)

func TestTranspose(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, ks := range kernelSets() {
		for _, sh := range [][2]int{{16, 16}, {32, 64}, {16, 576}, {400, 32}, {25, 16}, {17, 33}, {1, 40}, {40, 1}, {0, 5}, {48, 15}} {
			rows, cols := sh[0], sh[1]
			lds, ldd := cols+rng.IntN(3), rows+rng.IntN(3)
			src := randSlice(rng, extent(rows, cols, lds, 1, 0))
			dst := randSlice(rng, extent(cols, rows, ldd, 1, 0)+4)
			keep := append([]float32(nil), dst...)
			transpose(ks, dst, ldd, src, lds, rows, cols)
			for j := range cols {
				for i := range ldd {
					o := j*ldd + i
					if o >= len(dst) {
						break
					}
					want := keep[o] // padding untouched
					if i < rows {
						want = src[i*lds+j]
					}
					if dst[o] != want {
						t.Fatalf("%s %d×%d lds=%d ldd=%d: dst[%d][%d] = %g, want %g", ks.name, rows, cols, lds, ldd, j, i, dst[o], want)
					}
				}
			}
			for o := extent(cols, rows, ldd, 1, 0); o < len(dst); o++ {
				if dst[o] != keep[o] {
					t.Fatalf("%s %d×%d: wrote past the output at %d", ks.name, rows, cols, o)
				}
			}
		}
	}
}
