package kernels

import (
	"fmt"
	"math"
)

// GroupNormEps is the ε GroupNorm adds to the variance (torch.nn.GroupNorm's
// default).
const GroupNormEps = 1e-5

// GroupNormShape describes group normalisation of N images of C channels
// of HW elements each (NCHW), the channels split into Groups groups of
// C/Groups consecutive channels: each image's group of C/Groups·HW values
// is normalised on its own.
type GroupNormShape struct {
	N, C, HW, Groups int
}

// In is the number of elements of the batch, N·C·HW.
func (s GroupNormShape) In() int { return s.N * s.C * s.HW }

// Stats is the number of float64 statistics the forward pass keeps for the
// backward pass: a mean and a reciprocal standard deviation per image and
// group.
func (s GroupNormShape) Stats() int { return 2 * s.N * s.Groups }

// Validate reports whether s describes a group normalisation: positive
// sizes and groups dividing the channels.
func (s GroupNormShape) Validate() error {
	if s.N < 1 || s.C < 1 || s.HW < 1 || s.Groups < 1 || s.C%s.Groups != 0 {
		return fmt.Errorf("group norm shape %+v: want positive sizes and %d groups dividing %d channels", s, s.Groups, s.C)
	}
	return nil
}

func (s GroupNormShape) check(op string, x, stats, gamma int) {
	if err := s.Validate(); err != nil {
		panic("kernels: " + op + ": " + err.Error())
	}
	if x < s.In() || stats < s.Stats() || gamma < s.C {
		panic(fmt.Sprintf("kernels: %s: %d values, %d statistics and %d scales for %+v", op, x, stats, gamma, s))
	}
}

// GroupNorm sets y = γ_c·x̂ + β_c, where x̂ is x normalised over its image
// and group with the biased variance and GroupNormEps, as
// torch.nn.GroupNorm does; gamma and beta hold C values. The mean and the
// variance are summed in float64 in memory order (the variance from the
// mean, in a second pass), x̂ = (x − mean)·rstd is rounded to float32, and
// y = float32(γ·x̂) + β in float32. stats receives each image and group's
// mean and rstd = 1/√(var + ε) (s.Stats() values), which
// GroupNormBackward reads. It panics if s is invalid or a slice is short.
func GroupNorm(y []float32, stats []float64, x, gamma, beta []float32, s GroupNormShape) {
	s.check("GroupNorm", min(len(x), len(y)), len(stats), min(len(gamma), len(beta)))
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

// normalised returns x̂ of one value as GroupNorm forms it.
func normalised(v float32, mean, rstd float64) float64 {
	return float64(float32(float64(float64(v)-mean) * rstd))
}

// GroupNormBackward is the adjoint of GroupNorm given its input x, gamma
// and the statistics it recorded: it sets dgamma[c] = Σ dy·x̂ and
// dbeta[c] = Σ dy over channel c of every image (float64 sums within a
// plane, then across images in order), and, unless dx is nil,
//
//	dx = rstd·(g − mean_group(g) − x̂·mean_group(g·x̂)),  g = γ_c·dy,
//
// in float64, rounded to float32 once. x̂ is recomputed from x as the
// forward pass rounded it. It panics if s is invalid or a slice is short.
func GroupNormBackward(dx, dgamma, dbeta, dy, x, gamma []float32, stats []float64, s GroupNormShape) {
	s.check("GroupNormBackward", min(len(x), len(dy)), len(stats), min(len(gamma), len(dgamma), len(dbeta)))
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
			pg, pb := planeSums(dy[off:off+s.HW], x[off:off+s.HW], mean, rstd)
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
			pg, pb := planeSums(dy[off:off+s.HW], x[off:off+s.HW], mean, rstd)
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

// planeSums returns Σ dy·x̂ and Σ dy over one plane, in float64.
func planeSums(dy, x []float32, mean, rstd float64) (sg, sb float64) {
	x = x[:len(dy)]
	for i, g := range dy {
		gd := float64(g)
		sg += float64(gd * normalised(x[i], mean, rstd))
		sb += gd
	}
	return sg, sb
}
