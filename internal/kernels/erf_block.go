package kernels

import (
	"math"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// A blocked detmath.Erf for GELU. Each value gets exactly detmath.Erf's
// operations for its range (|x| < 2⁻²⁸ or NaN, < 0.84375, < 1.25,
// < 1/0.35, < 6, beyond), in its order, on |x|, and the sign of x:
// detmath.Erf is odd bit for bit (its negative branches negate a sum
// whose rounding is symmetric and which is never 0), so the results are
// its bits, and no branch on the data mispredicts.
//
// On the AVX2 sets (erf_amd64.s) every lane runs one rational Horner
// chain with its range's coefficients picked by VPERMD, the steps of four
// with a value from 1.25 take both exponentials through exp64AVX2, and
// each lane selects its range's result by masks. In Go the
// values of a block are sorted by range into index lists without a
// branch, each list is evaluated by a loop with its range's operations
// only, and the exponentials of the two upper ranges are gathered for
// exp64s.

// The coefficients of detmath.Erf (from FreeBSD's s_erf.c, as Go's
// math/erf.go has them).
const (
	erfSmall = 1.0 / (1 << 28)            // 2**-28
	erfErx   = 8.45062911510467529297e-01 // 0x3FEB0AC160000000

	erfPp0 = 1.28379167095512558561e-01  // 0x3FC06EBA8214DB68
	erfPp1 = -3.25042107247001499370e-01 // 0xBFD4CD7D691CB913
	erfPp2 = -2.84817495755985104766e-02 // 0xBF9D2A51DBD7194F
	erfPp3 = -5.77027029648944159157e-03 // 0xBF77A291236668E4
	erfPp4 = -2.37630166566501626084e-05 // 0xBEF8EAD6120016AC
	erfQq1 = 3.97917223959155352819e-01  // 0x3FD97779CDDADC09
	erfQq2 = 6.50222499887672944485e-02  // 0x3FB0A54C5536CEBA
	erfQq3 = 5.08130628187576562776e-03  // 0x3F74D022C4D36B0F
	erfQq4 = 1.32494738004321644526e-04  // 0x3F215DC9221C1A10
	erfQq5 = -3.96022827877536812320e-06 // 0xBED09C4342A26120

	erfPa0 = -2.36211856075265944077e-03 // 0xBF6359B8BEF77538
	erfPa1 = 4.14856118683748331666e-01  // 0x3FDA8D00AD92B34D
	erfPa2 = -3.72207876035701323847e-01 // 0xBFD7D240FBB8C3F1
	erfPa3 = 3.18346619901161753674e-01  // 0x3FD45FCA805120E4
	erfPa4 = -1.10894694282396677476e-01 // 0xBFBC63983D3E28EC
	erfPa5 = 3.54783043256182359371e-02  // 0x3FA22A36599795EB
	erfPa6 = -2.16637559486879084300e-03 // 0xBF61BF380A96073F
	erfQa1 = 1.06420880400844228286e-01  // 0x3FBB3E6618EEE323
	erfQa2 = 5.40397917702171048937e-01  // 0x3FE14AF092EB6F33
	erfQa3 = 7.18286544141962662868e-02  // 0x3FB2635CD99FE9A7
	erfQa4 = 1.26171219808761642112e-01  // 0x3FC02660E763351F
	erfQa5 = 1.36370839120290507362e-02  // 0x3F8BEDC26B51DD1C
	erfQa6 = 1.19844998467991074170e-02  // 0x3F888B545735151D

	erfRa0 = -9.86494403484714822705e-03 // 0xBF843412600D6435
	erfRa1 = -6.93858572707181764372e-01 // 0xBFE63416E4BA7360
	erfRa2 = -1.05586262253232909814e+01 // 0xC0251E0441B0E726
	erfRa3 = -6.23753324503260060396e+01 // 0xC04F300AE4CBA38D
	erfRa4 = -1.62396669462573470355e+02 // 0xC0644CB184282266
	erfRa5 = -1.84605092906711035994e+02 // 0xC067135CEBCCABB2
	erfRa6 = -8.12874355063065934246e+01 // 0xC054526557E4D2F2
	erfRa7 = -9.81432934416914548592e+00 // 0xC023A0EFC69AC25C
	erfSa1 = 1.96512716674392571292e+01  // 0x4033A6B9BD707687
	erfSa2 = 1.37657754143519042600e+02  // 0x4061350C526AE721
	erfSa3 = 4.34565877475229228821e+02  // 0x407B290DD58A1A71
	erfSa4 = 6.45387271733267880336e+02  // 0x40842B1921EC2868
	erfSa5 = 4.29008140027567833386e+02  // 0x407AD02157700314
	erfSa6 = 1.08635005541779435134e+02  // 0x405B28A3EE48AE2C
	erfSa7 = 6.57024977031928170135e+00  // 0x401A47EF8E484A93
	erfSa8 = -6.04244152148580987438e-02 // 0xBFAEEFF2EE749A62

	erfRb0 = -9.86494292470009928597e-03 // 0xBF84341239E86F4A
	erfRb1 = -7.99283237680523006574e-01 // 0xBFE993BA70C285DE
	erfRb2 = -1.77579549177547519889e+01 // 0xC031C209555F995A
	erfRb3 = -1.60636384855821916062e+02 // 0xC064145D43C5ED98
	erfRb4 = -6.37566443368389627722e+02 // 0xC083EC881375F228
	erfRb5 = -1.02509513161107724954e+03 // 0xC09004616A2E5992
	erfRb6 = -4.83519191608651397019e+02 // 0xC07E384E9BDC383F
	erfSb1 = 3.03380607434824582924e+01  // 0x403E568B261D5190
	erfSb2 = 3.25792512996573918826e+02  // 0x40745CAE221B9F0A
	erfSb3 = 1.53672958608443695994e+03  // 0x409802EB189D5118
	erfSb4 = 3.19985821950859553908e+03  // 0x40A8FFB7688C246A
	erfSb5 = 2.55305040643316442583e+03  // 0x40A3F219CEDF3BE6
	erfSb6 = 4.74528541206955367215e+02  // 0x407DA874E79FE763
	erfSb7 = -2.24409524465858183362e+01 // 0xC03670E242712D62
)

// erfRanges is the number of index lists erfs sorts a block into.
const erfRanges = 6

// erfs sets dst[i] = detmath.Erf(src[i]) for a block of at most expBlock
// values, with its bits on every kernel set. dst and src may be the same
// slice.
func erfs(ks *kernelSet, dst, src []float64) {
	dst = dst[:len(src)]
	if len(src) > expBlock {
		panic("kernels: erfs block too long")
	}
	if elementwiseAsm(ks) {
		erfsAVX2(dst, src)
		return
	}
	// ranges[c][:n[c]] are the indices of the values in range c: 0 for
	// |x| < 2⁻²⁸ and NaN (detmath.Erf itself), 1 for |x| < 0.84375, 2 for
	// < 1.25, 3 for < 1/0.35, 4 for < 6, 5 for the rest (±1).
	// The six counts are 9-bit fields of one register, cnt: n[c] in
	// memory would make each store wait on the last one of its range.
	var ranges [erfRanges][expBlock]uint8
	var cnt uint64
	for j, v := range src {
		a := math.Abs(v)
		c := bit(a >= erfSmall) + bit(a >= 0.84375) + bit(a >= 1.25) + bit(a >= 1/0.35) + bit(a >= 6)
		sh := 9 * c & 63
		ranges[c%erfRanges][cnt>>sh&(expBlock-1)] = uint8(j)
		cnt += 1 << sh
	}
	var n [erfRanges]int
	for c := range n {
		n[c] = int(cnt >> (9 * c) & 511)
	}
	for _, j := range ranges[0][:n[0]] {
		dst[j] = detmath.Erf(src[j])
	}
	for _, j := range ranges[1][:n[1]] {
		v := src[j]
		x := math.Abs(v)
		z := x * x
		r := erfPp0 + float64(z*(erfPp1+float64(z*(erfPp2+float64(z*(erfPp3+float64(z*erfPp4)))))))
		s := 1 + float64(z*(erfQq1+float64(z*(erfQq2+float64(z*(erfQq3+float64(z*(erfQq4+float64(z*erfQq5)))))))))
		y := r / s
		dst[j] = math.Copysign(x+float64(x*y), v)
	}
	for _, j := range ranges[2][:n[2]] {
		v := src[j]
		s := math.Abs(v) - 1
		p := erfPa0 + float64(s*(erfPa1+float64(s*(erfPa2+float64(s*(erfPa3+float64(s*(erfPa4+float64(s*(erfPa5+float64(s*erfPa6)))))))))))
		q := 1 + float64(s*(erfQa1+float64(s*(erfQa2+float64(s*(erfQa3+float64(s*(erfQa4+float64(s*(erfQa5+float64(s*erfQa6)))))))))))
		dst[j] = math.Copysign(erfErx+p/q, v)
	}
	// The two upper ranges: e^(−z² − 0.5625) and e^((z − x)(z + x) + r/q)
	// side by side in e, for one exp64s call; at[k] is the value's index.
	var e [2 * expBlock]float64
	var at [expBlock]uint8
	k := 0
	for _, j := range ranges[3][:n[3]] {
		x := math.Abs(src[j])
		s := 1 / (x * x)
		r := erfRa0 + float64(s*(erfRa1+float64(s*(erfRa2+float64(s*(erfRa3+float64(s*(erfRa4+float64(s*(erfRa5+float64(s*(erfRa6+float64(s*erfRa7)))))))))))))
		q := 1 + float64(s*(erfSa1+float64(s*(erfSa2+float64(s*(erfSa3+float64(s*(erfSa4+float64(s*(erfSa5+float64(s*(erfSa6+float64(s*(erfSa7+float64(s*erfSa8)))))))))))))))
		erfExpArgs(e[2*k:2*k+2], x, r/q)
		at[k] = j
		k++
	}
	for _, j := range ranges[4][:n[4]] {
		x := math.Abs(src[j])
		s := 1 / (x * x)
		r := erfRb0 + float64(s*(erfRb1+float64(s*(erfRb2+float64(s*(erfRb3+float64(s*(erfRb4+float64(s*(erfRb5+float64(s*erfRb6)))))))))))
		q := 1 + float64(s*(erfSb1+float64(s*(erfSb2+float64(s*(erfSb3+float64(s*(erfSb4+float64(s*(erfSb5+float64(s*(erfSb6+float64(s*erfSb7)))))))))))))
		erfExpArgs(e[2*k:2*k+2], x, r/q)
		at[k] = j
		k++
	}
	exp64s(ks, e[:2*k], e[:2*k])
	for i, j := range at[:k] {
		v := src[j]
		p := e[2*i] * e[2*i+1]
		dst[j] = math.Copysign(1-p/math.Abs(v), v)
	}
	for _, j := range ranges[5][:n[5]] {
		dst[j] = math.Copysign(1, src[j])
	}
}

// erfsAVX2 is erfs through erfPrepAVX2, exp64AVX2 and erfDoneAVX2 (the
// steps of four with a value from 1.25 take both exponentials in every
// lane, the others none); the values they leave (|x| < 2⁻²⁸, NaN) and the
// last len%4 call detmath.Erf.
func erfsAVX2(dst, src []float64) {
	var w [expBlock]float64
	var e [2 * expBlock]float64
	var own [expBlock / 4]uint8
	n := len(src) &^ 3
	if n > 0 {
		if m := erfPrepAVX2(&w[0], &e[0], &src[0], n); m > 0 {
			exp64AVX2(&e[0], &e[0], m)
		}
		erfDoneAVX2(&dst[0], &src[0], &w[0], &e[0], n, &own[0])
	}
	for g, m := range own[:n/4] {
		if m != 15 {
			for l := range 4 {
				if m>>l&1 == 0 {
					dst[4*g+l] = detmath.Erf(dst[4*g+l])
				}
			}
		}
	}
	for j := n; j < len(src); j++ {
		dst[j] = detmath.Erf(src[j])
	}
}

// erfExpArgs sets e to detmath.Erf's two exponent arguments for x ≥ 1.25
// and its rational approximation y = r/q: −z² − 0.5625 and
// (z − x)(z + x) + y, z being x with its low 32 bits cleared.
func erfExpArgs(e []float64, x, y float64) {
	z := math.Float64frombits(math.Float64bits(x) & 0xffffffff00000000)
	e[0] = float64(-float64(z*z)) - 0.5625
	e[1] = float64((z-x)*(z+x)) + y
}
