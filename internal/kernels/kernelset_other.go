//go:build !amd64 || purego

package kernels

// pickNative returns the pure-Go kernels: there is no assembly for this
// architecture.
func pickNative() *kernelSet { return generic }

func bcastAsm(mr, pv, np, k, nb int, a []float32, aoff, rsa, csa, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32, mask uint64) {
	panic("kernels: no assembly kernels on this architecture")
}

func dotAsm(mr, nr, k, nb int, a []float32, aoff, lda, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32) {
	panic("kernels: no assembly kernels on this architecture")
}
