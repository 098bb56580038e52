package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestClampIsTheDefinition: Clamp and ClampBackward give on every kernel
// set, bit for bit, the branches they replace (x < lo → lo, x > hi → hi;
// dy where lo < x < hi, else +0), on signed zeros against bounds of either
// sign, NaN payloads, infinities, the bounds themselves and normal values,
// in the vector body and the tail, and in place.
func TestClampIsTheDefinition(t *testing.T) {
	negZero := float32(math.Copysign(0, -1))
	nan := math.Float32frombits(0x7fc0_1234)
	r := rand.New(rand.NewPCG(1, 2))
	x := []float32{negZero, 0, 6, -6, 1, nan, -nan, float32(math.Inf(1)), float32(math.Inf(-1)), math.SmallestNonzeroFloat32, -1, negZero, 6, nan, 0, -6}
	for len(x) < 1003 {
		x = append(x, float32(r.NormFloat64()*5))
	}
	dy := make([]float32, len(x))
	for i := range dy {
		dy[i] = float32(r.NormFloat64())
	}
	dy[3], dy[12] = nan, negZero
	for _, ks := range kernelSets() {
		for _, b := range [][2]float32{{0, 6}, {negZero, 6}, {-6, 0}, {-6, negZero}, {-1, 1}} {
			for _, n := range []int{0, 5, 8, 16, 1003} {
				lo, hi := b[0], b[1]
				what := fmt.Sprintf("%s [%v, %v] n=%d", ks.name, lo, hi, n)
				y, dx := make([]float32, n), make([]float32, n)
				clampSet(ks, y, x[:n], lo, hi)
				clampBackwardSet(ks, dx, dy[:n], x[:n], lo, hi)
				for i, v := range x[:n] {
					want, wantD := v, dy[i]
					if v < lo {
						want = lo
					}
					if v > hi {
						want = hi
					}
					if !(v > lo && v < hi) {
						wantD = 0
					}
					if math.Float32bits(y[i]) != math.Float32bits(want) || math.Float32bits(dx[i]) != math.Float32bits(wantD) {
						t.Errorf("%s at x = %v (%#x), dy = %v: Clamp %v (%#x), want %v; ClampBackward %v, want %v",
							what, v, math.Float32bits(v), dy[i], y[i], math.Float32bits(y[i]), want, dx[i], wantD)
					}
				}
				in := append([]float32(nil), x[:n]...)
				clampSet(ks, in, in, lo, hi)
				sameFloats(t, what+" Clamp in place", in, y)
				in = append(in[:0], dy[:n]...)
				clampBackwardSet(ks, in, in, x[:n], lo, hi)
				sameFloats(t, what+" ClampBackward in place", in, dx)
			}
		}
	}
}
