//go:build !arm64 || purego

package kernels

// Stubs of the arm64 kernels: available never offers them here.

func bcastNEON(mr, pv, np, k, nb int, a []float32, aoff, rsa, csa, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32) {
	panic("kernels: no NEON kernels on this architecture")
}

func dotNEON(mr, nr, k, nb int, a []float32, aoff, lda, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32) {
	panic("kernels: no NEON kernels on this architecture")
}

func maxpoolNEON(y []float32, code []uint8, x []float32, s PoolShape, bias []float32, lo float32) {
	panic("kernels: no NEON kernels on this architecture")
}

func maxpoolBackNEON(dx, dy, y []float32, code []uint8, s PoolShape, sums []float64) {
	panic("kernels: no NEON kernels on this architecture")
}

func im2colNEON(cols, x []float32, s ConvShape) {
	panic("kernels: no NEON kernels on this architecture")
}

func col2imNEON(dx, cols []float32, s ConvShape) {
	panic("kernels: no NEON kernels on this architecture")
}

func transposeNEON(dst []float32, ldd int, src []float32, lds, bm, bn int) {
	panic("kernels: no NEON kernels on this architecture")
}
