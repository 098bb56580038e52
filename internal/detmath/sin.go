package detmath

import "math"

// Ported from Go's math/sin.go (BSD licence), itself from the Cephes Math
// Library's sin.c (Release 2.8, June 2000, Copyright 1984, 1987, 1989,
// 1992, 2000 by Stephen L. Moshier; "may be used freely"). Range reduction
// is into octants of Pi/4, by Pi/4 split into three parts below
// reduceThreshold and by trigReduce (Payne-Hanek) above; between 0 and
// Pi/4 the sine is z + z³P(z²) and the cosine 1 - z²/2 + z⁴Q(z²). Every
// product that meets an addition is converted, float64(a*b), so that no
// architecture fuses it.

// sin coefficients
var sinCoef = [...]float64{
	1.58962301576546568060e-10, // 0x3de5d8fd1fd19ccd
	-2.50507477628578072866e-8, // 0xbe5ae5e5a9291f5d
	2.75573136213857245213e-6,  // 0x3ec71de3567d48a1
	-1.98412698295895385996e-4, // 0xbf2a01a019bfdf03
	8.33333333332211858878e-3,  // 0x3f8111111110f7d0
	-1.66666666666666307295e-1, // 0xbfc5555555555548
}

// cos coefficients
var cosCoef = [...]float64{
	-1.13585365213876817300e-11, // 0xbda8fa49a0861a9b
	2.08757008419747316778e-9,   // 0x3e21ee9d7b4e3f05
	-2.75573141792967388112e-7,  // 0xbe927e4f7eac4bc6
	2.48015872888517045348e-5,   // 0x3efa01a019c844f5
	-1.38888888888730564116e-3,  // 0xbf56c16c16c14f91
	4.16666666666665929218e-2,   // 0x3fa555555555554b
}

// Pi/4 split into three parts.
const (
	pi4A = 7.85398125648498535156e-1  // 0x3fe921fb40000000
	pi4B = 3.77489470793079817668e-8  // 0x3e64442d00000000
	pi4C = 2.69515142907905952645e-15 // 0x3ce8469898cc5170
)

// Cos returns the cosine of the radian argument x: a port of Go's pure-Go
// math.Cos, with the same bits as math.Cos on amd64, on every architecture.
func Cos(x float64) float64 {
	// special cases
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return math.NaN()
	}

	// make argument positive
	sign := false
	x = math.Abs(x)

	j, z := reduceOctant(x)

	if j > 3 {
		j -= 4
		sign = !sign
	}
	if j > 1 {
		sign = !sign
	}

	var y float64
	zz := float64(z * z)
	if j == 1 || j == 2 {
		y = sinPoly(z, zz)
	} else {
		y = cosPoly(zz)
	}
	if sign {
		y = -y
	}
	return y
}

// Sin returns the sine of the radian argument x: a port of Go's pure-Go
// math.Sin, with the same bits as math.Sin on amd64, on every architecture.
func Sin(x float64) float64 {
	// special cases
	switch {
	case x == 0 || math.IsNaN(x):
		return x // return ±0 || NaN()
	case math.IsInf(x, 0):
		return math.NaN()
	}

	// make argument positive but save the sign
	sign := false
	if x < 0 {
		x = -x
		sign = true
	}

	j, z := reduceOctant(x)

	// reflect in x axis
	if j > 3 {
		sign = !sign
		j -= 4
	}
	var y float64
	zz := float64(z * z)
	if j == 1 || j == 2 {
		y = cosPoly(zz)
	} else {
		y = sinPoly(z, zz)
	}
	if sign {
		y = -y
	}
	return y
}

// reduceOctant returns, for x ≥ 0, the octant j (0 to 7, even: zeros are
// mapped to the origin) and the remainder z of x modulo Pi/4, as the
// shared prologue of Go's sin and cos.
func reduceOctant(x float64) (j uint64, z float64) {
	if x >= reduceThreshold {
		return trigReduce(x)
	}
	// Converted: on some architectures uint64(f) computes f - 1<<63, which
	// would fuse (f < 1<<29 here, so that branch is never taken).
	j = uint64(float64(x * (4 / math.Pi))) // integer part of x/(Pi/4), as integer for tests on the phase angle
	y := float64(j)                        // integer part of x/(Pi/4), as float

	// map zeros to origin
	if j&1 == 1 {
		j++
		y++
	}
	j &= 7 // octant modulo 2Pi radians (360 degrees)
	// Extended precision modular arithmetic
	z = ((x - float64(y*pi4A)) - float64(y*pi4B)) - float64(y*pi4C)
	return j, z
}

// sinPoly returns z + z*zz*P(zz), the sine on [-Pi/4, Pi/4], zz = z*z.
func sinPoly(z, zz float64) float64 {
	p := float64(sinCoef[0] * zz)
	p = float64((p + sinCoef[1]) * zz)
	p = float64((p + sinCoef[2]) * zz)
	p = float64((p + sinCoef[3]) * zz)
	p = float64((p + sinCoef[4]) * zz)
	p += sinCoef[5]
	return z + float64(z*zz*p)
}

// cosPoly returns 1 - 0.5*zz + zz*zz*Q(zz), the cosine on [-Pi/4, Pi/4].
func cosPoly(zz float64) float64 {
	q := float64(cosCoef[0] * zz)
	q = float64((q + cosCoef[1]) * zz)
	q = float64((q + cosCoef[2]) * zz)
	q = float64((q + cosCoef[3]) * zz)
	q = float64((q + cosCoef[4]) * zz)
	q += cosCoef[5]
	return 1.0 - float64(0.5*zz) + float64(zz*zz*q)
}
