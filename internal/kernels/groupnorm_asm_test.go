package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// gnSpecials are the values gnSpecialInput salts its data with: NaNs of
// several payloads and signs (a signalling one too), ±Inf, ±0, float32
// subnormals and the largest floats.
var gnSpecials = []float32{
	math.Float32frombits(0x7fc00000), math.Float32frombits(0x7fc12345), math.Float32frombits(0xffc00001),
	math.Float32frombits(0x7f800001), float32(math.Inf(1)), float32(math.Inf(-1)),
	float32(math.Copysign(0, -1)), 0, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
	math.Float32frombits(0x00012345), math.Float32frombits(0x807fffff), math.MaxFloat32, -math.MaxFloat32, 3e37,
}

// gnSpecialInput is random data of mixed scales with a special value at
// about rate of the places, and a few long runs of subnormals.
func gnSpecialInput(rng *rand.Rand, n int, rate float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch {
		case rng.Float64() < rate:
			x[i] = gnSpecials[rng.IntN(len(gnSpecials))]
		case rng.IntN(16) == 0:
			x[i] = float32(math.Ldexp(rng.Float64()*2-1, rng.IntN(280)-150))
		default:
			x[i] = float32(rng.NormFloat64()*3 + 1)
		}
	}
	if n > 0 && rng.IntN(4) == 0 {
		for i := rng.IntN(n); i < n && rng.IntN(64) != 0; i++ {
			x[i] = math.Float32frombits(rng.Uint32() & 0x807fffff) // ±subnormal
		}
	}
	return x
}

// gnChainSums is the forward pass's float64 chains of one group, as
// groupNormSet's scalar loop adds them.
func gnChainSums(xs []float32) (mean, ss float64) {
	var sum float64
	for _, v := range xs {
		sum += float64(v)
	}
	mean = sum / float64(len(xs))
	for _, v := range xs {
		d := float64(v) - mean
		ss += float64(d * d)
	}
	return mean, ss
}

func sameFloat64s(t *testing.T, what string, got, want []float64) {
	t.Helper()
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("%s: [%d] = %x (%#016x), pure Go %x (%#016x)", what, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
		}
	}
}

