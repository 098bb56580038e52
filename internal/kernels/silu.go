package kernels

// SiLU sets y = x·σ(x), computed in float64 (σ as Sigmoid computes it)
// and rounded to float32; y and x may be the same slice. NaN stays NaN; +Inf gives +Inf, −Inf NaN
// (−∞·0, as torch's x/(1 + e⁻ˣ) gives).
func SiLU(y, x []float32) { siluSet(use(), y, x) }

func siluSet(ks *kernelSet, y, x []float32) {
	y = y[:len(x)]
	var e [expBlock]float64
	for i := 0; i < len(x); i += expBlock {
		xb := x[i:min(i+expBlock, len(x))]
		eb := expSigmoidOf(ks, &e, xb)
		yb := y[i : i+len(xb)]
		for j, v := range xb {
			x64 := float64(v)
			yb[j] = float32(float64(x64 * sigmoidFrom(x64, eb[j])))
		}
	}
}

// SiLUBackward sets dx = dy·(σ(x) + x·σ(x)·(1 − σ(x))), x being the
// SiLU's input, computed in float64 and rounded to float32; dx and dy may
// be the same slice. Every product is rounded before it meets a sum, so
// that no architecture fuses them.
func SiLUBackward(dx, dy, x []float32) { siluBackwardSet(use(), dx, dy, x) }

func siluBackwardSet(ks *kernelSet, dx, dy, x []float32) {
	dx = dx[:len(dy)]
	x = x[:len(dy)]
	var e [expBlock]float64
	for i := 0; i < len(dy); i += expBlock {
		xb := x[i:min(i+expBlock, len(dy))]
		eb := expSigmoidOf(ks, &e, xb)
		gb, db := dy[i:i+len(xb)], dx[i:i+len(xb)]
		for j, v := range xb {
			v := float64(v)
			s := sigmoidFrom(v, eb[j])
			xs := float64(v * s)
			d := float64(s + float64(xs*float64(1-s)))
			db[j] = float32(float64(float64(gb[j]) * d))
		}
	}
}
