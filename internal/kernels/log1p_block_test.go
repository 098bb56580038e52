package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// log1pEdges are detmath.Log1p's special values and range bounds with
// their neighbours: x where 1 + x is a power of 2 or near √2 times one,
// or has a mantissa of all ones (the normalised mantissa 0).
func log1pEdges() []float64 {
	v := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), -1, -2, -0.5, math.MaxFloat64}
	v = neighbours(v, 3, math.SmallestNonzeroFloat64, 0x1p-1022, 0x1p-54, 0x1p-29, log1pSqrt2M1, log1pSqrt2HalfM1, 0x1p53, 1, 0x1p-20)
	for e := -60; e <= 60; e++ {
		p := math.Ldexp(1, e)
		v = neighbours(v, 4, p-1, p*math.Sqrt2-1, p)
		v = neighbours(v, 6, math.Float64frombits(math.Float64bits(p)|0x000fffffffffffff)-1)
	}
	return v
}

// TestLog1psSameBits checks that log1ps gives detmath.Log1p's bits on
// every kernel set: the edges, Softplus's arguments (eˣ of float32s),
// random values and bit patterns, block lengths 0 to expBlock, in place.
func TestLog1psSameBits(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	src := log1pEdges()
	for range 50000 {
		src = append(src, detmath.Exp(float64(float32(r.NormFloat64()*3))), detmath.Exp(float64(float32(r.Float64()*120-100))),
			r.Float64()*2-0.9, r.NormFloat64()*1e-6, math.Float64frombits(r.Uint64()))
	}
	r.Shuffle(len(src), func(i, j int) { src[i], src[j] = src[j], src[i] })
	src = append(src, log1pEdges()...)
	want := make([]float64, len(src))
	for i, x := range src {
		want[i] = detmath.Log1p(x)
	}
	check := func(t *testing.T, what string, got, want, src []float64) {
		t.Helper()
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("%s: log1ps(%v [%#x]) = %v [%#x], want %v [%#x]", what, src[i], math.Float64bits(src[i]),
					got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
			}
		}
	}
	for _, ks := range kernelSets() {
		got := make([]float64, len(src))
		for i := 0; i < len(src); i += expBlock {
			e := min(i+expBlock, len(src))
			log1ps(ks, got[i:e], src[i:e])
		}
		check(t, ks.name, got, want, src)
		for n := 0; n <= expBlock; n++ {
			off := 3 * n
			in := append([]float64(nil), src[off:off+n]...)
			log1ps(ks, in, in)
			check(t, ks.name+" in place", in, want[off:off+n], src[off:off+n])
		}
	}
}

// BenchmarkLog1ps times log1ps on the kernel set in use over blocks of
// e^x, x from N(0, 3²): Softplus's arguments.
func BenchmarkLog1ps(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float64, 1<<16)
	for i := range x {
		x[i] = detmath.Exp(float64(float32(r.NormFloat64() * 3)))
	}
	y := make([]float64, len(x))
	ks := use()
	b.Run("blocked", func(b *testing.B) {
		for range b.N {
			for i := 0; i < len(x); i += expBlock {
				log1ps(ks, y[i:i+expBlock], x[i:i+expBlock])
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)), "ns/value")
	})
	b.Run("detmath", func(b *testing.B) {
		for range b.N {
			for i, v := range x {
				y[i] = detmath.Log1p(v)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)), "ns/value")
	})
}
