package kernels

import (
	"math"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// tanhSeriesBelow is the |x| under which tanh is x·(1 − x²/3): the next
// term, 2x⁵/15, is below float64's rounding of it, while (1 − e⁻²ˣ) would
// lose digits to cancellation.
const tanhSeriesBelow = 0x1p-12

// Tanh sets y = tanh(x) elementwise, computed in float64 from detmath.Exp
// (the same bits on every kernel set and architecture) and rounded to
// float32; y and x may be the same slice.
func Tanh(y, x []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = float32(tanh64(float64(v)))
	}
}

// tanh64 is tanh(x) = sign(x)·(1 − e⁻²ˡˣˡ)/(1 + e⁻²ˡˣˡ), which neither
// overflows nor loses digits for large |x| (it tends to ±1), with the
// series for small |x|. NaN stays NaN, ±0 stays ±0.
func tanh64(x float64) float64 {
	a := math.Abs(x)
	if a < tanhSeriesBelow {
		x2 := float64(x * x)
		return float64(x * float64(1-float64(x2/3)))
	}
	t := detmath.Exp(-2 * a)
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
