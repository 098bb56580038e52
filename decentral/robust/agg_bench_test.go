package robust

import (
	"fmt"
	"testing"
)

// benchP is the MNIST CNN's parameter count (SPEC §5).
const benchP = 18378

// BenchmarkAggregate times one node's aggregate of its own vector and d
// neighbours' (p = 18,378 floats each, the MNIST CNN's) under each rule;
// ns/term is the time per (d + 1)·p values: flat in d for mean and clip
// (O(d·p)), growing like log d for trim and median, which sort d + 1
// values per coordinate (O(d·p·log d)).
func BenchmarkAggregate(b *testing.B) {
	for _, spec := range []string{"mean", "clip:1", "clip", "trim:1", "median"} {
		agg, err := ParseAggregate(spec)
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range []int{2, 4, 8, 16} {
			b.Run(fmt.Sprintf("%s/degree=%d", spec, d), func(b *testing.B) {
				own := make([]float32, benchP)
				vecs := make([][]float32, d)
				ws := make([]float32, d)
				for n := range vecs {
					vecs[n] = make([]float32, benchP)
					for k := range vecs[n] {
						vecs[n][k] = float32((k*(n+3))%11) * 0.1
					}
					ws[n] = 1 / float32(d+1)
				}
				dst := make([]float32, benchP)
				var s Scratch
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					agg.Aggregate(dst, own, 1/float32(d+1), ws, vecs, &s)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64((d+1)*benchP), "ns/term")
			})
		}
	}
}
