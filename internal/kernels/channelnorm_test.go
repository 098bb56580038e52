package kernels

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// channelNormCase is a seeded batch for ChannelNorm: x, γ, β and dy.
func channelNormCase(s ChannelNormShape, seed uint64) (x, gamma, beta, dy []float32) {
	rng := rand.New(rand.NewPCG(seed, 33))
	fill := func(n int, scale, shift float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(shift + scale*rng.NormFloat64())
		}
		return v
	}
	return fill(s.In(), 2, 0.5), fill(s.C, 0.3, 1), fill(s.C, 0.3, 0), fill(s.In(), 1, 0)
}

// channelNormRef64 is ChannelNorm and its backward pass in float64 from
// the definition, position by position: y, dx, dγ and dβ.
func channelNormRef64(x, gamma, beta, dy []float32, eps float64, s ChannelNormShape) (y, dx, dg, db []float64) {
	y, dx, dg, db = make([]float64, s.In()), make([]float64, s.In()), make([]float64, s.C), make([]float64, s.C)
	at := func(n, c, p int) int { return (n*s.C+c)*s.HW + p }
	C := float64(s.C)
	for n := range s.N {
		for p := range s.HW {
			var mean, v float64
			for c := range s.C {
				mean += float64(x[at(n, c, p)])
			}
			mean /= C
			for c := range s.C {
				d := float64(x[at(n, c, p)]) - mean
				v += d * d
			}
			rstd := 1 / math.Sqrt(v/C+eps)
			var s1, s2 float64
			for c := range s.C {
				i := at(n, c, p)
				xh := (float64(x[i]) - mean) * rstd
				y[i] = float64(gamma[c])*xh + float64(beta[c])
				g := float64(dy[i]) * float64(gamma[c])
				s1 += g
				s2 += g * xh
				dg[c] += float64(dy[i]) * xh
				db[c] += float64(dy[i])
			}
			for c := range s.C {
				i := at(n, c, p)
				xh := (float64(x[i]) - mean) * rstd
				dx[i] = rstd * (float64(dy[i])*float64(gamma[c]) - s1/C - xh*s2/C)
			}
		}
	}
	return y, dx, dg, db
}

// TestChannelNormMatchesFloat64 checks ChannelNorm and ChannelNormBackward
// against the float64 definition, on shapes with one channel, one
// position and odd sizes, and that a nil dx forms dγ and dβ alike.
func TestChannelNormMatchesFloat64(t *testing.T) {
	for _, s := range []ChannelNormShape{{1, 1, 1}, {2, 3, 5}, {3, 8, 16}, {2, 17, 9}, {1, 64, 1}} {
		t.Run(fmt.Sprintf("%d×%d×%d", s.N, s.C, s.HW), func(t *testing.T) {
			x, gamma, beta, dy := channelNormCase(s, 1)
			const eps = 1e-6
			y, stats := make([]float32, s.In()), make([]float64, s.Stats())
			ChannelNorm(y, stats, x, gamma, beta, eps, s)
			dx, dg, db := make([]float32, s.In()), make([]float32, s.C), make([]float32, s.C)
			scratch := make([]float64, s.Scratch())
			ChannelNormBackward(dx, dg, db, dy, x, gamma, stats, scratch, s)
			wy, wdx, wdg, wdb := channelNormRef64(x, gamma, beta, dy, eps, s)
			for _, c := range []struct {
				name string
				got  []float32
				want []float64
				tol  float64
			}{{"y", y, wy, 1e-6}, {"dx", dx, wdx, 1e-5}, {"dγ", dg, wdg, 1e-6}, {"dβ", db, wdb, 1e-6}} {
				for i, w := range c.want {
					if d := math.Abs(float64(c.got[i]) - w); !(d <= c.tol*math.Max(1, math.Abs(w))) {
						t.Errorf("%s[%d] = %.8g, float64 %.8g", c.name, i, c.got[i], w)
						break
					}
				}
			}
			dg2, db2 := make([]float32, s.C), make([]float32, s.C)
			ChannelNormBackward(nil, dg2, db2, dy, x, gamma, stats, scratch, s)
			for c := range s.C {
				if dg2[c] != dg[c] || db2[c] != db[c] {
					t.Fatalf("without dx: dγ[%d], dβ[%d] = %g, %g; with it %g, %g", c, c, dg2[c], db2[c], dg[c], db[c])
				}
			}
		})
	}
}

// TestChannelNormSameBitsOnEveryKernelSet checks ChannelNorm's and its
// backward pass's bits against the digest recorded with the pure-Go set
// on amd64: the kernel is pure Go with its products rounded explicitly,
// so every kernel set and architecture (arm64 under qemu too) gives them.
func TestChannelNormSameBitsOnEveryKernelSet(t *testing.T) {
	h := sha256.New()
	put := func(v []float32) {
		for _, f := range v {
			_ = binary.Write(h, binary.LittleEndian, math.Float32bits(f))
		}
	}
	for _, s := range []ChannelNormShape{{2, 3, 5}, {3, 8, 16}, {2, 96, 49}} {
		x, gamma, beta, dy := channelNormCase(s, 7)
		y, stats := make([]float32, s.In()), make([]float64, s.Stats())
		ChannelNorm(y, stats, x, gamma, beta, 1e-6, s)
		dx, dg, db := make([]float32, s.In()), make([]float32, s.C), make([]float32, s.C)
		ChannelNormBackward(dx, dg, db, dy, x, gamma, stats, make([]float64, s.Scratch()), s)
		put(y)
		put(dx)
		put(dg)
		put(db)
	}
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != wantChannelNormDigest {
		t.Errorf("digest %s, want %s", got, wantChannelNormDigest)
	}
}

// wantChannelNormDigest is TestChannelNormSameBitsOnEveryKernelSet's
// digest, recorded with GTSTORM_KERNELS=go on amd64.
const wantChannelNormDigest = "95a3ffb474cf59adcbee0018b497233395564a305b323375ccdb9e8d008bbb84"

// TestChannelNormRefusesBadShapes checks the kernels' panics on an invalid
// shape and on short slices.
func TestChannelNormRefusesBadShapes(t *testing.T) {
	s := ChannelNormShape{2, 3, 4}
	x, gamma, beta, dy := channelNormCase(s, 3)
	for name, f := range map[string]func(){
		"zero channels": func() {
			ChannelNorm(make([]float32, 24), make([]float64, 16), x, gamma, beta, 1e-5, ChannelNormShape{2, 0, 4})
		},
		"short stats": func() { ChannelNorm(make([]float32, 24), make([]float64, 15), x, gamma, beta, 1e-5, s) },
		"short scratch": func() {
			ChannelNormBackward(nil, make([]float32, 3), make([]float32, 3), dy, x, gamma, make([]float64, 16), make([]float64, 13), s)
		},
		"short dx": func() {
			ChannelNormBackward(make([]float32, 23), make([]float32, 3), make([]float32, 3), dy, x, gamma, make([]float64, 16), make([]float64, 14), s)
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
