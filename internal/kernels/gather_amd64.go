//go:build amd64 && !purego

package kernels

//go:noescape
func gather2AVX2(dst, src *float32, n, rows, ldd, lds int, mask *int32)

//go:noescape
func gather2x4AVX2(dst, src *float32, n, rows, ldd, lds int, mask *int32)

// gatherRows2 sets dst[r·ldd + k] = src[r·lds + 2k] for k < n and r < rows
// with the AVX2 kernels where ks has them and n ≥ 4, and reports whether
// it did.
func gatherRows2(ks *kernelSet, dst, src []float32, n, rows, ldd, lds int) bool {
	if !elementwiseAsm(ks) || n < 4 || rows < 1 {
		return false
	}
	_ = dst[(rows-1)*ldd+n-1]
	_ = src[(rows-1)*lds+2*(n-1)]
	if n < 8 {
		gather2x4AVX2(&dst[0], &src[0], n, rows, ldd, lds, &laneMasks[32-3])
		return true
	}
	gather2AVX2(&dst[0], &src[0], n, rows, ldd, lds, &laneMasks[32-7])
	return true
}
