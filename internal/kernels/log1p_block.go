package kernels

import (
	"math"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// A blocked detmath.Log1p for Softplus: every value of a block runs the
// operations of each of detmath.Log1p's ranges it could be in (|x| <
// 2⁻⁵⁴: x; |x| < 2⁻²⁹: x − x²/2; |x| < √2 − 1: k = 0 and f = x; else
// through u = 1 + x, normalised by its exponent k, with a correction c)
// in detmath.Log1p's order, and its range's result is selected by bits:
// no branch on the data, whose ranges a Softplus (eˣ below and above
// √2 − 1) would mispredict. On the AVX2 sets (log1p_amd64.s) four lanes
// a YMM, the short form where u's normalised mantissa is 0 (|f| < 2⁻²⁰,
// as where 1 + x is a power of 2) included; in Go the mantissa-0 values
// are listed and call detmath.Log1p. The
// values detmath.Log1p takes elsewhere (x ≤ √2/2 − 1, x ≥ 2⁵³, ±Inf,
// NaN), none of Softplus's, call detmath.Log1p.

const (
	log1pSqrt2M1     = 4.142135623730950488017e-01  // Sqrt(2)-1 = 0x3fda827999fcef34
	log1pSqrt2HalfM1 = -2.928932188134524755992e-01 // Sqrt(2)/2-1 = 0xbfd2bec333018866
	log1pSmall       = 1.0 / (1 << 29)              // 2**-29 = 0x3e20000000000000
	log1pTiny        = 1.0 / (1 << 54)              // 2**-54
	log1pTwo53       = 1 << 53                      // 2**53
	log1pLn2Hi       = 6.93147180369123816490e-01   // 3fe62e42fee00000
	log1pLn2Lo       = 1.90821492927058770002e-10   // 3dea39ef35793c76
)

// detmath.Log1p's polynomial coefficients Lp1 … Lp7.
const (
	log1pLp1 = 6.666666666666735130e-01 // 3FE5555555555593
	log1pLp2 = 3.999999999940941908e-01 // 3FD999999997FA04
	log1pLp3 = 2.857142874366239149e-01 // 3FD2492494229359
	log1pLp4 = 2.222219843214978396e-01 // 3FCC71C51D8E78AF
	log1pLp5 = 1.818357216161805012e-01 // 3FC7466496CB03DE
	log1pLp6 = 1.531383769920937332e-01 // 3FC39A09D078C69F
	log1pLp7 = 1.479819860511658591e-01 // 3FC2F112DF3E5244
)

// log1ps sets dst[i] = detmath.Log1p(src[i]) for a block of at most
// expBlock values, with its bits on every kernel set. dst and src may be
// the same slice.
func log1ps(ks *kernelSet, dst, src []float64) {
	dst = dst[:len(src)]
	if len(src) > expBlock {
		panic("kernels: log1ps block too long")
	}
	if elementwiseAsm(ks) {
		log1psAVX2(dst, src)
		return
	}
	var ff, ss, kk, cc [expBlock]float64
	// fix[:nf] are the indices detmath.Log1p takes, fixX[:nf] their x,
	// kept for when dst is src; every index is written to fix, the count
	// advanced for those only.
	var fix [expBlock]uint8
	var fixX [expBlock]float64
	nf := 0
	for j, x := range src {
		// Through u = 1 + x (x ≥ √2 − 1).
		u := 1.0 + x
		iu := math.Float64bits(u)
		// k = the exponent e − 1023 as a float64, exactly, from the bits:
		// (2⁵² + e) − (2⁵² + 1023). CVTSQ2SD would merge into its
		// register's last value, a false dependency serialising the loop.
		k := math.Float64frombits(0x4330000000000000|iu>>52) - (0x1p52 + 1023)
		// The correction term: 1 − (u − x) for k > 0, else x − (u − 1).
		c := pick64(k > 0, 1.0-(u-x), x-(u-1.0))
		c /= u
		iu &= 0x000fffffffffffff
		// Below √2's mantissa u is normalised to [1, 2), else to [½, 1)
		// with k + 1 and iu = (2⁵² − iu)/4.
		lo := iu < 0x0006a09e667f3bcd
		k = pick64(lo, k, k+1)
		u = math.Float64frombits(iu | pickU64(lo, 0x3ff0000000000000, 0x3fe0000000000000))
		iu = pickU64(lo, iu, (0x0010000000000000-iu)>>2)
		// |x| < √2 − 1 (and x > √2/2 − 1): k = 0 and f = x.
		k0 := math.Abs(x) < log1pSqrt2M1
		f := pick64(k0, x, u-1.0)
		k = pick64(k0, 0, k)
		own := x > log1pSqrt2HalfM1 && x < log1pTwo53
		fix[nf], fixX[nf] = uint8(j), x
		nf += int(bit(!own) | bit(!k0)&bit(iu == 0))
		s := f / (2.0 + f)
		ff[j], ss[j], kk[j], cc[j] = f, s, k, c
	}
	for j, x := range src {
		f, s, k, c := ff[j], ss[j], kk[j], cc[j]
		hfsq := float64(0.5 * f * f)
		z := float64(s * s)
		R := float64(z * log1pLp7)
		R = float64(z * (log1pLp6 + R))
		R = float64(z * (log1pLp5 + R))
		R = float64(z * (log1pLp4 + R))
		R = float64(z * (log1pLp3 + R))
		R = float64(z * (log1pLp2 + R))
		R = float64(z * (log1pLp1 + R))
		r := pick64(k == 0, f-(hfsq-float64(s*(hfsq+R))),
			float64(k*log1pLn2Hi)-((hfsq-(float64(s*(hfsq+R))+(float64(k*log1pLn2Lo)+c)))-f))
		a := math.Abs(x)
		small := pick64(a < log1pTiny, x, x-float64(x*x*0.5))
		dst[j] = pick64(a < log1pSmall, small, r)
	}
	for i, j := range fix[:nf] {
		dst[j] = detmath.Log1p(fixX[i])
	}
}

// log1psAVX2 is log1ps through log1pAVX2; the values it leaves (x ≤
// √2/2 − 1, x ≥ 2⁵³, ±Inf, NaN: none of Softplus's) call detmath.Log1p.
func log1psAVX2(dst, src []float64) {
	var own [expBlock / 4]uint8
	n := len(src) &^ 3
	if n > 0 {
		log1pAVX2(&dst[0], &src[0], n, &own[0])
	}
	for g, m := range own[:n/4] {
		if m != 15 {
			for l := range 4 {
				if m>>l&1 == 0 {
					dst[4*g+l] = detmath.Log1p(dst[4*g+l])
				}
			}
		}
	}
	for j := n; j < len(src); j++ {
		dst[j] = detmath.Log1p(src[j])
	}
}

// pick64 is a if c, else b, by bits.
func pick64(c bool, a, b float64) float64 {
	return math.Float64frombits(pickU64(c, math.Float64bits(a), math.Float64bits(b)))
}

// pickU64 is a if c, else b, by bits.
func pickU64(c bool, a, b uint64) uint64 {
	m := -uint64(bit(c))
	return a&m | b&^m
}
