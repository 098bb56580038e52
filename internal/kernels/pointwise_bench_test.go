package kernels

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkPointwise times each pointwise activation's forward and
// backward pass over 1 M values drawn from N(0, 3²) (about half negative,
// a sixth beyond ±3, as activations after a normalisation), on the
// kernel set in use: one op is both passes.
func BenchmarkPointwise(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, 1<<20)
	for i := range x {
		x[i] = float32(r.NormFloat64() * 3)
	}
	dy, y := append([]float32(nil), x...), make([]float32, len(x))
	for _, c := range []struct {
		name     string
		fwd      func()
		backward func()
	}{
		{"Clamp", func() { Clamp(y, x, 0, 6) }, func() { ClampBackward(y, dy, x, 0, 6) }},
		{"LeakyReLU", func() { LeakyReLU(y, x, 0.1) }, func() { LeakyReLUBackward(y, dy, x, 0.1) }},
		{"ReLU", func() { ReLU(y, x) }, func() { ReLUBackward(y, dy, x) }},
		{"Hardswish", func() { Hardswish(y, x) }, func() { HardswishBackward(y, dy, x) }},
		{"ELU", func() { ELU(y, x, 1) }, func() { ELUBackward(y, dy, x, 1) }},
		{"SiLU", func() { SiLU(y, x) }, func() { SiLUBackward(y, dy, x) }},
		{"GELU", func() { GELU(y, x) }, func() { GELUBackward(y, dy, x) }},
		{"Sigmoid", func() { Sigmoid(y, x) }, func() { SigmoidBackward(y, dy, y) }},
		{"Tanh", func() { Tanh(y, x) }, func() { TanhBackward(y, dy, y) }},
		{"Softplus", func() { Softplus(y, x) }, func() { SoftplusBackward(y, dy, x) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				c.fwd()
				c.backward()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)), "ns/value")
		})
	}
}
