package detmath

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// onFMAAMD64 skips t unless math computes here what this package
// reproduces: amd64, whose assembly Exp takes its FMA path on this CPU,
// built without GOAMD64=v3 (which fuses math's pure-Go functions).
func onFMAAMD64(t *testing.T) {
	t.Helper()
	if runtime.GOARCH != "amd64" || !hasFMA() || mathFuses {
		t.Skip("math's bits here are not those of plain amd64 with FMA")
	}
}

// specials are the values every function meets at its edges: zeros,
// infinities, NaN, subnormals and the ends of the normal range.
var specials = []float64{
	0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
	math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
	1e-310, -1e-310, 0x1p-1022, -0x1p-1022, math.Nextafter(0x1p-1022, 0),
	math.MaxFloat64, -math.MaxFloat64, 1, -1, 0.5, -0.5, 2, -2,
	math.Nextafter(1, 0), math.Nextafter(1, 2), math.Nextafter(-1, 0), math.Nextafter(-1, -2),
}

// bitInputs returns n float64s with uniformly random bits (every exponent,
// sign, subnormals, infinities and NaNs), from integers only.
func bitInputs(n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = math.Float64frombits(r.Uint64())
	}
	return xs
}

// steps returns x, x's n neighbours above and n below, going ulp by ulp.
func steps(x float64, n int) []float64 {
	xs := []float64{x}
	up, down := x, x
	for range n {
		up, down = math.Nextafter(up, math.Inf(1)), math.Nextafter(down, math.Inf(-1))
		xs = append(xs, up, down)
	}
	return xs
}

// join concatenates slices of inputs.
func join(xss ...[]float64) []float64 {
	var all []float64
	for _, xs := range xss {
		all = append(all, xs...)
	}
	return all
}

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
