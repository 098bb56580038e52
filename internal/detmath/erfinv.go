package detmath

import "math"

// Ported from Go's math/erfinv.go (BSD licence): the rational
// approximation of percentage points of the normal distribution of
// Wichura's AS241 (https://www.jstor.org/stable/2347330). Log is this
// package's (math.Log is assembly on amd64), and every product that meets
// an addition is converted, float64(a*b), so that no architecture fuses it.

// Coefficients for approximation to erf in |x| <= 0.85
var erfinvA = [...]float64{
	1.1975323115670912564578e0,
	4.7072688112383978012285e1,
	6.9706266534389598238465e2,
	4.8548868893843886794648e3,
	1.6235862515167575384252e4,
	2.3782041382114385731252e4,
	1.1819493347062294404278e4,
	8.8709406962545514830200e2,
}

var erfinvB = [...]float64{
	1.0000000000000000000e0,
	4.2313330701600911252e1,
	6.8718700749205790830e2,
	5.3941960214247511077e3,
	2.1213794301586595867e4,
	3.9307895800092710610e4,
	2.8729085735721942674e4,
	5.2264952788528545610e3,
}

// Coefficients for approximation to erf in 0.85 < |x| <= 1-2*exp(-25)
var erfinvC = [...]float64{
	1.42343711074968357734e0,
	4.63033784615654529590e0,
	5.76949722146069140550e0,
	3.64784832476320460504e0,
	1.27045825245236838258e0,
	2.41780725177450611770e-1,
	2.27238449892691845833e-2,
	7.74545014278341407640e-4,
}

var erfinvD = [...]float64{
	1.4142135623730950488016887e0,
	2.9036514445419946173133295e0,
	2.3707661626024532365971225e0,
	9.7547832001787427186894837e-1,
	2.0945065210512749128288442e-1,
	2.1494160384252876777097297e-2,
	7.7441459065157709165577218e-4,
	1.4859850019840355905497876e-9,
}

// Coefficients for approximation to erf in 1-2*exp(-25) < |x| < 1
var erfinvE = [...]float64{
	6.65790464350110377720e0,
	5.46378491116411436990e0,
	1.78482653991729133580e0,
	2.96560571828504891230e-1,
	2.65321895265761230930e-2,
	1.24266094738807843860e-3,
	2.71155556874348757815e-5,
	2.01033439929228813265e-7,
}

var erfinvF = [...]float64{
	1.414213562373095048801689e0,
	8.482908416595164588112026e-1,
	1.936480946950659106176712e-1,
	2.103693768272068968719679e-2,
	1.112800997078859844711555e-3,
	2.611088405080593625138020e-5,
	2.010321207683943062279931e-7,
	2.891024605872965461538222e-15,
}

// Erfinv returns the inverse error function of x: a port of Go's pure-Go
// math.Erfinv, with the same bits as math.Erfinv on amd64, on every
// architecture.
func Erfinv(x float64) float64 {
	// special cases
	if math.IsNaN(x) || x <= -1 || x >= 1 {
		if x == -1 || x == 1 {
			return math.Inf(int(x))
		}
		return math.NaN()
	}

	sign := false
	if x < 0 {
		x = -x
		sign = true
	}

	var ans float64
	if x <= 0.85 { // |x| <= 0.85
		r := 0.180625 - float64(0.25*x*x)
		z1 := erfinvPoly(&erfinvA, r)
		z2 := erfinvPoly(&erfinvB, r)
		ans = (x * z1) / z2
	} else {
		var z1, z2 float64
		r := math.Sqrt(math.Ln2 - Log(1.0-x))
		if r <= 5.0 {
			r -= 1.6
			z1 = erfinvPoly(&erfinvC, r)
			z2 = erfinvPoly(&erfinvD, r)
		} else {
			r -= 5.0
			z1 = erfinvPoly(&erfinvE, r)
			z2 = erfinvPoly(&erfinvF, r)
		}
		ans = z1 / z2
	}

	if sign {
		return -ans
	}
	return ans
}

// erfinvPoly returns ((((((c[7]*r+c[6])*r+c[5])*r+c[4])*r+c[3])*r+c[2])*r+c[1])*r + c[0].
func erfinvPoly(c *[8]float64, r float64) float64 {
	p := c[7]
	for i := 6; i >= 0; i-- {
		p = float64(p*r) + c[i]
	}
	return p
}
