//go:build !amd64 || purego

package kernels

// Stubs of GroupNorm's AVX2 sums: elementwiseAsm never offers them here.

func gnSums8AVX2(x *float32, stride, n int, s *[gnAsmLanes]float64) {
	panic("kernels: no AVX2 kernels on this architecture")
}

func gnSqSums8AVX2(x *float32, stride, n int, mean, q *[gnAsmLanes]float64) {
	panic("kernels: no AVX2 kernels on this architecture")
}

func gnPlaneSums8AVX2(dy, x *float32, stride, n int, mean, rstd float64, out *[2 * gnAsmLanes]float64) {
	panic("kernels: no AVX2 kernels on this architecture")
}
