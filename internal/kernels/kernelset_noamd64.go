//go:build !amd64 || purego

package kernels

// Stubs of the amd64 kernels: available never offers them here.

func bcastAVX512(mr, pv, np, k, nb int, a []float32, aoff, rsa, csa, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32, mask uint64) {
	panic("kernels: no AVX-512 kernels on this architecture")
}

func dotAVX512(mr, nr, k, nb int, a []float32, aoff, lda, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32) {
	panic("kernels: no AVX-512 kernels on this architecture")
}

func bcastAVX2(mr, pv, np, k, nb int, a []float32, aoff, rsa, csa, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32, mask uint64) {
	panic("kernels: no AVX2 kernels on this architecture")
}

func dotAVX2(mr, nr, k, nb int, a []float32, aoff, lda, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32) {
	panic("kernels: no AVX2 kernels on this architecture")
}
