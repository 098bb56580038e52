//go:build !amd64 || purego

package kernels

// gatherRows2 reports false: there is no vector stride-2 gather here, and
// the caller gathers in Go.
func gatherRows2(ks *kernelSet, dst, src []float32, n, rows, ldd, lds int) bool { return false }
