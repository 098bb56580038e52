package graphops

import (
	"math"
	"runtime"
	"testing"

	"github.com/gtstorm/gtstorm/internal/kernels"
	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
)

// pointwiseSpecs check ELU, Softplus, Hardsigmoid, Hardswish and GELU
// through small networks of them, run by TestLayersMatchFiniteDifferences
// and TestLayersProgramMatchesTapeMachine; a constant scale before the
// hard activations spreads their inputs over both kinks (±3). Their bits
// are wantPointwiseDigest's, not layersDigest's.
var pointwiseSpecs = []netSpec{
	{"elu-softplus", []int{2, 6, 6}, 3, func(b net, x any) any {
		h := b.pointwise("e1", "elu", b.conv(x, "c1", 4, 3, 1, 1), 1)
		h = b.pointwise("e2", "elu", b.chanConst("m", h, ConstMul, []float32{3}), 0.5)
		h = b.pointwise("sp", "softplus", b.dense(h, "fc1", 6, false), 0)
		return b.dense(h, "fc2", 3, false)
	}},
	{"hard", []int{3, 5, 5}, 4, func(b net, x any) any { // x read by Hardswish and a conv
		s := b.chanConst("m", x, ConstMul, []float32{8, -6, 10})
		h := b.add("sum", b.pointwise("hs", "hardswish", s, 0), b.conv(x, "c", 3, 3, 1, 1))
		h = b.pointwise("hsig", "hardsigmoid", b.chanConst("m2", h, ConstMul, []float32{9}), 0)
		h = b.dense(b.globalAvgPool("gap", h), "fc1", 6, false)
		h = b.pointwise("hs2", "hardswish", b.chanConst("m3", h, ConstMul, []float32{12}), 0)
		return b.dense(h, "fc2", 4, false)
	}},
	{"gelu", []int{2, 5, 5}, 3, func(b net, x any) any {
		h := b.pointwise("g1", "gelu", b.chanConst("m", b.conv(x, "c1", 4, 3, 1, 1), ConstMul, []float32{4}), 0)
		h = b.pointwise("g2", "gelu", b.groupNorm(h, "n", 2), 0)
		return b.dense(b.pointwise("g3", "gelu", b.dense(h, "fc1", 6, false), 0), "fc2", 3, false)
	}},
}

func (b *graphNet) pointwise(name, kind string, x any, alpha float32) any {
	switch kind {
	case "elu":
		return b.g.ELU(name, node(x), alpha)
	case "softplus":
		return b.g.Softplus(name, node(x))
	case "hardsigmoid":
		return b.g.Hardsigmoid(name, node(x))
	case "hardswish":
		return b.g.Hardswish(name, node(x))
	}
	return b.g.GELU(name, node(x))
}

func (r *refNet) pointwise(_, kind string, x any, alpha float32) any {
	return elementwise(t(x), refPointwise(kind, float64(alpha)))
}

// refPointwise is the float64 definition of each pointwise activation.
func refPointwise(kind string, alpha float64) func(float64) float64 {
	switch kind {
	case "elu":
		return func(v float64) float64 {
			if v > 0 {
				return v
			}
			return alpha * math.Expm1(v)
		}
	case "softplus":
		return func(v float64) float64 {
			if v > 20 {
				return v
			}
			return math.Log1p(math.Exp(v))
		}
	case "hardsigmoid":
		return func(v float64) float64 { return math.Min(math.Max(v+3, 0), 6) / 6 }
	case "hardswish":
		return func(v float64) float64 { return v * math.Min(math.Max(v+3, 0), 6) / 6 }
	}
	return func(v float64) float64 { return v * (1 + math.Erf(v/math.Sqrt2)) / 2 }
}

// refPointwiseGrad is the float64 derivative of each, as torch's backward
// defines it at the kinks.
func refPointwiseGrad(kind string, alpha float64) func(float64) float64 {
	switch kind {
	case "elu":
		return func(v float64) float64 {
			if v > 0 {
				return 1
			}
			return alpha * math.Exp(v)
		}
	case "softplus":
		return func(v float64) float64 {
			if v > 20 {
				return 1
			}
			return 1 / (1 + math.Exp(-v))
		}
	case "hardsigmoid":
		return func(v float64) float64 {
			if v > -3 && v < 3 {
				return 1.0 / 6
			}
			return 0
		}
	case "hardswish":
		return func(v float64) float64 {
			switch {
			case v < -3:
				return 0
			case v <= 3:
				return v/3 + 0.5
			}
			return 1
		}
	}
	return func(v float64) float64 {
		return (1+math.Erf(v/math.Sqrt2))/2 + v*math.Exp(-v*v/2)/math.Sqrt(2*math.Pi)
	}
}

