package kernels

import "math"

// Sigmoid sets y = 1/(1 + e⁻ˣ) elementwise, computed in float64 from
// detmath.Exp's bits (exp64s, expBlock values a call) and rounded to
// float32: the same bits on every kernel set and architecture; y and x may
// be the same slice.
func Sigmoid(y, x []float32) { sigmoidSet(use(), y, x) }

func sigmoidSet(ks *kernelSet, y, x []float32) {
	y = y[:len(x)]
	var e [expBlock]float64
	for i := 0; i < len(x); i += expBlock {
		xb := x[i:min(i+expBlock, len(x))]
		eb := expSigmoidOf(ks, &e, xb)
		yb := y[i : i+len(xb)]
		for j, v := range xb {
			yb[j] = float32(sigmoidFrom(float64(v), eb[j]))
		}
	}
}

// sigmoidArg is the exponent of sigmoidFrom's exponential: −x for x ≥ 0,
// x below (and for NaN), that is −|x|, so it never overflows. It flips the
// sign bit rather than branching on the sign (which, on activations,
// mispredicts about every other value).
func sigmoidArg(x float64) float64 {
	return math.Float64frombits(math.Float64bits(x) ^ uint64(bit(x >= 0))<<63)
}

// sigmoidFrom is σ(x) given e = detmath.Exp(sigmoidArg(x)): 1/(1 + e⁻ˣ)
// for x ≥ 0 and eˣ/(1 + eˣ) below, which keeps its relative precision as
// it nears 0; the numerator, 1 or e, is selected by bits, not by a
// branch. NaN stays NaN.
func sigmoidFrom(x, e float64) float64 {
	m := -uint64(bit(x >= 0))
	num := math.Float64frombits(math.Float64bits(e)&^m | math.Float64bits(1)&m)
	return num / float64(1+e)
}

// SigmoidBackward sets dx = dy·y·(1 − y), y being the Sigmoid's output; dx
// and dy may be the same slice.
func SigmoidBackward(dx, dy, y []float32) {
	dx = dx[:len(dy)]
	y = y[:len(dy)]
	for i, g := range dy {
		v := y[i]
		dx[i] = float32(g*v) * float32(1-v)
	}
}
