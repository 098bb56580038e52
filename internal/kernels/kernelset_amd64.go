//go:build amd64 && !purego

package kernels

import (
	"math/bits"

	"golang.org/x/sys/cpu"
)

var (
	avx512Set = &kernelSet{name: "avx512", isa: isaAVX512, maxMR: maxMR512[:], dotMR: 4, dotNR: 6, lanes: 16}
	avx2Set   = &kernelSet{name: "avx2", isa: isaAVX2, maxMR: maxMR256, dotMR: dotMR256, dotNR: dotNR256, lanes: 8}
)

// available returns the sets this CPU and OS support, fastest first:
// AVX-512 (F, BW and VL), AVX2 with FMA, and pure Go.
func available() []*kernelSet {
	var sets []*kernelSet
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL {
		sets = append(sets, avx512Set)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		sets = append(sets, avx2Set)
	}
	return append(sets, generic)
}

func bcastAVX512(mr, pv, np, k, nb int, a []float32, aoff, rsa, csa, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32, mask uint64) {
	bcast512(mr, pv, k, nb, &a[aoff], rsa, csa, sta, &b[boff], ldb, stb, &c[coff], ldc, alpha, beta, mask, np)
}

func dotAVX512(mr, nr, k, nb int, a []float32, aoff, lda, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32) {
	dot512(mr, nr, k/16, nb, &a[aoff], lda, sta, &b[boff], ldb, stb, &c[coff], ldc, alpha, beta, laneMask(k%16))
}

// laneMasks is 32 all-ones words and then 32 zeros: the 8-lane masks of
// the AVX2 kernels (VMASKMOVPS), n live lanes from &laneMasks[32-n].
var laneMasks = func() (t [64]int32) {
	for l := range 32 {
		t[l] = -1
	}
	return t
}()

// bcastAVX2 runs the AVX2 broadcast kernel; a partial panel (mask short of
// 16·pv lanes) gets the masks of its live lanes.
func bcastAVX2(mr, pv, np, k, nb int, a []float32, aoff, rsa, csa, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32, mask uint64) {
	var masks *int32
	if n := bits.Len64(mask); n < 16*pv {
		masks = &laneMasks[32-n]
	}
	bcast256(mr, pv, k, nb, &a[aoff], rsa, csa, sta, &b[boff], ldb, stb, &c[coff], ldc, alpha, beta, masks, np)
}

// dotAVX2 runs the AVX2 dot kernel, with the masks of the k % 16 tail.
func dotAVX2(mr, nr, k, nb int, a []float32, aoff, lda, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32) {
	var tmask *int32
	if t := k % 16; t > 0 {
		tmask = &laneMasks[32-t]
	}
	dot256(mr, nr, k/16, nb, &a[aoff], lda, sta, &b[boff], ldb, stb, &c[coff], ldc, alpha, beta, tmask)
}
