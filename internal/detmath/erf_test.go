package detmath

import (
	"math"
	"testing"
)

// erfEdges are the edges of Erf's reductions: 2⁻²⁸ and the smallest
// normal (the tiny branches), 0.84375, 1.25, 1/0.35 and 6, of both signs.
func erfEdges() []float64 {
	var xs []float64
	for _, e := range []float64{0x1p-28, 0x1p-1022, 0.84375, 1.25, 1 / 0.35, 6} {
		xs = join(xs, steps(e, 200), steps(-e, 200))
	}
	return xs
}

// TestErfAsMath checks Erf against math.Erf bit for bit where math
// computes what Erf reproduces (amd64 with FMA, whose Exp it calls).
func TestErfAsMath(t *testing.T) {
	onFMAAMD64(t)
	for _, tc := range []struct {
		name string
		xs   []float64
	}{
		{"specials", specials},
		{"bits", bitInputs(200000, 11)},
		{"[-7, 7]", inputs(200000, -7, 7)},
		{"near 0", join(inputs(50000, -1e-8, 1e-8), inputs(20000, -1e-300, 1e-300))},
		{"reduction edges", erfEdges()},
	} {
		t.Run(tc.name, func(t *testing.T) { sameAsMath(t, "Erf", Erf, math.Erf, tc.xs) })
	}
}

// TestErfNearMath checks Erf against math.Erf within one ulp on a grid
// of [−7, 7] by 1e-4 and at the reductions' edges, on every architecture
// (math.Erf may fuse, or use the CPU's Exp, where Erf does not), and its
// special values: Erf(±0) = ±0, Erf(±Inf) = ±1, Erf(NaN) = NaN.
func TestErfNearMath(t *testing.T) {
	xs := erfEdges()
	for i := -70000; i <= 70000; i++ {
		xs = append(xs, float64(i)*1e-4)
	}
	for _, x := range xs {
		got, want := Erf(x), math.Erf(x)
		if d := math.Abs(got - want); d > math.Abs(math.Nextafter(want, 0)-want) && d > 0x1p-1074 {
			t.Fatalf("Erf(%v) = %v, math.Erf %v: %g apart, over one ulp", x, got, want, d)
		}
	}
	negZero := math.Copysign(0, -1)
	for _, c := range []struct{ x, want float64 }{{0, 0}, {negZero, negZero}, {math.Inf(1), 1}, {math.Inf(-1), -1}, {6, 1}, {-30, -1}} {
		if got := Erf(c.x); got != c.want || math.Signbit(got) != math.Signbit(c.want) {
			t.Errorf("Erf(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	if !math.IsNaN(Erf(math.NaN())) {
		t.Errorf("Erf(NaN) = %v, want NaN", Erf(math.NaN()))
	}
}
