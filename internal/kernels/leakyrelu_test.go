package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLeakyReLUIsTheDefinition: the branch-free LeakyReLU and its
// backward pass give, bit for bit, the branches they replace (x where
// x > 0, else alpha·x, NaN payloads and signed zeros included), for slopes
// of either sign.
func TestLeakyReLUIsTheDefinition(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	nan := math.Float32frombits(0x7fc0_4321)
	r := rand.New(rand.NewPCG(3, 4))
	x := []float32{negZero, 0, nan, -nan, float32(math.Inf(1)), float32(math.Inf(-1)), -math.SmallestNonzeroFloat32}
	for len(x) < 500 {
		x = append(x, float32(r.NormFloat64()))
	}
	dy := make([]float32, len(x))
	for i := range dy {
		dy[i] = float32(r.NormFloat64())
	}
	dy[1], dy[2] = nan, negZero
	for _, alpha := range []float32{0.01, 0.2, -0.5, 0} {
		y, dx := make([]float32, len(x)), make([]float32, len(x))
		LeakyReLU(y, x, alpha)
		LeakyReLUBackward(dx, dy, x, alpha)
		for i, v := range x {
			want, wantD := v, dy[i]
			if !(v > 0) {
				want, wantD = v*alpha, dy[i]*alpha
			}
			if math.Float32bits(y[i]) != math.Float32bits(want) || math.Float32bits(dx[i]) != math.Float32bits(wantD) {
				t.Errorf("alpha %v, x = %v (%#x), dy = %v: LeakyReLU %v, want %v; backward %v, want %v", alpha, v, math.Float32bits(v), dy[i], y[i], want, dx[i], wantD)
			}
		}
	}
}
