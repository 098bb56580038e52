package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// refGaussCDF is Φ(x) = (1 + erf(x/√2))/2 with detmath.Erf per value, as
// GELU computed it before erfs.
func refGaussCDF(x float64) float64 {
	return float64(0.5 * float64(1+detmath.Erf(float64(x*sqrtHalf))))
}

// neighbours appends to v each of xs and ±xs with its nearest floats
// within d steps either side.
func neighbours(v []float64, d int, xs ...float64) []float64 {
	for _, x := range xs {
		for _, s := range []float64{x, -x} {
			b := int64(math.Float64bits(s))
			for i := -d; i <= d; i++ {
				v = append(v, math.Float64frombits(uint64(b+int64(i))))
			}
		}
	}
	return v
}

// erfEdges are detmath.Erf's special values and range bounds, with their
// neighbours, and the float32 values around them as GELU makes them.
func erfEdges() []float64 {
	v := []float64{0, math.Copysign(0, -1), math.NaN(), math.Float64frombits(0xfff8000000abcdef), math.Inf(1), math.Inf(-1),
		math.MaxFloat64, -math.MaxFloat64, 1e300, -1e300, 1e10, -1e10}
	v = neighbours(v, 3, math.SmallestNonzeroFloat64, 0x1p-1022, 2.848094538889218e-306, 0x1p-28, 0.84375, 1.25, 1/0.35, 6, 1)
	for _, x := range []float32{math.SmallestNonzeroFloat32, 0x1p-126, 0x1p-28, 0.84375, 1.25, 1 / 0.35, 6, 0.84375 * math.Sqrt2, 1.25 * math.Sqrt2, math.Sqrt2 / 0.35, 6 * math.Sqrt2, math.MaxFloat32} {
		for i := int32(-3); i <= 3; i++ {
			f := math.Float32frombits(uint32(int32(math.Float32bits(x)) + i))
			v = append(v, float64(f), -float64(f), float64(float64(f)*sqrtHalf), -float64(float64(f)*sqrtHalf))
		}
	}
	return v
}

// TestErfsSameBits checks that erfs gives detmath.Erf's bits on every
// kernel set: the edges, each range's values, random bit patterns, block
// lengths 0 to expBlock, in place.
func TestErfsSameBits(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	src := erfEdges()
	for range 50000 {
		src = append(src, r.NormFloat64()*2, r.Float64()*14-7, r.NormFloat64()*1e-3, math.Float64frombits(r.Uint64()),
			float64(math.Float32frombits(r.Uint32())))
	}
	r.Shuffle(len(src), func(i, j int) { src[i], src[j] = src[j], src[i] })
	src = append(src, erfEdges()...)
	want := make([]float64, len(src))
	for i, x := range src {
		want[i] = detmath.Erf(x)
	}
	check := func(t *testing.T, what string, got, want, src []float64) {
		t.Helper()
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("%s: erfs(%v [%#x]) = %v [%#x], want %v [%#x]", what, src[i], math.Float64bits(src[i]),
					got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
			}
		}
	}
	for _, ks := range kernelSets() {
		got := make([]float64, len(src))
		for i := 0; i < len(src); i += expBlock {
			e := min(i+expBlock, len(src))
			erfs(ks, got[i:e], src[i:e])
		}
		check(t, ks.name, got, want, src)
		for n := 0; n <= expBlock; n++ {
			off := 3 * n
			in := append([]float64(nil), src[off:off+n]...)
			erfs(ks, in, in)
			check(t, ks.name+" in place", in, want[off:off+n], src[off:off+n])
		}
	}
}

// BenchmarkErfs times erfs on the kernel set in use over blocks of
// GELU's arguments x/√2, x from N(0, σ²): at σ = 1 most steps of four lie
// below 1.25 and skip the exponentials, at σ = 3 few do.
func BenchmarkErfs(b *testing.B) {
	for _, sigma := range []float64{1, 3} {
		b.Run(fmt.Sprintf("sigma%g", sigma), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			x := make([]float64, 1<<16)
			for i := range x {
				x[i] = float64(float64(float32(r.NormFloat64()*sigma)) * sqrtHalf)
			}
			y := make([]float64, len(x))
			ks := use()
			for range b.N {
				for i := 0; i < len(x); i += expBlock {
					erfs(ks, y[i:i+expBlock], x[i:i+expBlock])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(x)), "ns/value")
		})
	}
}

