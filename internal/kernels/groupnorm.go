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
	groupNormSet(use(), y, stats, x, gamma, beta, s)
}

// gnLanes is the number of image groups whose sums GroupNorm and
// GroupNormBackward interleave: each group's float64 sum is still one
// chain of additions in memory order, but four chains run at once.
const gnLanes = 4

func groupNormSet(ks *kernelSet, y []float32, stats []float64, x, gamma, beta []float32, s GroupNormShape) {
	groupNormReLUSet(ks, y, stats, x, gamma, beta, s, false)
}

// groupNormReLUSet is groupNormSet, followed by ReLU where relu is set
// (GroupNormReLU).
func groupNormReLUSet(ks *kernelSet, y []float32, stats []float64, x, gamma, beta []float32, s GroupNormShape, relu bool) {
	s.check("GroupNorm", min(len(x), len(y)), len(stats), min(len(gamma), len(beta)))
	cg := s.C / s.Groups
	m := cg * s.HW
	groups := s.N * s.Groups
	ng := 0
	if elementwiseAsm(ks) && m >= 8 {
		for ; ng+gnAsmLanes <= groups; ng += gnAsmLanes {
			groupNormStats8(stats[2*ng:][:2*gnAsmLanes], x[ng*m:][:gnAsmLanes*m], m)
			for j := range gnAsmLanes {
				groupNormApply(ks, y, x, gamma, beta, stats, s, ng+j, relu)
			}
		}
	}
	for ; ng+gnLanes <= groups; ng += gnLanes {
		x0, x1, x2, x3 := x[ng*m:][:m], x[(ng+1)*m:][:m], x[(ng+2)*m:][:m], x[(ng+3)*m:][:m]
		var s0, s1, s2, s3 float64
		for i, v := range x0 {
			s0 += float64(v)
			s1 += float64(x1[i])
			s2 += float64(x2[i])
			s3 += float64(x3[i])
		}
		m0, m1, m2, m3 := s0/float64(m), s1/float64(m), s2/float64(m), s3/float64(m)
		var q0, q1, q2, q3 float64
		for i, v := range x0 {
			d0 := float64(v) - m0
			d1 := float64(x1[i]) - m1
			d2 := float64(x2[i]) - m2
			d3 := float64(x3[i]) - m3
			q0 += float64(d0 * d0)
			q1 += float64(d1 * d1)
			q2 += float64(d2 * d2)
			q3 += float64(d3 * d3)
		}
		for j, q := range [gnLanes]float64{q0, q1, q2, q3} {
			stats[2*(ng+j)], stats[2*(ng+j)+1] = [gnLanes]float64{m0, m1, m2, m3}[j], 1/math.Sqrt(q/float64(m)+GroupNormEps)
		}
		for j := range gnLanes {
			groupNormApply(ks, y, x, gamma, beta, stats, s, ng+j, relu)
		}
	}
	for ; ng < groups; ng++ {
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
		stats[2*ng], stats[2*ng+1] = mean, 1/math.Sqrt(ss/float64(m)+GroupNormEps)
		groupNormApply(ks, y, x, gamma, beta, stats, s, ng, relu)
	}
}

// gnAsmLanes is the number of chains GroupNorm's AVX2 sums carry at once,
// one a float64 vector lane: image groups in the forward pass, planes in
// the backward pass.
const gnAsmLanes = 8

// groupNormStats8 sets the statistics of the gnAsmLanes image groups of m
// values each at x, as groupNormSet's Go loops form them, with the AVX2
// sums.
func groupNormStats8(stats []float64, x []float32, m int) {
	mean, ss := groupNormSums8(x, m)
	for j := range gnAsmLanes {
		stats[2*j], stats[2*j+1] = mean[j], 1/math.Sqrt(ss[j]/float64(m)+GroupNormEps)
	}
}

// groupNormSums8 returns the means and the sums of squared deviations of
// the gnAsmLanes image groups of m values each at x: each group's sums
// are still one chain of additions in memory order, carried by one AVX2
// vector lane over the first m &^ 7 values and finished here.
func groupNormSums8(x []float32, m int) (mean, ss [gnAsmLanes]float64) {
	x = x[:gnAsmLanes*m]
	n := m &^ 7
	var sum [gnAsmLanes]float64
	gnSums8AVX2(&x[0], m, n, &sum)
	for j := range gnAsmLanes {
		s := sum[j]
		for _, v := range x[j*m+n : (j+1)*m] {
			s += float64(v)
		}
		mean[j] = s / float64(m)
	}
	gnSqSums8AVX2(&x[0], m, n, &mean, &ss)
	for j := range gnAsmLanes {
		q, mu := ss[j], mean[j]
		for _, v := range x[j*m+n : (j+1)*m] {
			d := float64(v) - mu
			q += float64(d * d)
		}
		ss[j] = q
	}
	return mean, ss
}

