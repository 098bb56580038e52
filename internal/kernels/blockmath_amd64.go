//go:build amd64 && !purego

package kernels

// Go declarations of the AVX2 kernels of erfs and log1ps.

// log1pAVX2 sets dst[i] = detmath.Log1p(src[i]) for i < n (log1p_amd64.s)
// where √2/2 − 1 < src[i] < 2⁵³, and dst[i] = src[i] elsewhere; own[i/4]
// has bit i%4 set for the former. n is a multiple of 4.
//
//go:noescape
func log1pAVX2(dst, src *float64, n int, own *uint8)

// erfPrepAVX2 is erfs' first pass (erf_amd64.s): w[i] gets detmath.Erf's
// result for |src[i]| below 1.25; each step of four with a value from
// 1.25 puts its eight exponent arguments in e. It returns how many it put;
// n is a multiple of 4.
//
//go:noescape
func erfPrepAVX2(w, e, src *float64, n int) int

// erfDoneAVX2 is erfs' second pass (erf_amd64.s), given w and e
// exponentiated: dst[i] = detmath.Erf(src[i]) where 2⁻²⁸ ≤ |src[i]|, and
// own[i/4] bit i%4 set; dst[i] = src[i] elsewhere. n is a multiple of 4.
//
//go:noescape
func erfDoneAVX2(dst, src, w, e *float64, n int, own *uint8)
