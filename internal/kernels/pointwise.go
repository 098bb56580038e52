package kernels

import "math"

// The pointwise activations ELU, Softplus, Hardsigmoid, Hardswish and
// GELU, forward and backward: in float64 from detmath (the exponentials
// expBlock at a time through exp64s, detmath.Exp's bits; erf and log1p
// through erfs and log1ps, detmath.Erf's and detmath.Log1p's), every
// product rounded before it meets a sum (so that no architecture fuses
// them), rounded to float32 once: the same bits on every kernel set and
// architecture. Each backward reads the layer's input x; dx and dy may be
// the same slice, and so may y and x.

// ELU sets y = x where x > 0, alpha·(eˣ − 1) elsewhere (torch's
// nn.ELU(alpha)). NaN stays NaN.
func ELU(y, x []float32, alpha float32) { eluSet(use(), y, x, alpha) }

func eluSet(ks *kernelSet, y, x []float32, alpha float32) {
	y = y[:len(x)]
	a := float64(alpha)
	// x in float64 is kept in xs: expm1From's argument loaded from memory
	// rather than converted from float32 in the loop, whose CVTSS2SD would
	// wait on the register's last value, the previous expm1From.
	var xs, e [expBlock]float64
	for i := 0; i < len(x); i += expBlock {
		xb := x[i:min(i+expBlock, len(x))]
		xsb, eb := xs[:len(xb)], e[:len(xb)]
		for j, v := range xb {
			xsb[j] = float64(v)
		}
		exp64s(ks, eb, xsb)
		yb := y[i : i+len(xb)]
		for j, v := range xb {
			// v where v > 0, selected by bits: the sign of activations
			// mispredicts a branch about every other value.
			r := float32(float64(a * expm1From(xsb[j], eb[j])))
			m := -bit(v > 0)
			yb[j] = math.Float32frombits(math.Float32bits(r)&^m | math.Float32bits(v)&m)
		}
	}
}

// ELUBackward sets dx = dy where x > 0, dy·alpha·eˣ elsewhere (torch's
// elu_backward of the input).
func ELUBackward(dx, dy, x []float32, alpha float32) { eluBackwardSet(use(), dx, dy, x, alpha) }

func eluBackwardSet(ks *kernelSet, dx, dy, x []float32, alpha float32) {
	dx = dx[:len(dy)]
	x = x[:len(dy)]
	a := float64(alpha)
	var e [expBlock]float64
	for i := 0; i < len(dy); i += expBlock {
		xb := x[i:min(i+expBlock, len(dy))]
		eb := expOf(ks, &e, xb)
		gb, db := dy[i:i+len(xb)], dx[i:i+len(xb)]
		for j, v := range xb {
			g := gb[j]
			d := float64(a * eb[j])
			r := float32(float64(float64(g) * d))
			m := -bit(v > 0)
			db[j] = math.Float32frombits(math.Float32bits(r)&^m | math.Float32bits(g)&m)
		}
	}
}

// expm1From is eˣ − 1 for x ≤ 0 given e = detmath.Exp(x), precise near 0,
// where eˣ − 1 cancels: below |x| = 2⁻⁵ a Taylor polynomial to x⁷, else
// (and for NaN) e − 1. Both are computed and one selected by bits.
func expm1From(x, e float64) float64 {
	// x + x²/2 + … + x⁷/5040, Horner, every product rounded.
	p := 1.0 / 5040
	p = 1.0/720 + float64(x*p)
	p = 1.0/120 + float64(x*p)
	p = 1.0/24 + float64(x*p)
	p = 1.0/6 + float64(x*p)
	p = 0.5 + float64(x*p)
	p = 1 + float64(x*p)
	p = float64(x * p)
	m := -uint64(bit(x < -0x1p-5) | bit(x != x))
	return math.Float64frombits(math.Float64bits(p)&^m | math.Float64bits(e-1)&m)
}

// softplusThreshold is torch's nn.Softplus default threshold: above it
// the output is x and the gradient dy.
const softplusThreshold = 20

// Softplus sets y = log(1 + eˣ), and x where x > 20 (torch's
// nn.Softplus() with beta 1 and threshold 20). NaN stays NaN.
func Softplus(y, x []float32) { softplusSet(use(), y, x) }

func softplusSet(ks *kernelSet, y, x []float32) {
	y = y[:len(x)]
	var e [expBlock]float64
	for i := 0; i < len(x); i += expBlock {
		xb := x[i:min(i+expBlock, len(x))]
		eb := expOf(ks, &e, xb)
		log1ps(ks, eb, eb)
		yb := y[i : i+len(xb)]
		for j, v := range xb {
			yb[j] = pick32(v > softplusThreshold, v, float32(eb[j]))
		}
	}
}

// SoftplusBackward sets dx = dy·eˣ/(1 + eˣ), and dy where x > 20
// (torch's softplus_backward).
func SoftplusBackward(dx, dy, x []float32) { softplusBackwardSet(use(), dx, dy, x) }

