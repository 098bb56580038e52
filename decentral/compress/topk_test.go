package compress

import (
	"cmp"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// sortTopK returns, by a full sort, the indices of the k entries of v of
// largest magnitude, ties to the lower index, in increasing order.
func sortTopK(v []float32, k int) []int {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		ma, mb := math.Abs(float64(v[a])), math.Abs(float64(v[b]))
		if c := cmp.Compare(mb, ma); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	idx = idx[:k]
	slices.Sort(idx)
	return idx
}

// TestTopKSelects checks top-k keeps exactly the entries a full sort picks,
// on vectors with distinct magnitudes, many ties, signed zeros, infinities
// and subnormals, for k = 1 through k = p.
func TestTopKSelects(t *testing.T) {
	gens := []struct {
		name string
		gen  func(r *rand.Rand) float32
	}{
		{"normal", func(r *rand.Rand) float32 { return float32(r.NormFloat64()) }},
		{"ties", func(r *rand.Rand) float32 { return float32(r.IntN(7) - 3) }},
		{"two-values", func(r *rand.Rand) float32 { return []float32{-1, 1, -2}[r.IntN(3)] }},
		{"close", func(r *rand.Rand) float32 { return math.Nextafter32(1, float32(r.IntN(3)-1)*2) }},
		{"wide", func(r *rand.Rand) float32 {
			x := float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(60)-30)))
			switch r.IntN(20) {
			case 0:
				return float32(math.Inf(1 - 2*r.IntN(2)))
			case 1:
				return math.Float32frombits(uint32(r.IntN(100)) | uint32(r.IntN(2))<<31) // subnormal or ±0
			}
			return x
		}},
	}
	sizes := []int{1, 2, 7, 8, 9, 100, 1000, 4099}
	fracs := []float64{1e-9, 0.01, 0.1, 0.5, 0.999, 1}
	r := rand.New(rand.NewPCG(5, 6))
	for _, g := range gens {
		for _, p := range sizes {
			v := make([]float32, p)
			for i := range v {
				v[i] = g.gen(r)
			}
			for _, f := range fracs {
				c := topK{f: f}
				k := K(f, p)
				want := sortTopK(v, k)
				msg := c.Encode(nil, v, 0)
				for j, i := range want {
					got := int(binary.LittleEndian.Uint32(msg[4*j:]))
					val := math.Float32frombits(binary.LittleEndian.Uint32(msg[4*k+4*j:]))
					if got != i || math.Float32bits(val) != math.Float32bits(v[i]) {
						t.Fatalf("%s, p = %d, %s (k = %d): kept #%d is index %d value %g, want index %d value %g",
							g.name, p, c, k, j, got, val, i, v[i])
					}
				}
			}
		}
	}
}

// TestTopKError checks the deterministic bound ‖v − top_k(v)‖² ≤ (1 − k/p)‖v‖².
func TestTopKError(t *testing.T) {
	for _, p := range []int{10, 1000} {
		for _, f := range []float64{0.01, 0.2, 0.7} {
			c := topK{f: f}
			v := randVec(p, 17)
			out := make([]float32, p)
			if err := c.Decode(out, c.Encode(nil, v, 0)); err != nil {
				t.Fatal(err)
			}
			var e, n float64
			for i := range v {
				d := float64(v[i]) - float64(out[i])
				e += d * d
				n += float64(v[i]) * float64(v[i])
			}
			if bound := (1 - float64(K(f, p))/float64(p)) * n; e > bound {
				t.Errorf("%s, p = %d: ‖v − Q(v)‖² = %g, want ≤ %g", c, p, e, bound)
			}
		}
	}
}
