package detmath

import (
	"math"
	"math/rand/v2"
	"testing"
)

// powPairs returns n pairs (x, y) uniform over [xlo, xhi] × [ylo, yhi],
// with y rounded to an integer when integral is set.
func powPairs(n int, seed uint64, xlo, xhi, ylo, yhi float64, integral bool) [][2]float64 {
	r := rand.New(rand.NewPCG(seed, 11))
	ps := make([][2]float64, n)
	for i := range ps {
		x := xlo + float64(r.Float64()*(xhi-xlo))
		y := ylo + float64(r.Float64()*(yhi-ylo))
		if integral {
			y = math.Round(y)
		}
		ps[i] = [2]float64{x, y}
	}
	return ps
}

// powSpecialYs are exponents at Pow's special cases and branch edges.
var powSpecialYs = []float64{
	0, math.Copysign(0, -1), 1, -1, 2, -2, 3, -3, 0.5, -0.5, 0.25, 1.5, -1.5, 0.3, -1.7,
	math.Inf(1), math.Inf(-1), math.NaN(), 1 << 52, 1<<53 + 2, 1 << 63, -(1 << 63),
	math.Nextafter(1<<63, 0), 1075, -1075, 0x1p-1074, math.MaxFloat64, -math.MaxFloat64,
	math.Nextafter(0.5, 1), math.Nextafter(0.5, 0),
}

// powCases are the (x, y) pairs for the tests: every special against
// every special exponent, then random pairs across the domain.
func powCases(n int) []struct {
	name  string
	pairs [][2]float64
} {
	var specialPairs [][2]float64
	for _, x := range append(specials, 3, -3, 0.3, -0.3, 1e300, -1e300, 1e-300) {
		for _, y := range powSpecialYs {
			specialPairs = append(specialPairs, [2]float64{x, y})
		}
	}
	var bitPairs [][2]float64
	xs, ys := bitInputs(n, 5), bitInputs(n, 6)
	for i := range xs {
		bitPairs = append(bitPairs, [2]float64{xs[i], ys[i]})
	}
	return []struct {
		name  string
		pairs [][2]float64
	}{
		{"specials", specialPairs},
		{"bits", bitPairs},
		{"x>0, y real", powPairs(n, 1, 0, 10, -50, 50, false)},
		{"x>0 wide, y small", powPairs(n, 2, 0, 1e6, -3, 3, false)},
		{"x near 1, y large", powPairs(n, 3, 0.99, 1.01, -1e5, 1e5, false)},
		{"x<0, y integer", powPairs(n, 4, -10, 0, -60, 60, true)},
		{"x<0, y real", powPairs(n/4, 5, -10, 0, -5, 5, false)},
		{"x any, y huge integer", powPairs(n/4, 6, -2, 2, -1e18, 1e18, true)},
		{"x tiny, y integer", powPairs(n/4, 7, -1e-300, 1e-300, -3, 3, true)},
	}
}

func TestPowAsMath(t *testing.T) {
	onFMAAMD64(t)
	for _, tc := range powCases(100000) {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range tc.pairs {
				x, y := p[0], p[1]
				if x != 0 && math.Abs(x) < 0x1p-1022 && !math.IsInf(y, 0) && y != math.Trunc(y) {
					// x**frac(y) goes through Log(x), and amd64's
					// assembly math.Log is wrong for subnormal x
					// (golang/go#56600); Log is right there.
					continue
				}
				got, want := Pow(x, y), math.Pow(x, y)
				if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
					t.Fatalf("Pow(%v, %v) = %v (%#x), math gives %v (%#x)", x, y, got, math.Float64bits(got), want, math.Float64bits(want))
				}
			}
		})
	}
}
