package kernels

import "github.com/gtstorm/gtstorm/internal/detmath"

// Sigmoid sets y = 1/(1 + e⁻ˣ) elementwise, computed in float64 from
// detmath.Exp (the same bits on every kernel set and architecture) and
// rounded to float32; y and x may be the same slice.
func Sigmoid(y, x []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = float32(sigmoid64(float64(v)))
	}
}

// sigmoid64 is 1/(1 + e⁻ˣ) for x ≥ 0 and eˣ/(1 + eˣ) below: the
// exponential is of −|x|, so it never overflows, and the result keeps its
// relative precision as it nears 0. NaN stays NaN.
func sigmoid64(x float64) float64 {
	if x >= 0 {
		return 1 / float64(1+detmath.Exp(-x))
	}
	e := detmath.Exp(x)
	return e / float64(1+e)
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
