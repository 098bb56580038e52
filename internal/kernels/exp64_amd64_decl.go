//go:build amd64 && !purego

package kernels

// exp64AVX2 sets dst[i] = detmath.Exp(src[i]) for i < n (exp64_amd64.s);
// n is a multiple of 4.
//
//go:noescape
func exp64AVX2(dst, src *float64, n int)
