package compress

import "testing"

// benchP is the MNIST CNN's parameter count.
const benchP = 62006

// benchSpecs are the compressors the benchmarks time.
var benchSpecs = []string{"none", "topk:0.01", "topk:0.1", "randk:0.01", "randk:0.1", "qsgd:7", "qsgd:255", "sign"}

// BenchmarkEncode times one Encode of a p = 62,006 vector into a buffer with
// room, a new seed each time; bytes/s count the 4p input bytes.
func BenchmarkEncode(b *testing.B) {
	v := randVec(benchP, 1)
	for _, spec := range benchSpecs {
		b.Run(spec, func(b *testing.B) {
			c := mustParse(b, spec)
			dst := make([]byte, 0, c.Size(benchP))
			b.ReportAllocs()
			b.SetBytes(4 * benchP)
			var seed uint64
			for b.Loop() {
				dst = c.Encode(dst[:0], v, seed)
				seed++
			}
		})
	}
}

// BenchmarkDecode times one Decode of a p = 62,006 message; bytes/s count
// the 4p output bytes.
func BenchmarkDecode(b *testing.B) {
	v := randVec(benchP, 1)
	for _, spec := range benchSpecs {
		b.Run(spec, func(b *testing.B) {
			c := mustParse(b, spec)
			msg := c.Encode(nil, v, 1)
			out := make([]float32, benchP)
			b.ReportAllocs()
			b.SetBytes(4 * benchP)
			for b.Loop() {
				if err := c.Decode(out, msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
