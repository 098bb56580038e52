package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The GroupNorm kernels as they were before the interleaved and vector
// forms (PERFLOG §13): the reference the new ones must match bit for bit.

func groupNormRef(y []float32, stats []float64, x, gamma, beta []float32, s GroupNormShape) {
	s.check("groupNormRef", min(len(x), len(y)), len(stats), min(len(gamma), len(beta)))
	cg := s.C / s.Groups
	m := cg * s.HW
	for ng := range s.N * s.Groups {
		xs := x[ng*m : (ng+1)*m]
		var sum float64
		for _, v := range xs {
			sum += float64(v)
		}
		mean := sum / float64(m)
		var ss float64
		for _, v := range xs {
			d := float64(v) - mean
			ss += float64(d * d)
		}
		rstd := 1 / math.Sqrt(ss/float64(m)+GroupNormEps)
		stats[2*ng], stats[2*ng+1] = mean, rstd
		c0 := (ng % s.Groups) * cg
		for k := range cg {
			g, b := gamma[c0+k], beta[c0+k]
			src := xs[k*s.HW : (k+1)*s.HW]
			dst := y[ng*m+k*s.HW:][:s.HW]
			for i, v := range src {
				xh := float32(float64(float64(v)-mean) * rstd)
				dst[i] = float32(g*xh) + b
			}
		}
	}
}

func groupNormBackwardRef(dx, dgamma, dbeta, dy, x, gamma []float32, stats []float64, s GroupNormShape) {
	s.check("groupNormBackwardRef", min(len(x), len(dy)), len(stats), min(len(gamma), len(dgamma), len(dbeta)))
	if dx != nil && len(dx) < s.In() {
		panic(fmt.Sprintf("kernels: GroupNormBackward: dx has %d values, want ≥ %d", len(dx), s.In()))
	}
	cg := s.C / s.Groups
	for c := range s.C {
		var sg, sb float64
		for n := range s.N {
			ng := n*s.Groups + c/cg
			mean, rstd := stats[2*ng], stats[2*ng+1]
			off := (n*s.C + c) * s.HW
			pg, pb := planeSumsRef(dy[off:off+s.HW], x[off:off+s.HW], mean, rstd)
			sg += pg
			sb += pb
		}
		dgamma[c], dbeta[c] = float32(sg), float32(sb)
	}
	if dx == nil {
		return
	}
	m := cg * s.HW
	for ng := range s.N * s.Groups {
		mean, rstd := stats[2*ng], stats[2*ng+1]
		c0 := (ng % s.Groups) * cg
		var s1, s2 float64 // Σ g and Σ g·x̂ over the group
		for k := range cg {
			off := ng*m + k*s.HW
			pg, pb := planeSumsRef(dy[off:off+s.HW], x[off:off+s.HW], mean, rstd)
			gam := float64(gamma[c0+k])
			s1 += float64(gam * pb)
			s2 += float64(gam * pg)
		}
		m1, m2 := s1/float64(m), s2/float64(m)
		for k := range cg {
			off := ng*m + k*s.HW
			gam := float64(gamma[c0+k])
			d := dx[off : off+s.HW]
			for i, v := range x[off : off+s.HW] {
				xh := normalised(v, mean, rstd)
				t := float64(gam*float64(dy[off+i])) - m1 - float64(xh*m2)
				d[i] = float32(rstd * t)
			}
		}
	}
}

// planeSumsRef returns Σ dy·x̂ and Σ dy over one plane, in float64.
func planeSumsRef(dy, x []float32, mean, rstd float64) (sg, sb float64) {
	x = x[:len(dy)]
	for i, g := range dy {
		gd := float64(g)
		sg += float64(gd * normalised(x[i], mean, rstd))
		sb += gd
	}
	return sg, sb
}

// TestGroupNormSameBitsAsBefore checks every set's GroupNorm and
// GroupNormBackward against the reference forms, bit for bit, on shapes
// that do and do not fill the interleaved lanes, and on a layer wider
// than gnMaxC.
func TestGroupNormSameBitsAsBefore(t *testing.T) {
	rng := rand.New(rand.NewPCG(91, 92))
	shapes := append([]GroupNormShape{
		{N: 3, C: 16, HW: 37, Groups: 2}, {N: 2, C: 12, HW: 8, Groups: 2}, {N: 5, C: 6, HW: 13, Groups: 1},
		{N: 2, C: 300, HW: 5, Groups: 3}, {N: 4, C: 8, HW: 33, Groups: 4},
	}, groupNormShapes...)
	for _, ks := range kernelSets() {
		for _, s := range shapes {
			for _, offset := range []float32{0, 30} {
				what := fmt.Sprintf("%s %+v offset %g", ks.name, s, offset)
				x, gamma, beta, dy := randSlice(rng, s.In()), randSlice(rng, s.C), randSlice(rng, s.C), randSlice(rng, s.In())
				for i := range x {
					x[i] += offset
				}
				y, stats := make([]float32, s.In()), make([]float64, s.Stats())
				wy, wstats := make([]float32, s.In()), make([]float64, s.Stats())
				groupNormSet(ks, y, stats, x, gamma, beta, s)
				groupNormRef(wy, wstats, x, gamma, beta, s)
				sameFloats(t, what+" y", y, wy)
				for i := range wstats {
					if math.Float64bits(stats[i]) != math.Float64bits(wstats[i]) {
						t.Fatalf("%s: stats[%d] = %v, want %v", what, i, stats[i], wstats[i])
					}
				}
				dx, dg, db := make([]float32, s.In()), make([]float32, s.C), make([]float32, s.C)
				wdx, wdg, wdb := make([]float32, s.In()), make([]float32, s.C), make([]float32, s.C)
				groupNormBackwardSet(ks, dx, dg, db, dy, x, gamma, stats, s)
				groupNormBackwardRef(wdx, wdg, wdb, dy, x, gamma, stats, s)
				sameFloats(t, what+" dx", dx, wdx)
				sameFloats(t, what+" dgamma", dg, wdg)
				sameFloats(t, what+" dbeta", db, wdb)
				groupNormBackwardSet(ks, nil, dg, db, dy, x, gamma, stats, s)
				sameFloats(t, what+" dgamma without dx", dg, wdg)
				sameFloats(t, what+" dbeta without dx", db, wdb)
			}
		}
	}
}