// The per-value GELU and Softplus, forward and backward, as they were
// before erfs and log1ps.
func refGELU(v float32) float32 {
	return float32(float64(float64(v) * refGaussCDF(float64(v))))
}

func refGELUBackward(g, x float32) float32 {
	v := float64(x)
	pdf := float64(detmath.Exp(float64(-0.5*float64(v*v))) * invSqrt2Pi)
	d := refGaussCDF(v) + float64(v*pdf)
	return float32(float64(float64(g) * d))
}

func refSoftplus(v float32) float32 {
	if v > softplusThreshold {
		return v
	}
	return float32(detmath.Log1p(detmath.Exp(float64(v))))
}

func refSoftplusBackward(g, x float32) float32 {
	if x > softplusThreshold {
		return g
	}
	z := detmath.Exp(float64(x))
	return float32(float64(float64(g) * float64(z/float64(z+1))))
}

// erfLog1pActivationInputs are float32s at the range bounds of the erf
// GELU takes (x/√2 at 2⁻²⁸, 0.84375, 1.25, 1/0.35, 6) and of the log1p
// Softplus takes (eˣ at 2⁻⁵⁴, 2⁻²⁹, √2 − 1, 2ᵏ − 1 and √2·2ᵏ − 1, the
// threshold 20) with their float32 neighbours and both signs, then
// expActivationInputs.
func erfLog1pActivationInputs(r *rand.Rand, n int) []float32 {
	var x []float32
	add := func(v float64) {
		f := float32(v)
		for i := int32(-3); i <= 3; i++ {
			g := math.Float32frombits(uint32(int32(math.Float32bits(f)) + i))
			x = append(x, g, -g)
		}
	}
	for _, b := range []float64{0x1p-28, 0.84375, 1.25, 1 / 0.35, 6} {
		add(b * math.Sqrt2)
	}
	for _, b := range []float64{0x1p-54, 0x1p-29, math.Sqrt2 - 1, 3, 7, 15, 2*math.Sqrt2 - 1, 4*math.Sqrt2 - 1} {
		add(math.Log(b))
	}
	add(20)
	add(0)
	return append(x, expActivationInputs(r, n-len(x))...)
}

// TestGELUSoftplusSameBits checks GELU, GELUBackward, Softplus and
// SoftplusBackward on every kernel set against the per-value loops, bit
// for bit (NaN for NaN), at every length from 0 to 300 (every tail of a
// 4-value step, a block and a block and a bit) and over all the inputs,
// in place as well.
func TestGELUSoftplusSameBits(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	x := erfLog1pActivationInputs(r, 2000)
	dy := make([]float32, len(x))
	for i := range dy {
		dy[i] = float32(r.NormFloat64())
	}
	same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) || a != a && b != b }
	unary := []struct {
		name string
		set  func(ks *kernelSet, y, x []float32)
		ref  func(v float32) float32
	}{{"GELU", geluSet, refGELU}, {"Softplus", softplusSet, refSoftplus}}
	binary := []struct {
		name string
		set  func(ks *kernelSet, dx, dy, x []float32)
		ref  func(g, x float32) float32
	}{{"GELUBackward", geluBackwardSet, refGELUBackward}, {"SoftplusBackward", softplusBackwardSet, refSoftplusBackward}}
	for n := 0; n <= 301; n++ {
		// Windows of 0 to 300 values from 5n on, then all of x.
		off := 5 * n
		if n == 301 {
			n, off = len(x), 0
		}
		xs, gs := x[off:off+n], dy[off:off+n]
		for _, ks := range kernelSets() {
			for _, c := range unary {
				got := make([]float32, n)
				c.set(ks, got, xs)
				in := append([]float32(nil), xs...)
				c.set(ks, in, in)
				for i, v := range xs {
					if w := c.ref(v); !same(got[i], w) || !same(in[i], w) {
						t.Fatalf("%s %s n %d: x = %v [%#x]: %v, in place %v, want %v", ks.name, c.name, n, v, math.Float32bits(v), got[i], in[i], w)
					}
				}
			}
			for _, c := range binary {
				got := make([]float32, n)
				c.set(ks, got, gs, xs)
				in := append([]float32(nil), gs...)
				c.set(ks, in, in, xs)
				for i, v := range xs {
					if w := c.ref(gs[i], v); !same(got[i], w) || !same(in[i], w) {
						t.Fatalf("%s %s n %d: x = %v [%#x]: %v, in place %v, want %v", ks.name, c.name, n, v, math.Float32bits(v), got[i], in[i], w)
					}
				}
			}
		}
	}
}
