package graphops

import (
	"runtime"
	"testing"

	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
)

// scaleSpecs check ChannelScale through small squeeze-and-excitation
// networks, run by TestLayersMatchFiniteDifferences and
// TestLayersProgramMatchesTapeMachine; their bits are scaleDigest's, not
// layersDigest's.
var scaleSpecs = []netSpec{
	{"se-block", []int{4, 5, 5}, 3, func(b net, x any) any { // x read by the gate's pool and by the scale
		h := b.relu("r0", b.conv(x, "c0", 6, 3, 1, 1))
		g := b.relu("sr", b.dense(b.globalAvgPool("sq", h), "se1", 3, false))
		g = b.sigmoid("sg", b.dense(g, "se2", 6, false))
		h = b.(scaler).chanScale("scale", h, g)
		h = b.relu("r1", b.conv(h, "c1", 4, 3, 2, 1))
		return b.dense(b.globalAvgPool("gap", h), "fc", 3, false)
	}},
	{"se-gate-4d", []int{3, 4, 4}, 4, func(b net, x any) any { // the gate a [n,C,1,1] map; the input scaled directly
		g := b.tanh("t", b.conv(b.maxPool("mp", x, 4, 4), "gc", 3, 1, 1, 0))
		h := b.(scaler).chanScale("scale", x, g)
		return b.dense(b.groupNorm(h, "n", 3), "fc", 4, false)
	}},
}

// scaler is the test networks' ChannelScale, outside net so that the
// interface other tests extend stays as it is.
type scaler interface {
	chanScale(name string, x, gate any) any
}

func (b *graphNet) chanScale(name string, x, gate any) any {
	return b.g.ChannelScale(name, node(x), node(gate))
}

func (r *refNet) chanScale(_ string, xa, ga any) any {
	x, g := t(xa), t(ga)
	y := newT64(x.shape...)
	plane := len(x.v) / len(g.v)
	for i, v := range x.v {
		y.v[i] = v * g.v[i/plane]
	}
	return y
}

// envScaleChild makes the test binary print scaleSpecs' digest and exit
// (see TestChannelScaleSameBitsOnEveryKernelSet).
const envScaleChild = "GTSTORM_TEST_SCALE_DIGEST"

// TestChannelScaleSameBitsOnEveryKernelSet runs the networks of scaleSpecs
// (ChannelScale between convolutions, pooling, dense layers and
// GroupNorm) in a child process per kernel set this CPU runs and checks
// that every set gives the recorded bits, wantScaleDigest: the layer's
// passes are float32 products and float64 sums in a fixed order, the same
// bits on every set and architecture.
func TestChannelScaleSameBitsOnEveryKernelSet(t *testing.T) {
	digests, parent := kernelstest.Digests(t, "TestChannelScaleSameBitsOnEveryKernelSet", envScaleChild,
		func(t testing.TB) string { return specsDigest(t, scaleSpecs) })
	if !parent {
		return
	}
	for set, d := range digests {
		if d != wantScaleDigest {
			t.Errorf("kernel set %s on %s: digest %s, want %s (pure Go: %s)", set, runtime.GOARCH, d, wantScaleDigest, digests["go"])
		}
	}
}

// wantScaleDigest is specsDigest(scaleSpecs) on every kernel set and
// architecture, recorded with the pure-Go set on amd64.
const wantScaleDigest = "61bdaeffca524a8bfcd10cf5fbb89cb6de723fd37ace2308d1791d9ddaad4462"
