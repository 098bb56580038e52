package kernels

import (
	"math"
	"testing"
)

// TestActivationValues checks LeakyReLU, Tanh and Sigmoid on special and
// extreme values: signs of zero, NaN, ±Inf, and inputs where e^x would
// overflow.
func TestActivationValues(t *testing.T) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	negZero := float32(math.Copysign(0, -1))
	for _, c := range []struct {
		name string
		f    func(y, x []float32)
		x    []float32
		want []float32
	}{
		{"leakyrelu 0.1", func(y, x []float32) { LeakyReLU(y, x, 0.1) }, []float32{2, -2, 0, -inf, inf}, []float32{2, -0.2, 0, -inf, inf}},
		{"leakyrelu -0.5", func(y, x []float32) { LeakyReLU(y, x, -0.5) }, []float32{2, -2}, []float32{2, 1}},
		{"tanh", Tanh, []float32{0, negZero, 1e-30, -1e-30, 100, -100, 1000, inf, -inf}, []float32{0, negZero, 1e-30, -1e-30, 1, -1, 1, 1, -1}},
		{"sigmoid", Sigmoid, []float32{0, 200, -200, 1000, -1000, inf, -inf, 100}, []float32{0.5, 1, 0, 1, 0, 1, 0, 1}},
	} {
		y := make([]float32, len(c.x))
		c.f(y, c.x)
		for i := range y {
			if math.Float32bits(y[i]) != math.Float32bits(c.want[i]) {
				t.Errorf("%s(%g) = %g, want %g", c.name, c.x[i], y[i], c.want[i])
			}
		}
		nanOut := []float32{0}
		c.f(nanOut, []float32{nan})
		if !math.IsNaN(float64(nanOut[0])) {
			t.Errorf("%s(NaN) = %g, want NaN", c.name, nanOut[0])
		}
	}
	tiny := []float32{0}
	Sigmoid(tiny, []float32{-80})
	if want := float32(math.Exp(-80)); tiny[0] != want { // e⁻⁸⁰/(1 + e⁻⁸⁰) rounds to e⁻⁸⁰
		t.Errorf("sigmoid(-80) = %g, want %g (relative precision kept near 0)", tiny[0], want)
	}
}

// TestActivationAccuracy checks Tanh and Sigmoid against float64 math over
// [−20, 20], within one float32 rounding (relative 2⁻²³, or 2⁻¹⁴⁹ absolute).
func TestActivationAccuracy(t *testing.T) {
	x := make([]float32, 40001)
	for i := range x {
		x[i] = float32(i-20000) * 1e-3
	}
	x = append(x, 1e-5, -3e-4, 2.4e-4, 0x1p-12, -0x1p-12, 0x1.0001p-12)
	y := make([]float32, len(x))
	for _, c := range []struct {
		name string
		f    func(y, x []float32)
		ref  func(float64) float64
	}{
		{"tanh", Tanh, math.Tanh},
		{"sigmoid", Sigmoid, func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }},
	} {
		c.f(y, x)
		for i, v := range x {
			want := c.ref(float64(v))
			if d := math.Abs(float64(y[i]) - want); d > math.Abs(want)*0x1p-23+0x1p-149 {
				t.Errorf("%s(%g) = %.9g, want %.9g", c.name, v, y[i], want)
			}
		}
	}
}

// TestActivationBackward checks each backward kernel against its formula:
// LeakyReLU's reads the input's sign (a negative slope flips the
// output's), Tanh's dy·(1 − y²) and Sigmoid's dy·y·(1 − y).
func TestActivationBackward(t *testing.T) {
	dy := []float32{1, 2, -3, 0.5}
	for _, c := range []struct {
		name string
		f    func(dx, dy, v []float32)
		v    []float32 // the input (LeakyReLU) or the output
		want []float32
	}{
		{"leakyrelu -0.5", func(dx, dy, x []float32) { LeakyReLUBackward(dx, dy, x, -0.5) }, []float32{1, -1, 0, 3}, []float32{1, -1, 1.5, 0.5}},
		{"leakyrelu 0.01", func(dx, dy, x []float32) { LeakyReLUBackward(dx, dy, x, 0.01) }, []float32{-1, 1, 2, -2}, []float32{0.01, 2, -3, 0.005}},
		{"tanh", TanhBackward, []float32{0, 0.5, -0.5, 1}, []float32{1, 1.5, -2.25, 0}},
		{"sigmoid", SigmoidBackward, []float32{0.5, 0.25, 0.75, 1}, []float32{0.25, 0.375, -0.5625, 0}},
	} {
		dx := make([]float32, len(dy))
		c.f(dx, dy, c.v)
		for i := range dx {
			if dx[i] != c.want[i] {
				t.Errorf("%s: dx[%d] = %g, want %g", c.name, i, dx[i], c.want[i])
			}
		}
	}
}