func softplusBackwardSet(ks *kernelSet, dx, dy, x []float32) {
	dx = dx[:len(dy)]
	x = x[:len(dy)]
	var e [expBlock]float64
	for i := 0; i < len(dy); i += expBlock {
		xb := x[i:min(i+expBlock, len(dy))]
		eb := expOf(ks, &e, xb)
		gb, db := dy[i:i+len(xb)], dx[i:i+len(xb)]
		for j, v := range xb {
			z := eb[j]
			g := gb[j]
			db[j] = pick32(v > softplusThreshold, g, float32(float64(float64(g)*float64(z/float64(z+1)))))
		}
	}
}

// Hardsigmoid sets y = min(max(x + 3, 0), 6)/6 (torch's nn.Hardsigmoid;
// ONNX's HardSigmoid with alpha 1/6, beta 0.5). NaN stays NaN.
func Hardsigmoid(y, x []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = float32(relu6(float64(v)+3) / 6)
	}
}

// HardsigmoidBackward sets dx = dy/6 where −3 < x < 3, 0 elsewhere
// (torch's hardsigmoid_backward).
func HardsigmoidBackward(dx, dy, x []float32) {
	dx = dx[:len(dy)]
	x = x[:len(dy)]
	for i, g := range dy {
		if v := x[i]; v > -3 && v < 3 {
			dx[i] = float32(float64(g) / 6)
		} else {
			dx[i] = 0
		}
	}
}

// Hardswish sets y = x·min(max(x + 3, 0), 6)/6 (torch's nn.Hardswish).
// NaN stays NaN.
func Hardswish(y, x []float32) {
	y = y[:len(x)]
	for i, v := range x {
		x64 := float64(v)
		y[i] = float32(float64(x64*relu6(x64+3)) / 6)
	}
}

// HardswishBackward sets dx = 0 where x < −3, dy·(x/3 + 1/2) where
// −3 ≤ x ≤ 3, dy where x > 3 (torch's hardswish_backward, bounds
// included in the middle piece).
func HardswishBackward(dx, dy, x []float32) {
	dx = dx[:len(dy)]
	x = x[:len(dy)]
	for i, g := range dy {
		switch v := x[i]; {
		case v < -3:
			dx[i] = 0
		case v <= 3:
			dx[i] = float32(float64(g) * (float64(v)/3 + 0.5))
		default:
			dx[i] = g
		}
	}
}

// relu6 is min(max(x, 0), 6); NaN stays NaN.
func relu6(x float64) float64 {
	if x < 0 {
		return 0
	}
	if x > 6 {
		return 6
	}
	return x
}

const (
	sqrtHalf   = 0.70710678118654752440084436210484903928483593768847 // 1/√2
	invSqrt2Pi = 0.39894228040143267793994605993438186847585863116493 // 1/√(2π)
)

// GELU sets y = x·Φ(x) = x·(1 + erf(x/√2))/2 (torch's nn.GELU(), the
// exact form). NaN stays NaN.
func GELU(y, x []float32) { geluSet(use(), y, x) }

func geluSet(ks *kernelSet, y, x []float32) {
	y = y[:len(x)]
	var u [expBlock]float64
	for i := 0; i < len(x); i += expBlock {
		xb := x[i:min(i+expBlock, len(x))]
		ub := erfOfHalf(ks, &u, xb)
		yb := y[i : i+len(xb)]
		for j, v := range xb {
			yb[j] = float32(float64(float64(v) * gaussCDFFrom(ub[j])))
		}
	}
}

// GELUBackward sets dx = dy·(Φ(x) + x·φ(x)), φ(x) = e^(−x²/2)/√(2π).
func GELUBackward(dx, dy, x []float32) { geluBackwardSet(use(), dx, dy, x) }

func geluBackwardSet(ks *kernelSet, dx, dy, x []float32) {
	dx = dx[:len(dy)]
	x = x[:len(dy)]
	var e, u [expBlock]float64
	for i := 0; i < len(dy); i += expBlock {
		xb := x[i:min(i+expBlock, len(dy))]
		eb := e[:len(xb)]
		for j, v := range xb {
			v := float64(v)
			eb[j] = float64(-0.5 * float64(v*v))
		}
		exp64s(ks, eb, eb)
		ub := erfOfHalf(ks, &u, xb)
		gb, db := dy[i:i+len(xb)], dx[i:i+len(xb)]
		for j, v := range xb {
			v := float64(v)
			pdf := float64(eb[j] * invSqrt2Pi)
			d := gaussCDFFrom(ub[j]) + float64(v*pdf)
			db[j] = float32(float64(float64(gb[j]) * d))
		}
	}
}

// erfOfHalf sets u[j] = detmath.Erf(x[j]/√2) for a block of x (at most
// expBlock values), through erfs, and returns u[:len(x)].
func erfOfHalf(ks *kernelSet, u *[expBlock]float64, x []float32) []float64 {
	ub := u[:len(x)]
	for j, v := range x {
		ub[j] = float64(float64(v) * sqrtHalf)
	}
	erfs(ks, ub, ub)
	return ub
}

// gaussCDFFrom is Φ(x) = (1 + erf(x/√2))/2 given erf(x/√2).
func gaussCDFFrom(erf float64) float64 {
	return float64(0.5 * float64(1+erf))
}
