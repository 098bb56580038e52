//go:build !amd64 || purego

package kernels

// Stubs: elementwiseAsm never offers the AVX2 kernels here.

func log1pAVX2(dst, src *float64, n int, own *uint8) {
	panic("kernels: no AVX2 kernels on this architecture")
}

func erfPrepAVX2(w, e, src *float64, n int) int {
	panic("kernels: no AVX2 kernels on this architecture")
}

func erfDoneAVX2(dst, src, w, e *float64, n int, own *uint8) {
	panic("kernels: no AVX2 kernels on this architecture")
}
