package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

var groupNormShapes = []GroupNormShape{
	{N: 1, C: 2, HW: 1, Groups: 1},
	{N: 2, C: 4, HW: 9, Groups: 2},   // ResNet's two groups
	{N: 3, C: 6, HW: 16, Groups: 3},  // three channels a group
	{N: 2, C: 5, HW: 7, Groups: 5},   // instance norm
	{N: 2, C: 16, HW: 64, Groups: 2}, // ResNet's first stage, small
}

// refGroupNorm is group normalisation in float64: the loss Σ r·y for
// fixed weights r, with y = γ·x̂ + β.
func refGroupNorm(x, gamma, beta, r []float64, s GroupNormShape) float64 {
	cg := s.C / s.Groups
	m := cg * s.HW
	var loss float64
	for ng := range s.N * s.Groups {
		xs := x[ng*m : (ng+1)*m]
		var mean, v float64
		for _, a := range xs {
			mean += a
		}
		mean /= float64(m)
		for _, a := range xs {
			v += (a - mean) * (a - mean)
		}
		rstd := 1 / math.Sqrt(v/float64(m)+1e-5)
		for i, a := range xs {
			c := (ng%s.Groups)*cg + i/s.HW
			loss += r[ng*m+i] * (gamma[c]*(a-mean)*rstd + beta[c])
		}
	}
	return loss
}

// TestGroupNormMatchesReference checks the forward pass against float64
// group normalisation, and every gradient (input, scales, shifts) against
// float64 central differences of it; with the input far from zero mean, as
// a convolution's output may be.
func TestGroupNormMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	for _, s := range groupNormShapes {
		for _, offset := range []float32{0, 30} {
			what := fmt.Sprintf("%+v offset %g", s, offset)
			x, gamma, beta, dy := randSlice(rng, s.In()), randSlice(rng, s.C), randSlice(rng, s.C), randSlice(rng, s.In())
			for i := range x {
				x[i] += offset
			}
			y, stats := make([]float32, s.In()), make([]float64, s.Stats())
			GroupNorm(y, stats, x, gamma, beta, s)
			dx, dg, db := make([]float32, s.In()), make([]float32, s.C), make([]float32, s.C)
			GroupNormBackward(dx, dg, db, dy, x, gamma, stats, s)
			x64, g64, b64, r := to64(x), to64(gamma), to64(beta), to64(dy)
			// dx cancels terms of the size rstd·|γ·dy|.
			terms := 0.0
			for i, g := range dy {
				c := i / s.HW % s.C
				rstd := stats[2*(i/(s.HW*s.C/s.Groups))+1]
				terms = math.Max(terms, rstd*math.Abs(float64(g)*float64(gamma[c])))
			}
			// Forward: y as the loss's gradient with respect to r.
			wantY := make([]float64, s.In())
			for i := range wantY {
				one := make([]float64, s.In())
				one[i] = 1
				wantY[i] = refGroupNorm(x64, g64, b64, one, s)
			}
			closeTo(t, what+" y", y, wantY, 1e-6)
			for _, c := range []struct {
				name string
				v    []float64
				got  []float32
			}{{"dx", x64, dx}, {"dgamma", g64, dg}, {"dbeta", b64, db}} {
				want := make([]float64, len(c.v))
				for i := range c.v {
					h := 1e-6 * math.Max(1, math.Abs(c.v[i]))
					orig := c.v[i]
					c.v[i] = orig + h
					up := refGroupNorm(x64, g64, b64, r, s)
					c.v[i] = orig - h
					down := refGroupNorm(x64, g64, b64, r, s)
					c.v[i] = orig
					want[i] = (up - down) / (2 * h)
				}
				if c.name == "dx" {
					closeTo(t, what+" dx", c.got, want, 2e-4, terms)
				} else {
					closeTo(t, what+" "+c.name, c.got, want, 2e-4)
				}
			}
			// Without the input gradient, the same parameter gradients.
			dg2, db2 := make([]float32, s.C), make([]float32, s.C)
			GroupNormBackward(nil, dg2, db2, dy, x, gamma, stats, s)
			sameFloats(t, what+" dgamma without dx", dg2, dg)
			sameFloats(t, what+" dbeta without dx", db2, db)
		}
	}
}

func TestGroupNormShapeValidate(t *testing.T) {
	for _, tt := range []struct {
		s  GroupNormShape
		ok bool
	}{
		{GroupNormShape{N: 1, C: 4, HW: 1, Groups: 2}, true},
		{GroupNormShape{N: 1, C: 4, HW: 1, Groups: 3}, false},
		{GroupNormShape{N: 0, C: 4, HW: 1, Groups: 2}, false},
		{GroupNormShape{N: 1, C: 4, HW: 0, Groups: 2}, false},
	} {
		if err := tt.s.Validate(); (err == nil) != tt.ok {
			t.Errorf("%+v: Validate() = %v, want ok=%v", tt.s, err, tt.ok)
		}
	}
}
