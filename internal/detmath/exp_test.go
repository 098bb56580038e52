package detmath

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// inputs returns n values spread over [lo, hi] and their edges.
func inputs(n int, lo, hi float64) []float64 {
	r := rand.New(rand.NewPCG(1, 2))
	xs := []float64{lo, hi, 0, math.Copysign(0, -1), 1, -1, 0.5, math.Ln2, 1e-300, -1e-300}
	for range n {
		xs = append(xs, lo+float64(r.Float64()*(hi-lo)))
	}
	return xs
}

// sameAsMath checks f against g bit for bit.
func sameAsMath(t *testing.T, name string, f, g func(float64) float64, xs []float64) {
	t.Helper()
	for _, x := range xs {
		if got, want := f(x), g(x); math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("%s(%v) = %v (%#x), math gives %v (%#x)", name, x, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
}

func TestExpLogAsMath(t *testing.T) {
	if runtime.GOARCH != "amd64" || !hasFMA() {
		t.Skip("math.Exp's bits are the FMA path of amd64's assembly")
	}
	sameAsMath(t, "Exp", Exp, math.Exp, inputs(300000, -760, 720))
	sameAsMath(t, "Exp", Exp, math.Exp, inputs(300000, -2, 2))
	sameAsMath(t, "Log", Log, math.Log, inputs(300000, 0, 1e6))
	sameAsMath(t, "Log", Log, math.Log, inputs(300000, 0.5, 2))
}