// TestPointwiseValues checks each pointwise activation's kernels over
// [−25, 25] by 1e-3 (and the kinks ±3, 0 and 20 exactly, where the
// gradient is torch's) against float64 math: the output within one
// float32 rounding (relative 2⁻²³, or 2⁻¹⁴⁹ absolute), the gradient within
// two; and that NaN stays NaN and ±Inf give torch's limits.
func TestPointwiseValues(t *testing.T) {
	type kern struct {
		kind string
		fwd  func(y, x []float32)
		bwd  func(dx, dy, x []float32)
	}
	const alpha = 0.7
	ks := []kern{
		{"elu", func(y, x []float32) { kernels.ELU(y, x, alpha) }, func(dx, dy, x []float32) { kernels.ELUBackward(dx, dy, x, alpha) }},
		{"softplus", kernels.Softplus, kernels.SoftplusBackward},
		{"hardsigmoid", kernels.Hardsigmoid, kernels.HardsigmoidBackward},
		{"hardswish", kernels.Hardswish, kernels.HardswishBackward},
		{"gelu", kernels.GELU, kernels.GELUBackward},
	}
	xs := []float32{-3, 3, 0, 20, math.Nextafter32(20, 30), -1e-7, 1e-30, -1e-30}
	for i := -25000; i <= 25000; i++ {
		xs = append(xs, float32(i)*1e-3)
	}
	ones := make([]float32, len(xs))
	for i := range ones {
		ones[i] = 1
	}
	ys, dxs := make([]float32, len(xs)), make([]float32, len(xs))
	for _, k := range ks {
		f, df := refPointwise(k.kind, float64(float32(alpha))), refPointwiseGrad(k.kind, float64(float32(alpha)))
		k.fwd(ys, xs)
		k.bwd(dxs, ones, xs)
		for i, v := range xs {
			x64 := float64(v)
			for _, c := range []struct {
				what     string
				got      float32
				ref, ulp float64
			}{{k.kind, ys[i], f(x64), 1}, {k.kind + "′", dxs[i], df(x64), 2}} {
				if err := math.Abs(float64(c.got) - c.ref); err > c.ulp*math.Max(math.Abs(c.ref)*0x1p-23, 0x1p-149) {
					t.Errorf("%s(%g) = %g, float64 %g: off by %g", c.what, v, c.got, c.ref, err)
				}
			}
		}
		inf := float32(math.Inf(1))
		sp := []float32{float32(math.NaN()), inf, -inf}
		k.fwd(sp, sp)
		want := map[string][2]float64{"elu": {math.Inf(1), -alpha}, "softplus": {math.Inf(1), 0}, "hardsigmoid": {1, 0},
			"hardswish": {math.Inf(1), math.NaN()}, "gelu": {math.Inf(1), math.NaN()}}[k.kind]
		if !math.IsNaN(float64(sp[0])) {
			t.Errorf("%s(NaN) = %g, want NaN", k.kind, sp[0])
		}
		for j, w := range want {
			if got := float64(sp[j+1]); got != w && !(math.IsNaN(w) && math.IsNaN(got)) && float32(w) != sp[j+1] {
				t.Errorf("%s(%g) = %g, want %g", k.kind, []float32{inf, -inf}[j], got, w)
			}
		}
	}
}

// envPointwiseChild makes the test binary print pointwiseSpecs' digest and
// exit (see TestPointwiseSameBitsOnEveryKernelSet).
const envPointwiseChild = "GTSTORM_TEST_POINTWISE_DIGEST"

// TestPointwiseSameBitsOnEveryKernelSet runs the networks of
// pointwiseSpecs in a child process per kernel set this CPU runs and
// checks that every set gives the recorded bits, wantPointwiseDigest: the
// activations compute detmath's float64 functions (in Go, or in AVX2 with
// detmath's exact operations: exp64s, erfs, log1ps), rounded once, the
// same bits on every set and architecture.
func TestPointwiseSameBitsOnEveryKernelSet(t *testing.T) {
	digests, parent := kernelstest.Digests(t, "TestPointwiseSameBitsOnEveryKernelSet", envPointwiseChild,
		func(t testing.TB) string { return specsDigest(t, pointwiseSpecs) })
	if !parent {
		return
	}
	for set, d := range digests {
		if d != wantPointwiseDigest {
			t.Errorf("kernel set %s on %s: digest %s, want %s (pure Go: %s)", set, runtime.GOARCH, d, wantPointwiseDigest, digests["go"])
		}
	}
}

// wantPointwiseDigest is specsDigest(pointwiseSpecs) on every kernel set
// and architecture, recorded with the pure-Go set on amd64.
const wantPointwiseDigest = "6ea5964672c4f826537e437f0d69ae008e913063dc74d4c5c2a7e18270e22b4f"
