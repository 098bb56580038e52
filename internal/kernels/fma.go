package kernels

import "math"

// fma32Emulated returns a·b + c rounded once to float32, as a fused
// multiply-add instruction (VFMADD231PS, FMLA) does, on any CPU.
//
// The product of two float32 values is exact in float64, and their sum with
// c rounds once there. Rounding that float64 to float32 is then correct
// except when it landed exactly on a midpoint between two float32 values
// (double rounding), or when the result is a float32 subnormal; those rare
// cases take fma32Slow, which rounds the float64 sum to odd first.
func fma32Emulated(a, b, c float32) float32 {
	p := float64(float64(a) * float64(b)) // exact
	s := p + float64(c)
	if roundsTwice(s) {
		return fma32Slow(p, float64(c), s)
	}
	return float32(s)
}

// roundsTwice reports whether rounding the float64 sum s to float32 may
// differ from rounding the exact sum once: s lies on a float32 midpoint, or
// is a nonzero value below float32's smallest normal (biased float64
// exponent 1 to 896). Zero, and the float64 subnormals, round to a float32
// zero as the exact sum does, so they stay on the fast path: a chain of
// zero products (a ReLU's zeros, an image's background) is common.
func roundsTwice(s float64) bool {
	u := math.Float64bits(s)
	return u&(1<<29-1) == 1<<28 || (u>>52&0x7ff)-1 < 1023-126-1
}

// fma32Slow rounds s = p + c (rounded to nearest in float64) to odd, using
// the exact error of the addition, and then to float32: rounding to odd in
// a format with at least two more bits than the target makes the second
// rounding correct. It is kept out of line so that fma32Emulated inlines.
//
//go:noinline
func fma32Slow(p, c, s float64) float32 {
	bb := s - p
	e := (p - (s - bb)) + (c - bb) // p + c = s + e exactly (TwoSum)
	u := math.Float64bits(s)
	if e != 0 && u&1 == 0 {
		if (e > 0) == (s > 0) {
			u++ // away from zero, toward the exact sum
		} else {
			u--
		}
	}
	return float32(math.Float64frombits(u))
}
