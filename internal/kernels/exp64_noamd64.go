//go:build !amd64 || purego

package kernels

// exp64AVX2 is a stub: elementwiseAsm never offers it here.
func exp64AVX2(dst, src *float64, n int) {
	panic("kernels: no AVX2 kernels on this architecture")
}
