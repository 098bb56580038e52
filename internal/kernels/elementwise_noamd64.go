//go:build !amd64 || purego

package kernels

// Stubs of the AVX2 elementwise kernels: elementwiseAsm never offers them
// here.

func reluAVX2(y, x *float32, n int) { panic("kernels: no AVX2 kernels on this architecture") }

func reluBackAVX2(dx, dy, y *float32, n int) {
	panic("kernels: no AVX2 kernels on this architecture")
}

func addAVX2(y, a, b *float32, n int) { panic("kernels: no AVX2 kernels on this architecture") }

func elementwiseAsm(ks *kernelSet) bool { return false }

func gnApplyAVX2(y, x *float32, n int, mean, rstd float64, scale, shift float32) {
	panic("kernels: no AVX2 kernels on this architecture")
}

func gnInputGradAVX2(dx, dy, x *float32, n int, mean, rstd, gam, m1, m2 float64) {
	panic("kernels: no AVX2 kernels on this architecture")
}
