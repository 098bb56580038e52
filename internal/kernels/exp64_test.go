package kernels

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// expEdges are the inputs where detmath.Exp changes case: zeros, NaNs
// with payloads, infinities, the overflow threshold, the subnormal
// results (k from −1023 to −1075), underflow, k beyond int32, integers.
func expEdges() []float64 {
	v := []float64{
		0, math.Copysign(0, -1), math.NaN(), math.Float64frombits(0x7ff0000000000123),
		math.Float64frombits(0xfff8000000abcdef), math.Inf(1), math.Inf(-1),
		math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
		0x1p-1022, -0x1p-1022, 1e-300, -1e-300, 0x1p-60, -0x1p-60,
		7.09782712893384e+02, 709.78, 709.79, 709.436, 709.437, 710, 1e3, 1e9, 2e9, 1e10, 1e300,
		-708, -708.39, -708.4, -708.5, -709, -709.1, -720, -740, -744.4, -745, -745.1, -745.13, -745.14, -745.2, -746, -750, -800,
		-1e9, -1.4e9, -1.5e9, -2e9, -3e9, -1e10, -1e300,
		0.5 * math.Ln2, -0.5 * math.Ln2, math.Ln2, -math.Ln2,
	}
	for i := -800; i <= 720; i++ {
		v = append(v, float64(i), float64(i)+0.5)
	}
	// k = RoundToEven(x·log₂e) on either side of the case bounds.
	for _, k := range []float64{-1076, -1075.5, -1075, -1074.5, -1023.5, -1023, -1022.5, -1022, 1023, 1023.5, 1024, -0x1p31 - 1, -0x1p31, 0x1p31 - 1, 0x1p31} {
		x := k / math.Log2E
		for d := -4; d <= 4; d++ {
			b := int64(math.Float64bits(x)) + int64(d)
			v = append(v, math.Float64frombits(uint64(b)))
		}
	}
	return v
}

// TestExp64sSameBits checks that exp64s gives detmath.Exp's bits on every
// kernel set: the edges, random values over the whole range and near 0,
// random bit patterns, lengths 0 to 29 (the tails after 12-value steps)
// and unaligned starts.
func TestExp64sSameBits(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	src := expEdges()
	for range 200000 {
		src = append(src, r.Float64()*1500-770, r.NormFloat64()*3, r.Float64()*80-40)
	}
	for range 20000 {
		src = append(src, math.Float64frombits(r.Uint64()))
	}
	r.Shuffle(len(src), func(i, j int) { src[i], src[j] = src[j], src[i] })
	src = append(src, expEdges()...) // again, in their order: the special lanes side by side
	want := make([]float64, len(src))
	for i, x := range src {
		want[i] = detmath.Exp(x)
	}
	for _, ks := range kernelSets() {
		got := make([]float64, len(src))
		exp64s(ks, got, src)
		for i := range src {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%s: exp64s(%v [%#x]) = %v [%#x], want %v [%#x]", ks.name, src[i], math.Float64bits(src[i]),
					got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
			}
		}
		for n := 0; n <= 29; n++ {
			for off := 0; off < 3; off++ {
				in := append([]float64(nil), src[off:off+n]...)
				exp64s(ks, in, in) // in place
				for i := range in {
					if math.Float64bits(in[i]) != math.Float64bits(want[off+i]) {
						t.Fatalf("%s: n %d off %d: value %d = %v, want %v", ks.name, n, off, i, in[i], want[off+i])
					}
				}
			}
		}
	}
}
