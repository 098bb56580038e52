//go:build !amd64 || purego

package kernels

// Stubs of the AVX2 clamp kernels: elementwiseAsm never offers them here.

func clampAVX2(y, x *float32, n int, lo, hi float32) {
	panic("kernels: no AVX2 kernels on this architecture")
}

func clampBackAVX2(dx, dy, x *float32, n int, lo, hi float32) {
	panic("kernels: no AVX2 kernels on this architecture")
}
