package kernels

import (
	"fmt"
	"math"
)

// ChannelNormShape describes layer normalisation across the channels at
// each position of N images of C channels of HW positions each (NCHW):
// ConvNeXt's channels_first LayerNorm, each of the N·HW columns of C
// values normalised on its own.
type ChannelNormShape struct {
	N, C, HW int
}

// In is the number of elements of the batch, N·C·HW.
func (s ChannelNormShape) In() int { return s.N * s.C * s.HW }

// Stats is the number of float64 statistics the forward pass keeps for
// the backward pass: a mean and a reciprocal standard deviation per image
// and position.
func (s ChannelNormShape) Stats() int { return 2 * s.N * s.HW }

// Scratch is the number of float64s of room ChannelNormBackward takes.
func (s ChannelNormShape) Scratch() int { return 2 * (s.HW + s.C) }

// Validate reports whether s describes a channel normalisation: positive
// sizes.
func (s ChannelNormShape) Validate() error {
	if s.N < 1 || s.C < 1 || s.HW < 1 {
		return fmt.Errorf("channel norm shape %+v: want positive sizes", s)
	}
	return nil
}

func (s ChannelNormShape) check(op string, x, stats, gamma int) {
	if err := s.Validate(); err != nil {
		panic("kernels: " + op + ": " + err.Error())
	}
	if x < s.In() || stats < s.Stats() || gamma < s.C {
		panic(fmt.Sprintf("kernels: %s: %d values, %d statistics and %d scales for %+v", op, x, stats, gamma, s))
	}
}

// ChannelNorm sets y = γ_c·x̂ + β_c, where x̂ is x normalised across the C
// channels at its image and position with the biased variance and eps,
// as PyTorch's nn.LayerNorm(C) of x.permute(0, 2, 3, 1) does; gamma and
// beta hold C values. Each position's mean and variance (the latter from
// the mean, in a second pass) are float64 sums over the channels in order,
// x̂ = (x − mean)·rstd stays in float64, and y = float32(γ·x̂ + β) with
// the product rounded to float64: the same bits on every kernel set and
// architecture. stats receives the means of every image and position, then
// their rstd = 1/√(var + eps) (s.Stats() values), which
// ChannelNormBackward reads. It panics if s is invalid or a slice is short.
func ChannelNorm(y []float32, stats []float64, x, gamma, beta []float32, eps float64, s ChannelNormShape) {
	s.check("ChannelNorm", min(len(x), len(y)), len(stats), min(len(gamma), len(beta)))
	hw, m := s.HW, s.N*s.HW
	inv := float64(s.C)
	for n := range s.N {
		mean, rstd := stats[n*hw:][:hw], stats[m+n*hw:][:hw]
		img, out := x[n*s.C*hw:][:s.C*hw], y[n*s.C*hw:][:s.C*hw]
		clear(mean)
		clear(rstd)
		// Each position's sums run over the channels in order; the planes
		// are read one after another, so that memory is read in order.
		for c := range s.C {
			for p, v := range img[c*hw:][:hw] {
				mean[p] += float64(v)
			}
		}
		for p := range mean {
			mean[p] /= inv
		}
		for c := range s.C {
			for p, v := range img[c*hw:][:hw] {
				d := float64(v) - mean[p]
				rstd[p] += float64(d * d)
			}
		}
		for p, q := range rstd {
			rstd[p] = 1 / math.Sqrt(q/inv+eps)
		}
		for c := range s.C {
			g, b := float64(gamma[c]), float64(beta[c])
			dst := out[c*hw:][:hw]
			for p, v := range img[c*hw:][:hw] {
				xh := float64((float64(v) - mean[p]) * rstd[p])
				dst[p] = float32(float64(g*xh) + b)
			}
		}
	}
}

// ChannelNormBackward is the adjoint of ChannelNorm given its input x,
// gamma and the statistics it recorded: it sets dgamma[c] = Σ dy·x̂ and
// dbeta[c] = Σ dy over channel c of every image and position (float64
// sums over each plane in order, added image after image), and, unless dx
// is nil,
//
//	dx = rstd·(g − mean_c(g) − x̂·mean_c(g·x̂)),  g = γ_c·dy,
//
// its sums over the channels at each position in order, in float64,
// rounded to float32 once. x̂ is recomputed from x as the forward pass
// formed it. scratch holds s.Scratch() values. It panics if s is invalid
// or a slice is short.
func ChannelNormBackward(dx, dgamma, dbeta, dy, x, gamma []float32, stats, scratch []float64, s ChannelNormShape) {
	s.check("ChannelNormBackward", min(len(x), len(dy)), len(stats), min(len(gamma), len(dgamma), len(dbeta)))
	if dx != nil && len(dx) < s.In() {
		panic(fmt.Sprintf("kernels: ChannelNormBackward: dx has %d values, want ≥ %d", len(dx), s.In()))
	}
	if len(scratch) < s.Scratch() {
		panic(fmt.Sprintf("kernels: ChannelNormBackward: %d values of scratch, want ≥ %d", len(scratch), s.Scratch()))
	}
	hw, m := s.HW, s.N*s.HW
	inv := float64(s.C)
	sg, sb := scratch[:s.C], scratch[s.C:2*s.C]
	s1, s2 := scratch[2*s.C:][:hw], scratch[2*s.C+hw:][:hw]
	clear(sg)
	clear(sb)
	for n := range s.N {
		mean, rstd := stats[n*hw:][:hw], stats[m+n*hw:][:hw]
		off := n * s.C * hw
		clear(s1)
		clear(s2)
		for c := range s.C {
			gam := float64(gamma[c])
			xs, ds := x[off+c*hw:][:hw], dy[off+c*hw:][:hw]
			var pg, pb float64
			for p, v := range xs {
				xh := float64((float64(v) - mean[p]) * rstd[p])
				d := float64(ds[p])
				pg += float64(d * xh)
				pb += d
				g := float64(d * gam)
				s1[p] += g
				s2[p] += float64(g * xh)
			}
			sg[c] += pg
			sb[c] += pb
		}
		if dx == nil {
			continue
		}
		for c := range s.C {
			gam := float64(gamma[c])
			xs, ds, out := x[off+c*hw:][:hw], dy[off+c*hw:][:hw], dx[off+c*hw:][:hw]
			for p, v := range xs {
				xh := float64((float64(v) - mean[p]) * rstd[p])
				g := float64(float64(ds[p]) * gam)
				t := float64(xh * (s2[p] / inv))
				out[p] = float32(float64((g - s1[p]/inv - t) * rstd[p]))
			}
		}
	}
	for c := range s.C {
		dgamma[c], dbeta[c] = float32(sg[c]), float32(sb[c])
	}
}
