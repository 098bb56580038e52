package graphops

import (
	"math"
	"runtime"
	"testing"

	"github.com/gtstorm/gtstorm/internal/kernels"
	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
)

// siluSpecs check SiLU through small networks of it, run by
// TestLayersMatchFiniteDifferences and TestLayersProgramMatchesTapeMachine;
// their bits are siluDigest's, not layersDigest's.
var siluSpecs = []netSpec{
	{"silu", []int{2, 6, 6}, 3, func(b net, x any) any {
		h := b.silu("s1", b.conv(x, "c1", 4, 3, 1, 1))
		return b.dense(b.silu("s2", b.dense(h, "fc1", 6, false)), "fc2", 3, false)
	}},
	{"silu-mixed", []int{3, 5, 5}, 4, func(b net, x any) any { // x read by SiLU and a conv, SiLU after GroupNorm
		h := b.add("sum", b.silu("s", x), b.conv(x, "c", 3, 3, 1, 1))
		h = b.silu("s2", b.groupNorm(h, "n", 3))
		return b.dense(b.silu("s3", b.globalAvgPool("gap", h)), "fc", 4, false)
	}},
}

func (b *graphNet) silu(name string, x any) any { return b.g.SiLU(name, node(x)) }

func (r *refNet) silu(_ string, x any) any {
	return elementwise(t(x), func(v float64) float64 { return v / (1 + math.Exp(-v)) })
}

// TestSiLUValues checks the SiLU's passes on special and extreme values
// (signs of zero, NaN, ±Inf, inputs where e^x would overflow), and against
// float64 math over [−20, 20] within one float32 rounding (relative 2⁻²³,
// or 2⁻¹⁴⁹ absolute) for the output and within two for the gradient.
func TestSiLUValues(t *testing.T) {
	inf, negZero := float32(math.Inf(1)), float32(math.Copysign(0, -1))
	x := []float32{0, negZero, 1, -1, 200, -200, 1000, -1000, inf}
	want := []float32{0, negZero, 0.7310586, -0.26894143, 200, negZero, 1000, negZero, inf}
	y := make([]float32, len(x))
	kernels.SiLU(y, x)
	for i := range y {
		if y[i] != want[i] || math.Signbit(float64(y[i])) != math.Signbit(float64(want[i])) {
			t.Errorf("silu(%g) = %g, want %g", x[i], y[i], want[i])
		}
	}
	nan := []float32{float32(math.NaN()), float32(math.Inf(-1))}
	kernels.SiLU(nan, nan)
	if !math.IsNaN(float64(nan[0])) || !math.IsNaN(float64(nan[1])) {
		t.Errorf("silu(NaN), silu(−Inf) = %g, want NaN (−∞·0, as torch's)", nan)
	}
	xs := make([]float32, 40001)
	for i := range xs {
		xs[i] = float32(i-20000) * 1e-3
	}
	ys, dxs, ones := make([]float32, len(xs)), make([]float32, len(xs)), make([]float32, len(xs))
	for i := range ones {
		ones[i] = 1
	}
	kernels.SiLU(ys, xs)
	kernels.SiLUBackward(dxs, ones, xs)
	within := func(what string, v float32, x, ref, ulps float64) {
		if err := math.Abs(float64(v) - ref); err > ulps*math.Max(math.Abs(ref)*0x1p-23, 0x1p-149) {
			t.Errorf("%s(%g) = %g, float64 %g: off by %g", what, x, v, ref, err)
		}
	}
	for i, v := range xs {
		x64 := float64(v)
		s := 1 / (1 + math.Exp(-x64))
		within("silu", ys[i], x64, x64*s, 1)
		within("silu′", dxs[i], x64, s+x64*s*(1-s), 2)
	}
}

// envSiLUChild makes the test binary print siluSpecs' digest and exit
// (see TestSiLUSameBitsOnEveryKernelSet).
const envSiLUChild = "GTSTORM_TEST_SILU_DIGEST"

// TestSiLUSameBitsOnEveryKernelSet runs the networks of siluSpecs in a
// child process per kernel set this CPU runs and checks that every set
// gives the recorded bits, wantSiLUDigest: the SiLU is pure Go in float64,
// rounded once, the same bits on every set and architecture.
func TestSiLUSameBitsOnEveryKernelSet(t *testing.T) {
	digests, parent := kernelstest.Digests(t, "TestSiLUSameBitsOnEveryKernelSet", envSiLUChild,
		func(t testing.TB) string { return specsDigest(t, siluSpecs) })
	if !parent {
		return
	}
	for set, d := range digests {
		if d != wantSiLUDigest {
			t.Errorf("kernel set %s on %s: digest %s, want %s (pure Go: %s)", set, runtime.GOARCH, d, wantSiLUDigest, digests["go"])
		}
	}
}

// wantSiLUDigest is specsDigest(siluSpecs) on every kernel set and
// architecture, recorded with the pure-Go set on amd64.
const wantSiLUDigest = "bf4db899b5cd82691f50e144ccd2490bc4de4f86ac025419b00ef8f415f1d678"