// groupNormApply writes y = float32(γ·x̂) + β for image group ng, whose
// statistics are in stats, and clips each plane with ReLU where relu is
// set.
func groupNormApply(ks *kernelSet, y []float32, x, gamma, beta []float32, stats []float64, s GroupNormShape, ng int, relu bool) {
	cg := s.C / s.Groups
	m := cg * s.HW
	mean, rstd := stats[2*ng], stats[2*ng+1]
	c0 := (ng % s.Groups) * cg
	for k := range cg {
		g, b := gamma[c0+k], beta[c0+k]
		src := x[ng*m+k*s.HW:][:s.HW]
		dst := y[ng*m+k*s.HW:][:s.HW]
		if n := s.HW &^ 3; n > 0 && elementwiseAsm(ks) {
			gnApplyAVX2(&dst[0], &src[0], n, mean, rstd, g, b)
			src, dst = src[n:], dst[n:]
		}
		for i, v := range src {
			xh := float32(float64(float64(v)-mean) * rstd)
			dst[i] = float32(g*xh) + b
		}
		if relu {
			plane := y[ng*m+k*s.HW:][:s.HW]
			reluSet(ks, plane, plane)
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
	groupNormBackwardSet(use(), dx, dgamma, dbeta, dy, x, gamma, stats, s)
}

// gnMaxC is the most channels whose float64 sums GroupNormBackward keeps on
// the stack, to read each plane once; wider layers read each plane twice.
const gnMaxC = 256

func groupNormBackwardSet(ks *kernelSet, dx, dgamma, dbeta, dy, x, gamma []float32, stats []float64, s GroupNormShape) {
	groupNormReLUBackwardSet(ks, dx, dgamma, dbeta, dy, x, gamma, stats, s, reluMask{})
}

// groupNormReLUBackwardSet is groupNormBackwardSet of the gradient through
// the ReLU r (none where r.y is nil): GroupNormReLUBackward.
func groupNormReLUBackwardSet(ks *kernelSet, dx, dgamma, dbeta, dy, x, gamma []float32, stats []float64, s GroupNormShape, r reluMask) {
	s.check("GroupNormBackward", min(len(x), len(dy)), len(stats), min(len(gamma), len(dgamma), len(dbeta)))
	if dx != nil && len(dx) < s.In() {
		panic(fmt.Sprintf("kernels: GroupNormBackward: dx has %d values, want ≥ %d", len(dx), s.In()))
	}
	if s.C > gnMaxC {
		// The ReLU's gradient of the whole batch first (in dx, or in
		// scratch), which the wide form reads plane by plane.
		groupNormBackwardWide(ks, dx, dgamma, dbeta, r.gradient(ks, dx, dy, 0, s.In()), x, gamma, stats, s)
		return
	}
	cg := s.C / s.Groups
	m := cg * s.HW
	// sg[c] and sb[c] sum Σ dy·x̂ and Σ dy of channel c image after image,
	// as the wide form does; pg and pb hold one group's plane sums.
	var sg, sb, pg, pb [gnMaxC]float64
	for ng := range s.N * s.Groups {
		mean, rstd := stats[2*ng], stats[2*ng+1]
		c0 := (ng % s.Groups) * cg
		g := r.gradient(ks, dx, dy, ng*m, m) // dy's group, through the ReLU
		planeSumsN(ks, pg[:cg], pb[:cg], g, x[ng*m:][:m], s.HW, mean, rstd)
		var s1, s2 float64 // Σ g and Σ g·x̂ over the group
		for k := range cg {
			sg[c0+k] += pg[k]
			sb[c0+k] += pb[k]
			gam := float64(gamma[c0+k])
			s1 += float64(gam * pb[k])
			s2 += float64(gam * pg[k])
		}
		if dx != nil {
			groupNormInputGrad(ks, dx[ng*m:][:m], g, x[ng*m:][:m], gamma, s, ng, mean, rstd, s1/float64(m), s2/float64(m))
		}
	}
	for c := range s.C {
		dgamma[c], dbeta[c] = float32(sg[c]), float32(sb[c])
	}
}

// groupNormBackwardWide is GroupNormBackward for more than gnMaxC channels:
// the same sums, each plane's read twice.
func groupNormBackwardWide(ks *kernelSet, dx, dgamma, dbeta, dy, x, gamma []float32, stats []float64, s GroupNormShape) {
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
		groupNormInputGrad(ks, dx[ng*m:][:m], dy[ng*m:][:m], x[ng*m:][:m], gamma, s, ng, mean, rstd, s1/float64(m), s2/float64(m))
	}
}

// groupNormInputGrad writes dx = rstd·(γ·dy − m1 − x̂·m2) for image group
// ng, whose values dx, dy and x hold. dx may be dy.
func groupNormInputGrad(ks *kernelSet, dx, dy, x, gamma []float32, s GroupNormShape, ng int, mean, rstd, m1, m2 float64) {
	cg := s.C / s.Groups
	c0 := (ng % s.Groups) * cg
	for k := range cg {
		off := k * s.HW
		gam := float64(gamma[c0+k])
		d := dx[off : off+s.HW]
		g := dy[off : off+s.HW]
		xs := x[off : off+s.HW]
		if n := s.HW &^ 3; n > 0 && elementwiseAsm(ks) {
			gnInputGradAVX2(&d[0], &g[0], &xs[0], n, mean, rstd, gam, m1, m2)
			d, g, xs = d[n:], g[n:], xs[n:]
		}
		for i, v := range xs {
			xh := normalised(v, mean, rstd)
			t := float64(gam*float64(g[i])) - m1 - float64(xh*m2)
			d[i] = float32(rstd * t)
		}
	}
}

// planeSumsN sets pg[k], pb[k] to the plane sums of plane k of the
// len(pg) planes of hw values of dy and x, gnAsmLanes planes at a time
// with the AVX2 sums where ks has them, then gnLanes at a time.
func planeSumsN(ks *kernelSet, pg, pb []float64, dy, x []float32, hw int, mean, rstd float64) {
	k := 0
	if elementwiseAsm(ks) && hw >= 8 {
		for ; k+gnAsmLanes <= len(pg); k += gnAsmLanes {
			planeSums8(pg[k:][:gnAsmLanes], pb[k:][:gnAsmLanes], dy[k*hw:][:gnAsmLanes*hw], x[k*hw:][:gnAsmLanes*hw], hw, mean, rstd)
		}
	}
	for ; k+gnLanes <= len(pg); k += gnLanes {
		pg[k], pb[k], pg[k+1], pb[k+1], pg[k+2], pb[k+2], pg[k+3], pb[k+3] = planeSums4(dy[k*hw:][:4*hw], x[k*hw:][:4*hw], hw, mean, rstd)
	}
	for ; k < len(pg); k++ {
		pg[k], pb[k] = planeSums(dy[k*hw:][:hw], x[k*hw:][:hw], mean, rstd)
	}
}

// planeSums8 is planeSums of gnAsmLanes consecutive planes of hw values,
// with the AVX2 sums over the first hw &^ 7 values of each plane: each
// plane's sums are still chains of additions in memory order, finished
// here.
func planeSums8(pg, pb []float64, dy, x []float32, hw int, mean, rstd float64) {
	n := hw &^ 7
	var out [2 * gnAsmLanes]float64
	gnPlaneSums8AVX2(&dy[0], &x[0], hw, n, mean, rstd, &out)
	for j := range gnAsmLanes {
		off := j*hw + n
		pg[j], pb[j] = planeSumsFrom(out[j], out[gnAsmLanes+j], dy[off:(j+1)*hw], x[off:(j+1)*hw], mean, rstd)
	}
}

// planeSums4 is planeSums of four consecutive planes of hw values at once.
func planeSums4(dy, x []float32, hw int, mean, rstd float64) (g0, b0, g1, b1, g2, b2, g3, b3 float64) {
	d0, d1, d2, d3 := dy[:hw], dy[hw:2*hw], dy[2*hw:3*hw], dy[3*hw:4*hw]
	x0, x1, x2, x3 := x[:hw], x[hw:2*hw], x[2*hw:3*hw], x[3*hw:4*hw]
	x1, x2, x3 = x1[:len(d0)], x2[:len(d0)], x3[:len(d0)]
	d1, d2, d3, x0 = d1[:len(d0)], d2[:len(d0)], d3[:len(d0)], x0[:len(d0)]
	for i, v := range d0 {
		e0, e1, e2, e3 := float64(v), float64(d1[i]), float64(d2[i]), float64(d3[i])
		g0 += float64(e0 * normalised(x0[i], mean, rstd))
		g1 += float64(e1 * normalised(x1[i], mean, rstd))
		g2 += float64(e2 * normalised(x2[i], mean, rstd))
		g3 += float64(e3 * normalised(x3[i], mean, rstd))
		b0 += e0
		b1 += e1
		b2 += e2
		b3 += e3
	}
	return
}

// planeSums returns Σ dy·x̂ and Σ dy over one plane, in float64.
func planeSums(dy, x []float32, mean, rstd float64) (sg, sb float64) {
	return planeSumsFrom(0, 0, dy, x, mean, rstd)
}

// planeSumsFrom is planeSums with the sums starting at sg and sb.
func planeSumsFrom(sg, sb float64, dy, x []float32, mean, rstd float64) (float64, float64) {
	x = x[:len(dy)]
	for i, g := range dy {
		gd := float64(g)
		sg += float64(gd * normalised(x[i], mean, rstd))
		sb += gd
	}
	return sg, sb
}
