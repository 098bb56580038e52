package graphops

import (
	"math"
	"runtime"
	"testing"

	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
)

// channelNormSpecs check ChannelNorm (ConvNeXt's channels_first
// LayerNorm) after a convolution and on the input, read twice by a
// residual join, run by TestLayersMatchFiniteDifferences and
// TestLayersProgramMatchesTapeMachine; their bits are channelNormDigest's,
// not layersDigest's.
var channelNormSpecs = []netSpec{
	{"channelnorm-conv", []int{2, 6, 6}, 3, func(b net, x any) any { // stem: conv 2×2 stride 2 → ChannelNorm
		h := b.(channelNormer).channelNorm("cn", b.conv(x, "c0", 5, 2, 2, 0))
		return b.dense(b.globalAvgPool("gap", b.relu("r", h)), "fc", 3, false)
	}},
	{"channelnorm-residual", []int{3, 4, 5}, 4, func(b net, x any) any { // x + ChannelNorm(x), then a 1×1 conv
		h := b.add("res", x, b.(channelNormer).channelNorm("cn", x))
		h = b.tanh("t", b.conv(h, "c1", 4, 1, 1, 0))
		return b.dense(b.globalAvgPool("gap", h), "fc", 4, false)
	}},
}

// channelNormer is the test networks' ChannelNorm (ε 1e-6, ConvNeXt's),
// outside net so that the interface other tests extend stays as it is.
type channelNormer interface {
	channelNorm(name string, x any) any
}

func (b *graphNet) channelNorm(name string, x any) any {
	n := node(x)
	if n == nil {
		return n
	}
	c := n.Shape()[1]
	return b.g.ChannelNorm(name, n, b.param(name+".g", c), b.param(name+".b", c), 1e-6)
}

func (r *refNet) channelNorm(name string, xa any) any {
	x, g, b := t(xa), r.p[name+".g"], r.p[name+".b"]
	y := newT64(x.shape...)
	c, hw := x.shape[1], x.shape[2]*x.shape[3]
	for n := range x.shape[0] {
		for p := range hw {
			at := func(k int) int { return (n*c+k)*hw + p }
			var mean, v float64
			for k := range c {
				mean += x.v[at(k)]
			}
			mean /= float64(c)
			for k := range c {
				v += (x.v[at(k)] - mean) * (x.v[at(k)] - mean)
			}
			rstd := 1 / math.Sqrt(v/float64(c)+1e-6)
			for k := range c {
				y.v[at(k)] = g[k]*(x.v[at(k)]-mean)*rstd + b[k]
			}
		}
	}
	return y
}

// envChannelNormChild makes the test binary print channelNormSpecs' digest
// and exit (see TestChannelNormSameBitsOnEveryKernelSet).
const envChannelNormChild = "GTSTORM_TEST_CHANNELNORM_DIGEST"

// TestChannelNormSameBitsOnEveryKernelSet runs the networks of
// channelNormSpecs in a child process per kernel set this CPU runs and
// checks that every set gives the recorded bits, wantChannelNormDigest.
func TestChannelNormSameBitsOnEveryKernelSet(t *testing.T) {
	digests, parent := kernelstest.Digests(t, "TestChannelNormSameBitsOnEveryKernelSet", envChannelNormChild,
		func(t testing.TB) string { return specsDigest(t, channelNormSpecs) })
	if !parent {
		return
	}
	for set, d := range digests {
		if d != wantChannelNormDigest {
			t.Errorf("kernel set %s on %s: digest %s, want %s (pure Go: %s)", set, runtime.GOARCH, d, wantChannelNormDigest, digests["go"])
		}
	}
}

// wantChannelNormDigest is specsDigest(channelNormSpecs) on every kernel
// set and architecture, recorded with the pure-Go set on amd64.
const wantChannelNormDigest = "6b4db84898bfa2efea49af5d51ee79a0af918bd4fc740e2347958ce844831097"
