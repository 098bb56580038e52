//go:build amd64 && !purego

package kernels

import "golang.org/x/sys/cpu"

// pickNative returns the AVX-512 kernels when the CPU and OS support
// AVX-512 F, BW and VL, and the pure-Go kernels otherwise.
func pickNative() *kernelSet {
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL {
		return &kernelSet{name: "avx512", asm: true, maxMR: maxMR512}
	}
	return generic
}

func bcastAsm(mr, pv, np, k, nb int, a []float32, aoff, rsa, csa, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32, mask uint64) {
	bcast512(mr, pv, k, nb, &a[aoff], rsa, csa, sta, &b[boff], ldb, stb, &c[coff], ldc, alpha, beta, mask, np)
}

func dotAsm(mr, nr, k, nb int, a []float32, aoff, lda, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32) {
	dot512(mr, nr, k/16, nb, &a[aoff], lda, sta, &b[boff], ldb, stb, &c[coff], ldc, alpha, beta, laneMask(k%16))
}
