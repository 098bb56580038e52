package detmath

import "math"

// Ported from Go's math/cbrt.go (BSD licence), itself from FreeBSD's
// s_cbrt.c (Copyright (C) 1993 by Sun Microsystems, Inc.; "Permission to
// use, copy, modify, and distribute this software is freely granted,
// provided that this notice is preserved."). Every product that meets an
// addition is converted, float64(a*b), so that no architecture fuses it.

// Cbrt returns the cube root of x: a port of Go's pure-Go math.Cbrt, with
// the same bits as math.Cbrt on amd64, on every architecture.
func Cbrt(x float64) float64 {
	const (
		b1             = 715094163                   // (682-0.03306235651)*2**20
		b2             = 696219795                   // (664-0.03306235651)*2**20
		c              = 5.42857142857142815906e-01  // 19/35     = 0x3FE15F15F15F15F1
		d              = -7.05306122448979611050e-01 // -864/1225 = 0xBFE691DE2532C834
		e              = 1.41428571428571436819e+00  // 99/70     = 0x3FF6A0EA0EA0EA0F
		f              = 1.60714285714285720630e+00  // 45/28     = 0x3FF9B6DB6DB6DB6E
		g              = 3.57142857142857150787e-01  // 5/14      = 0x3FD6DB6DB6DB6DB7
		smallestNormal = 2.22507385850720138309e-308 // 2**-1022  = 0x0010000000000000
	)
	// special cases
	switch {
	case x == 0 || math.IsNaN(x) || math.IsInf(x, 0):
		return x
	}

	sign := false
	if x < 0 {
		x = -x
		sign = true
	}

	// rough cbrt to 5 bits
	t := math.Float64frombits(math.Float64bits(x)/3 + b1<<32)
	if x < smallestNormal {
		// subnormal number
		t = float64(1 << 54) // set t= 2**54
		t *= x
		t = math.Float64frombits(math.Float64bits(t)/3 + b2<<32)
	}

	// new cbrt to 23 bits
	r := t * t / x
	s := c + float64(r*t)
	t *= g + f/(s+e+d/s)

	// chop to 22 bits, make larger than cbrt(x)
	t = math.Float64frombits(math.Float64bits(t)&(0xFFFFFFFFC<<28) + 1<<30)

	// one step newton iteration to 53 bits with error less than 0.667ulps
	s = t * t // t*t is exact
	r = x / s
	w := t + t
	r = (r - t) / (w + r) // r-s is exact
	t = t + float64(t*r)

	// restore the sign bit
	if sign {
		t = -t
	}
	return t
}
