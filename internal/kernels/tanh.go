package kernels

import "math"

// tanhSeriesBelow is the |x| under which tanh is x·(1 − x²/3): the next
// term, 2x⁵/15, is below float64's rounding of it, while (1 − e⁻²ˣ) would
// lose digits to cancellation.
const tanhSeriesBelow = 0x1p-12

// Tanh sets y = tanh(x) elementwise, computed in float64 from
// detmath.Exp's bits (exp64s, expBlock values a call) and rounded to
// float32: the same bits on every kernel set and architecture; y and x may
// be the same slice.
func Tanh(y, x []float32) { tanhSet(use(), y, x) }

func tanhSet(ks *kernelSet, y, x []float32) {
	y = y[:len(x)]
	var e [expBlock]float64
	for i := 0; i < len(x); i += expBlock {
		xb := x[i:min(i+expBlock, len(x))]
		eb := e[:len(xb)]
		for j, v := range xb {
			eb[j] = -2 * math.Abs(float64(v))
		}
		exp64s(ks, eb, eb)
		yb := y[i : i+len(xb)]
		for j, v := range xb {
			yb[j] = float32(tanhFrom(float64(v), eb[j]))
		}
	}
}

// tanhFrom is tanh(x) = sign(x)·(1 − e⁻²ˡˣˡ)/(1 + e⁻²ˡˣˡ) given
// t = detmath.Exp(−2|x|), which neither overflows nor loses digits for
// large |x| (it tends to ±1), with the series for small |x| (t unused).
// NaN stays NaN, ±0 stays ±0.
func tanhFrom(x, t float64) float64 {
	if math.Abs(x) < tanhSeriesBelow {
		x2 := float64(x * x)
		return float64(x * float64(1-float64(x2/3)))
	}
	return math.Copysign(float64(1-t)/float64(1+t), x)
}

// TanhBackward sets dx = dy·(1 − y²), y being the Tanh's output; dx and dy
// may be the same slice.
func TanhBackward(dx, dy, y []float32) {
	dx = dx[:len(dy)]
	y = y[:len(dy)]
	for i, g := range dy {
		v := y[i]
		dx[i] = g * float32(1-float32(v*v))
	}
}
