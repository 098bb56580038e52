//go:build !arm64 || purego

package kernels

// Stub of the arm64 kernels: available never offers them here.

func bcastNEON(mr, pv, np, k, nb int, a []float32, aoff, rsa, csa, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32) {
	panic("kernels: no NEON kernels on this architecture")
}
