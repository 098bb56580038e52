package kernels

// SiLU sets y = x·σ(x), computed in float64 (σ as Sigmoid computes it)
// and rounded to float32; y and x may be the same slice. NaN stays NaN; +Inf gives +Inf, −Inf NaN
// (−∞·0, as torch's x/(1 + e⁻ˣ) gives).
func SiLU(y, x []float32) {
	y = y[:len(x)]
	for i, v := range x {
		x64 := float64(v)
		y[i] = float32(float64(x64 * sigmoid64(x64)))
	}
}

// SiLUBackward sets dx = dy·(σ(x) + x·σ(x)·(1 − σ(x))), x being the
// SiLU's input, computed in float64 and rounded to float32; dx and dy may
// be the same slice. Every product is rounded before it meets a sum, so
// that no architecture fuses them.
func SiLUBackward(dx, dy, x []float32) {
	dx = dx[:len(dy)]
	x = x[:len(dy)]
	for i, g := range dy {
		v := float64(x[i])
		s := sigmoid64(v)
		xs := float64(v * s)
		d := float64(s + float64(xs*float64(1-s)))
		dx[i] = float32(float64(float64(g) * d))
	}
}
