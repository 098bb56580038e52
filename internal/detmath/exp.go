package detmath

import "math"

// The reduction and series of Go's amd64 Exp (exp_amd64.s, its FMA path;
// after Shibata's SLEEF), as constants.
const (
	expLog2e    = 1.4426950408889634073599246810018920                  // 1/ln 2
	expLn2Hi    = 0.69314718055966295651160180568695068359375           // upper half of ln 2
	expLn2Lo    = 0.28235290563031577122588448175013436025525412068e-12 // lower half
	expOverflow = 7.09782712893384e+02
)

// expSeries are the Taylor coefficients 1/9! … 1/3!, then 1/2, 1, the
// Horner order of exp_amd64.s.
var expSeries = [...]float64{
	2.4801587301587301587e-5,
	1.9841269841269841270e-4,
	1.3888888888888888889e-3,
	8.3333333333333333333e-3,
	4.1666666666666666667e-2,
	1.6666666666666666667e-1,
	0.5,
	1.0,
}

// Exp returns e**x with the bits of math.Exp on an amd64 CPU with FMA, on
// every architecture.
func Exp(x float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case math.IsInf(x, -1):
		return 0
	case x > expOverflow:
		return math.Inf(1)
	}
	// k = round-to-nearest-even(x·log₂e), as CVTSD2SL does; out of int32's
	// range it gives the integer indefinite, −2³¹, which underflows below.
	t := math.RoundToEven(float64(x * expLog2e))
	bx := int64(math.MinInt32)
	if t >= math.MinInt32 && t <= math.MaxInt32 {
		bx = int64(t)
	}
	k := float64(bx)
	r := math.FMA(-k, expLn2Hi, x)
	r = math.FMA(-k, expLn2Lo, r)
	r = float64(r * 0.0625)
	p := expSeries[0]
	for _, c := range expSeries[1:] {
		p = math.FMA(p, r, c)
	}
	// e^r = (1 + s)^16 with s = r·p: four squarings of 1 + s, kept as s.
	s := float64(r * p)
	for range 3 {
		s = float64(s * (s + 2))
	}
	s = math.FMA(s, s+2, 1)
	return ldexpAMD64(s, bx)
}

// ldexpAMD64 returns fr·2^k as exp_amd64.s's epilogue does (its rounding
// of results that fall in the subnormal range included).
func ldexpAMD64(fr float64, k int64) float64 {
	k += 0x3ff
	if k >= 0x7ff {
		return math.Inf(1)
	}
	if k <= 0 {
		if k < -52 {
			return 0
		}
		fr = float64(fr * math.Float64frombits(uint64(k+0x3fe)<<52))
		k = 1
	}
	return float64(fr * math.Float64frombits(uint64(k)<<52))
}
