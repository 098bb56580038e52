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

func im2colAsm(cols, x []float32, s ConvShape, tbl []int32) {
	panic("kernels: no assembly kernels on this architecture")
}

func col2imAsm(dx, cols []float32, s ConvShape) {
	panic("kernels: no assembly kernels on this architecture")
}

func maxpoolAsm(y []float32, code []uint8, x []float32, s PoolShape, bias []float32, lo float32) {
	panic("kernels: no assembly kernels on this architecture")
}

func maxpoolBackAsm(dx, dy, y []float32, code []uint8, s PoolShape, sums []float64) {
	panic("kernels: no assembly kernels on this architecture")
}

func transposeAsm(dst []float32, ldd int, src []float32, lds, bm, bn int) {
	panic("kernels: no assembly kernels on this architecture")
}

func maxpoolAVX2(y []float32, code []uint8, x []float32, s PoolShape, bias []float32, lo float32) {
	panic("kernels: no assembly kernels on this architecture")
}

func maxpoolBackAVX2(dx, dy, y []float32, code []uint8, s PoolShape, sums []float64) {
	panic("kernels: no assembly kernels on this architecture")
}

func im2colAVX2(cols, x []float32, s ConvShape) {
	panic("kernels: no assembly kernels on this architecture")
}

func col2imAVX2(dx, cols []float32, s ConvShape) {
	panic("kernels: no assembly kernels on this architecture")
}

func transposeAVX2(dst []float32, ldd int, src []float32, lds, bm, bn int) {
	panic("kernels: no assembly kernels on this architecture")
}
