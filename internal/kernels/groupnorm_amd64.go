//go:build amd64 && !purego

package kernels

// Go declarations of GroupNorm's AVX2 float64 sums (groupnorm_amd64.s):
// eight chains at once, one a vector lane, each adding in memory order;
// n is a multiple of 8.

//go:noescape
func gnSums8AVX2(x *float32, stride, n int, s *[gnAsmLanes]float64)

//go:noescape
func gnSqSums8AVX2(x *float32, stride, n int, mean, q *[gnAsmLanes]float64)

//go:noescape
func gnPlaneSums8AVX2(dy, x *float32, stride, n int, mean, rstd float64, out *[2 * gnAsmLanes]float64)
