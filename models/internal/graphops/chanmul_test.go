package graphops

import (
	"runtime"
	"testing"

	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
)

// chanMulSpecs check ChannelMul (a trainable scale a channel) on maps and
// features, run by TestLayersMatchFiniteDifferences and
// TestLayersProgramMatchesTapeMachine; their bits are wantChanMulDigest's.
var chanMulSpecs = []netSpec{
	{"layer-scale", []int{3, 5, 5}, 3, func(b net, x any) any { // a residual branch scaled, as ConvNeXt's blocks
		h := b.conv(x, "c0", 4, 3, 1, 1)
		r := b.(chanMuler).chanMul("ls", b.tanh("t", b.conv(h, "c1", 4, 3, 1, 1)))
		return b.dense(b.globalAvgPool("gap", b.add("res", h, r)), "fc", 3, false)
	}},
	{"layer-scale-input", []int{2, 3, 3}, 4, func(b net, x any) any {
		return b.dense(b.(chanMuler).chanMul("ls", x), "fc", 4, false)
	}},
}

// chanMuler is the test networks' ChannelMul, outside net so that the
// interface other tests extend stays as it is.
type chanMuler interface {
	chanMul(name string, x any) any
}

func (b *graphNet) chanMul(name string, x any) any {
	return b.g.ChannelMul(name, node(x), b.param(name+".g", channels(x)))
}

func (r *refNet) chanMul(name string, xa any) any {
	x, s := t(xa), r.p[name+".g"]
	y := newT64(x.shape...)
	plane := len(x.v) / x.shape[0] / x.shape[1]
	for i, v := range x.v {
		y.v[i] = v * s[i/plane%x.shape[1]]
	}
	return y
}

// envChanMulChild makes the test binary print chanMulSpecs' digest and
// exit (see TestChannelMulSameBitsOnEveryKernelSet).
const envChanMulChild = "GTSTORM_TEST_CHANMUL_DIGEST"

// TestChannelMulSameBitsOnEveryKernelSet runs the networks of chanMulSpecs
// in a child process per kernel set this CPU runs and checks that every
// set gives the recorded bits, wantChanMulDigest.
func TestChannelMulSameBitsOnEveryKernelSet(t *testing.T) {
	digests, parent := kernelstest.Digests(t, "TestChannelMulSameBitsOnEveryKernelSet", envChanMulChild,
		func(t testing.TB) string { return specsDigest(t, chanMulSpecs) })
	if !parent {
		return
	}
	for set, d := range digests {
		if d != wantChanMulDigest {
			t.Errorf("kernel set %s on %s: digest %s, want %s (pure Go: %s)", set, runtime.GOARCH, d, wantChanMulDigest, digests["go"])
		}
	}
}

// wantChanMulDigest is specsDigest(chanMulSpecs) on every kernel set and
// architecture, recorded with the pure-Go set on amd64.
const wantChanMulDigest = "44e2f8354dc4fd8f6685b265514a62fac05d77eae795ddaaa818ccd6852931bf"
