package graphops

import (
	"runtime"
	"testing"

	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
)

// chanMulSpecs check ChannelMul (a trainable scale a channel, or one) and Shift (one value,
// or one a channel) on maps and features, run by TestLayersMatchFiniteDifferences and
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
	{"fixup-scalars", []int{2, 4, 4}, 3, func(b net, x any) any { // Fixup's block: conv(x + b1a), ·scale + b2b; ReZero's α
		cm := b.(chanMuler)
		h := b.relu("r", b.conv(cm.shift("b1a", x), "c1", 3, 3, 1, 1))
		h = cm.shift("b2b", cm.scalarMul("scale", b.conv(cm.shift("b2a", h), "c2", 3, 3, 1, 1)))
		h = b.add("res", h, cm.scalarMul("alpha", b.tanh("t", b.conv(x, "c3", 3, 1, 1, 0))))
		return b.dense(cm.shift("b3", b.globalAvgPool("gap", h)), "fc", 3, false)
	}},
	{"channel-shift", []int{3, 4, 4}, 3, func(b net, x any) any { // ResMLP's Affine: α·x + β a channel
		cm := b.(chanMuler)
		h := cm.chanShift("beta1", cm.chanMul("alpha1", b.conv(x, "c0", 4, 3, 1, 1)))
		h = b.tanh("t", cm.chanShift("beta2", b.conv(h, "c1", 5, 3, 2, 1)))
		return b.dense(b.globalAvgPool("gap", h), "fc", 3, false)
	}},
}

// chanMuler is the test networks' ChannelMul, outside net so that the
// interface other tests extend stays as it is.
type chanMuler interface {
	chanMul(name string, x any) any
	scalarMul(name string, x any) any // name.s [1]
	shift(name string, x any) any     // name.b [1]
	chanShift(name string, x any) any // name.b [C]
}

func (b *graphNet) chanShift(name string, x any) any {
	return b.g.Shift(name, node(x), b.param(name+".b", channels(x)))
}

func (r *refNet) chanShift(name string, xa any) any {
	return perChannel(t(xa), r.p[name+".b"], func(v, s float64) float64 { return v + s })
}

// perChannel returns f(x, c[k]) of each value of x in channel k.
func perChannel(x *t64, c []float64, f func(v, s float64) float64) *t64 {
	y := newT64(x.shape...)
	plane := len(x.v) / x.shape[0] / x.shape[1]
	for i, v := range x.v {
		y.v[i] = f(v, c[i/plane%x.shape[1]])
	}
	return y
}

func (b *graphNet) scalarMul(name string, x any) any {
	return b.g.ChannelMul(name, node(x), b.param(name+".s", 1))
}

func (b *graphNet) shift(name string, x any) any {
	return b.g.Shift(name, node(x), b.param(name+".b", 1))
}

func (r *refNet) scalarMul(name string, xa any) any {
	x := t(xa)
	y := newT64(x.shape...)
	for i, v := range x.v {
		y.v[i] = v * r.p[name+".s"][0]
	}
	return y
}

func (r *refNet) shift(name string, xa any) any {
	x := t(xa)
	y := newT64(x.shape...)
	for i, v := range x.v {
		y.v[i] = v + r.p[name+".b"][0]
	}
	return y
}

func (b *graphNet) chanMul(name string, x any) any {
	return b.g.ChannelMul(name, node(x), b.param(name+".g", channels(x)))
}

func (r *refNet) chanMul(name string, xa any) any {
	return perChannel(t(xa), r.p[name+".g"], func(v, s float64) float64 { return v * s })
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
const wantChanMulDigest = "d21f96fdc4ec1ca8b0b37682ee2f410b9abc34696e3e6b49611c1d053ac66474"
