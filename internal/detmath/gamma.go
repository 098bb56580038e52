package detmath

import (
	"math"
	"math/rand/v2"
)

// Ported from gonum's stat/distuv/gamma.go, (Gamma).Rand, v0.17.0 (BSD licence, Copyright ©2016 The Gonum Authors).
// It draws through r.Float64 and this package's ExpFloat64 and
// NormFloat64 where gonum uses its rand.Rand's, calls this package's Exp,
// Log, Log1p and Pow where gonum calls math's, and converts every product
// that meets an addition or subtraction (directly, through a variable, or
// in a caller, for the draw returned), float64(a*b), so that no
// architecture fuses it.

// gammaSmallAlpha is the shape below which Gamma uses Liu, Martin and
// Syring's method instead of Marsaglia and Tsang's (gonum's threshold,
// from https://arxiv.org/abs/1302.1884).
const gammaSmallAlpha = 0.2

// Gamma returns a draw from the Gamma distribution of shape alpha and rate
// 1 (mean alpha): a port of gonum's distuv.Gamma{Alpha: alpha, Beta: 1,
// Src: src}.Rand() that, for r built on the same source state as src,
// consumes the same values and returns the same bits as gonum on amd64
// with FMA, on every architecture. The rate is always 1 (gonum divides by
// Beta, which is exact for Beta = 1); for rate β divide the draw by β.
//
// Gamma panics if alpha <= 0 (or is NaN), as gonum does.
func Gamma(r *rand.Rand, alpha float64) float64 {
	a := alpha
	switch {
	case a <= 0:
		panic("gamma: alpha <= 0")
	case a == 1:
		// Generate from exponential.
		return ExpFloat64(r)
	case a < gammaSmallAlpha:
		// Liu, Chuanhai, Martin, Ryan and Syring, Nick. "Simulating from a
		// gamma distribution with small shape parameter",
		// https://arxiv.org/abs/1302.1884 (Statistics and Computing,
		// http://link.springer.com/article/10.1007/s00180-016-0692-0),
		// in log space as much as possible.
		lambda := 1/a - 1
		lr := -Log1p(1 / lambda / math.E)
		for {
			e := ExpFloat64(r)
			var z float64
			if e >= -lr {
				z = e + lr
			} else {
				z = -ExpFloat64(r) / lambda
			}
			eza := Exp(-z / a)
			lh := -z - eza
			var lEta float64
			if z >= 0 {
				lEta = -z
			} else {
				lEta = -1 + float64(lambda*z)
			}
			if lh-lEta > -ExpFloat64(r) {
				return eza
			}
		}
	case a >= gammaSmallAlpha:
		// Marsaglia, George, and Wai Wan Tsang. "A simple method for
		// generating gamma variables." ACM Transactions on Mathematical
		// Software (TOMS) 26.3 (2000): 363-372.
		d := a - 1.0/3
		m := 1.0
		if a < 1 {
			d += 1.0
			m = Pow(r.Float64(), 1/a)
		}
		c := 1 / (3 * math.Sqrt(d))
		for {
			x := NormFloat64(r)
			v := 1 + float64(x*c)
			if v <= 0.0 {
				continue
			}
			v = float64(v * v * v)
			u := r.Float64()
			if u < 1.0-float64(0.0331*(x*x)*(x*x)) {
				return float64(m * d * v)
			}
			if Log(u) < float64(0.5*x*x)+float64(d*(1-v+Log(v))) {
				return float64(m * d * v)
			}
		}
	}
	panic("unreachable") // alpha is NaN: gonum panics here too
}