// TestGroupNormAsmSumsSameBits checks GroupNorm's AVX2 float64 sums
// (groupnorm_amd64.s) bit for bit against the Go chains: the forward
// means and sums of squares of eight groups, the backward plane sums of
// len(pg) planes (eight at a time, the rest four and one at a time), and
// the whole GroupNorm and GroupNormBackward of every set against the pure
// Go set and the reference forms, on data salted with NaN, ±Inf, −0 and
// subnormals, with group and plane counts that are and are not multiples
// of eight and planes of sizes that are and are not.
func TestGroupNormAsmSumsSameBits(t *testing.T) {
	var asm []*kernelSet
	for _, ks := range kernelSets() {
		if elementwiseAsm(ks) {
			asm = append(asm, ks)
		}
	}
	rng := rand.New(rand.NewPCG(93, 94))
	rates := []float64{0, 0.001, 0.05, 0.5}
	hws := []int{1, 3, 7, 8, 9, 16, 31, 64, 1024}
	if len(asm) > 0 {
		// The raw sums, m values a group (several planes of hw).
		for _, hw := range hws {
			for _, cg := range []int{1, 3, 8} {
				m := cg * hw
				for _, rate := range rates {
					x := gnSpecialInput(rng, gnAsmLanes*m, rate)
					mean, ss := groupNormSums8(x, m)
					for j := range gnAsmLanes {
						wm, ws := gnChainSums(x[j*m : (j+1)*m])
						what := fmt.Sprintf("m %d rate %g group %d", m, rate, j)
						sameFloat64s(t, what+" mean", []float64{mean[j], ss[j]}, []float64{wm, ws})
					}
				}
			}
		}
		for _, hw := range hws {
			for _, cg := range []int{1, 3, 7, 8, 9, 16, 17, 32} {
				for _, rate := range rates {
					dy, x := gnSpecialInput(rng, cg*hw, rate), gnSpecialInput(rng, cg*hw, rate)
					means := []float64{0, 0.25, -3, math.NaN(), math.Inf(1), float64(x[0])}
					rstds := []float64{1, 0.37, 1e30, 1e-30, math.Inf(1), 0}
					k := rng.IntN(len(means))
					mean, rstd := means[k], rstds[rng.IntN(len(rstds))]
					pg, pb := make([]float64, cg), make([]float64, cg)
					wg, wb := make([]float64, cg), make([]float64, cg)
					planeSumsN(generic, wg, wb, dy, x, hw, mean, rstd)
					for _, ks := range asm {
						what := fmt.Sprintf("%s hw %d planes %d rate %g mean %g rstd %g", ks.name, hw, cg, rate, mean, rstd)
						planeSumsN(ks, pg, pb, dy, x, hw, mean, rstd)
						sameFloat64s(t, what+" Σ dy·x̂", pg, wg)
						sameFloat64s(t, what+" Σ dy", pb, wb)
					}
					for j := range cg {
						g, b := planeSumsRef(dy[j*hw:(j+1)*hw], x[j*hw:(j+1)*hw], mean, rstd)
						sameFloat64s(t, fmt.Sprintf("hw %d plane %d rate %g reference", hw, j, rate), []float64{wg[j], wb[j]}, []float64{g, b})
					}
				}
			}
		}
	}
	// Whole layers, every set against the pure-Go set and the reference.
	var shapes []GroupNormShape
	for _, hw := range []int{1, 3, 7, 9, 64, 1024} {
		for _, cg := range []int{1, 3, 8, 16, 32} {
			for _, ng := range [][2]int{{1, 1}, {3, 3}, {8, 1}, {4, 2}, {9, 2}, {5, 4}} {
				if cg*hw*ng[0]*ng[1] > 1<<17 {
					continue
				}
				shapes = append(shapes, GroupNormShape{N: ng[0], C: cg * ng[1], HW: hw, Groups: ng[1]})
			}
		}
	}
	for _, s := range shapes {
		for _, rate := range []float64{0, 0.001, 0.05} {
			x, dy := gnSpecialInput(rng, s.In(), rate), gnSpecialInput(rng, s.In(), rate)
			gamma, beta := gnSpecialInput(rng, s.C, rate), randSlice(rng, s.C)
			wy, wstats := make([]float32, s.In()), make([]float64, s.Stats())
			groupNormSet(generic, wy, wstats, x, gamma, beta, s)
			ry, rstats := make([]float32, s.In()), make([]float64, s.Stats())
			groupNormRef(ry, rstats, x, gamma, beta, s)
			// The reference is other Go code: a NaN's sign and payload
			// there follow the compiler's choice of operand order, which
			// differs by architecture, so NaNs match any NaN.
			for i := range rstats {
				if w, r := wstats[i], rstats[i]; math.Float64bits(w) != math.Float64bits(r) && !(math.IsNaN(w) && math.IsNaN(r)) {
					t.Fatalf("%+v rate %g: go stats against reference: [%d] = %v, want %v", s, rate, i, w, r)
				}
			}
			wdx, wdg, wdb := make([]float32, s.In()), make([]float32, s.C), make([]float32, s.C)
			groupNormBackwardSet(generic, wdx, wdg, wdb, dy, x, gamma, wstats, s)
			for _, ks := range kernelSets() {
				what := fmt.Sprintf("%s %+v rate %g", ks.name, s, rate)
				y, stats := make([]float32, s.In()), make([]float64, s.Stats())
				groupNormSet(ks, y, stats, x, gamma, beta, s)
				sameFloat64s(t, what+" stats", stats, wstats)
				sameFloats(t, what+" y", y, wy)
				dx, dg, db := make([]float32, s.In()), make([]float32, s.C), make([]float32, s.C)
				groupNormBackwardSet(ks, dx, dg, db, dy, x, gamma, stats, s)
				sameFloats(t, what+" dx", dx, wdx)
				sameFloats(t, what+" dgamma", dg, wdg)
				sameFloats(t, what+" dbeta", db, wdb)
			}
		}
	}
}

// BenchmarkGroupNormSums times GroupNorm's float64 sums alone on the
// resnet20-gn first-stage shape: the forward means and sums of squares of
// every image group with the AVX2 sums, and the backward plane sums per
// kernel set.
func BenchmarkGroupNormSums(b *testing.B) {
	s := resnetGN
	cg := s.C / s.Groups
	m := cg * s.HW
	rng := rand.New(rand.NewPCG(95, 96))
	x, dy := randSlice(rng, s.In()), randSlice(rng, s.In())
	stats := make([]float64, s.Stats())
	groupNormSet(generic, make([]float32, s.In()), stats, x, randSlice(rng, s.C), randSlice(rng, s.C), s)
	pg, pb := make([]float64, cg), make([]float64, cg)
	for _, ks := range kernelSets() {
		if elementwiseAsm(ks) {
			b.Run("Forward/"+ks.name, func(b *testing.B) {
				for b.Loop() {
					for ng := 0; ng+gnAsmLanes <= s.N*s.Groups; ng += gnAsmLanes {
						groupNormSums8(x[ng*m:][:gnAsmLanes*m], m)
					}
				}
				b.ReportMetric(float64(4*s.In())*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			})
		}
		b.Run("Backward/"+ks.name, func(b *testing.B) {
			for b.Loop() {
				for ng := range s.N * s.Groups {
					planeSumsN(ks, pg, pb, dy[ng*m:][:m], x[ng*m:][:m], s.HW, stats[2*ng], stats[2*ng+1])
				}
			}
			b.ReportMetric(float64(8*s.In())*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}
