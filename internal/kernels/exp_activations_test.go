package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// The exponential activations as they were before exp64s: one
// detmath.Exp a value. TestExpActivationsSameBits holds the blocked
// kernels to their bits.

func refSigmoid64(x float64) float64 {
	if x >= 0 {
		return 1 / float64(1+detmath.Exp(-x))
	}
	e := detmath.Exp(x)
	return e / float64(1+e)
}

func refTanh64(x float64) float64 {
	a := math.Abs(x)
	if a < tanhSeriesBelow {
		x2 := float64(x * x)
		return float64(x * float64(1-float64(x2/3)))
	}
	t := detmath.Exp(-2 * a)
	return math.Copysign(float64(1-t)/float64(1+t), x)
}

func refExpm1(x float64) float64 {
	if x < -0x1p-5 || x != x {
		return detmath.Exp(x) - 1
	}
	p := 1.0 / 5040
	for _, c := range []float64{1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1} {
		p = c + float64(x*p)
	}
	return float64(x * p)
}

// refUnary and refBinary are the reference loops: f of x, and dy·g of x.
func refUnary(f func(x float32) float32) func(y, x []float32) {
	return func(y, x []float32) {
		for i, v := range x {
			y[i] = f(v)
		}
	}
}

func refBinary(f func(g, x float32) float32) func(dx, dy, x []float32) {
	return func(dx, dy, x []float32) {
		for i, g := range dy {
			dx[i] = f(g, x[i])
		}
	}
}

// expActivationInputs are float32s over every case of the activations:
// zeros, NaN, infinities, the series and polynomial ranges near 0, the
// subnormal and underflowing exponentials, and N(0, 3²).
func expActivationInputs(r *rand.Rand, n int) []float32 {
	x := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.MaxFloat32, -math.MaxFloat32, 1e-30, -1e-30, 0x1p-13, -0x1p-13, 0x1p-12, -0x1p-12, 0x1p-5, -0x1p-5,
		20, 20.000002, 19.999998, -20, 88, -88, -104, 104, -708.4, -709, -745, -745.2, -746, -1000, 1000, 37.7, -37.7}
	for len(x) < n {
		switch len(x) % 4 {
		case 0:
			x = append(x, float32(r.NormFloat64()*3))
		case 1:
			x = append(x, float32(r.NormFloat64()*0.05))
		case 2:
			x = append(x, float32(r.Float64()*1600-800))
		default:
			x = append(x, math.Float32frombits(r.Uint32()))
		}
	}
	return x
}

// TestExpActivationsSameBits checks Sigmoid, SiLU, Tanh, ELU, Softplus,
// GELU and their gradients on every kernel set against the
// per-value loops above, bit for bit, over lengths that end mid-block and
// mid-vector, in place as well.
func TestExpActivationsSameBits(t *testing.T) {
	const alpha = 1.25
	a := float64(alpha)
	unary := []struct {
		name string
		set  func(ks *kernelSet, y, x []float32)
		ref  func(y, x []float32)
	}{
		{"Sigmoid", sigmoidSet, refUnary(func(v float32) float32 { return float32(refSigmoid64(float64(v))) })},
		{"SiLU", siluSet, refUnary(func(v float32) float32 { return float32(float64(float64(v) * refSigmoid64(float64(v)))) })},
		{"Tanh", tanhSet, refUnary(func(v float32) float32 { return float32(refTanh64(float64(v))) })},
		{"ELU", func(ks *kernelSet, y, x []float32) { eluSet(ks, y, x, alpha) }, refUnary(func(v float32) float32 {
			if v > 0 {
				return v
			}
			return float32(float64(a * refExpm1(float64(v))))
		})},
		{"Softplus", softplusSet, refUnary(func(v float32) float32 {
			if v > softplusThreshold {
				return v
			}
			return float32(detmath.Log1p(detmath.Exp(float64(v))))
		})},
		{"GELU", geluSet, refUnary(refGELU)},
	}
	binary := []struct {
		name string
		set  func(ks *kernelSet, dx, dy, x []float32)
		ref  func(dx, dy, x []float32)
	}{
		{"SiLUBackward", siluBackwardSet, refBinary(func(g, x float32) float32 {
			v := float64(x)
			s := refSigmoid64(v)
			xs := float64(v * s)
			d := float64(s + float64(xs*float64(1-s)))
			return float32(float64(float64(g) * d))
		})},
		{"ELUBackward", func(ks *kernelSet, dx, dy, x []float32) { eluBackwardSet(ks, dx, dy, x, alpha) }, refBinary(func(g, x float32) float32 {
			if x > 0 {
				return g
			}
			d := float64(a * detmath.Exp(float64(x)))
			return float32(float64(float64(g) * d))
		})},
		{"SoftplusBackward", softplusBackwardSet, refBinary(func(g, x float32) float32 {
			if x > softplusThreshold {
				return g
			}
			z := detmath.Exp(float64(x))
			return float32(float64(float64(g) * float64(z/float64(z+1))))
		})},
		{"GELUBackward", geluBackwardSet, refBinary(func(g, x float32) float32 {
			v := float64(x)
			pdf := float64(detmath.Exp(float64(-0.5*float64(v*v))) * invSqrt2Pi)
			d := refGaussCDF(v) + float64(v*pdf)
			return float32(float64(float64(g) * d))
		})},
	}
	r := rand.New(rand.NewPCG(3, 4))
	x := expActivationInputs(r, 3*expBlock+7)
	dy := make([]float32, len(x))
	for i := range dy {
		dy[i] = float32(r.NormFloat64())
	}
	// Against the reference, other Go code, a NaN's sign and payload follow
	// the compiler's choice of operand order, which differs by
	// architecture, so NaNs match any NaN there; the kernel sets must give
	// the pure-Go set's bits, NaNs included.
	check := func(t *testing.T, what string, got, gen, ref []float32) {
		t.Helper()
		for i := range ref {
			g, w, r := got[i], gen[i], ref[i]
			if math.Float32bits(g) != math.Float32bits(w) {
				t.Fatalf("%s: value %d (x = %v) = %v [%#x], the go set's %v [%#x]", what, i, x[i], g, math.Float32bits(g), w, math.Float32bits(w))
			}
			if math.Float32bits(w) != math.Float32bits(r) && !(w != w && r != r) {
				t.Fatalf("%s: value %d (x = %v) = %v, want %v", what, i, x[i], w, r)
			}
		}
	}
	for _, n := range []int{0, 1, 3, 4, 5, 9, expBlock - 1, expBlock, expBlock + 5, len(x)} {
		for _, c := range unary {
			ref, gen := make([]float32, n), make([]float32, n)
			c.ref(ref, x[:n])
			c.set(generic, gen, x[:n])
			for _, ks := range kernelSets() {
				got := make([]float32, n)
				c.set(ks, got, x[:n])
				check(t, ks.name+" "+c.name, got, gen, ref)
				in := append([]float32(nil), x[:n]...)
				c.set(ks, in, in)
				check(t, ks.name+" "+c.name+" in place", in, gen, ref)
			}
		}
		for _, c := range binary {
			ref, gen := make([]float32, n), make([]float32, n)
			c.ref(ref, dy[:n], x[:n])
			c.set(generic, gen, dy[:n], x[:n])
			for _, ks := range kernelSets() {
				got := make([]float32, n)
				c.set(ks, got, dy[:n], x[:n])
				check(t, ks.name+" "+c.name, got, gen, ref)
				in := append([]float32(nil), dy[:n]...)
				c.set(ks, in, in, x[:n])
				check(t, ks.name+" "+c.name+" in place", in, gen, ref)
			}
		}
	}
}
