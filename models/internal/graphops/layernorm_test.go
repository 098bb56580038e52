package graphops

import (
	"math"
	"runtime"
	"testing"

	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
)

// layerNormSpecs check LayerNorm over a whole image [C,H,W] and over the
// features of a vector [F], run by TestLayersMatchFiniteDifferences and
// TestLayersProgramMatchesTapeMachine; their bits are layerNormDigest's,
// not layersDigest's.
var layerNormSpecs = []netSpec{
	{"layernorm-image", []int{2, 5, 5}, 3, func(b net, x any) any { // nn.LayerNorm([4,3,3]) after a convolution
		h := b.(layerNormer).layerNorm("ln", b.conv(x, "c0", 4, 3, 2, 1))
		return b.dense(b.relu("r", h), "fc", 3, false)
	}},
	{"layernorm-vector", []int{1, 4, 4}, 4, func(b net, x any) any { // nn.LayerNorm(6) in an MLP head, read twice
		h := b.dense(b.maxPool("mp", x, 2, 2), "d0", 6, false)
		n := b.(layerNormer).layerNorm("ln", h)
		return b.dense(b.add("res", b.tanh("t", n), n), "fc", 4, false)
	}},
}

// layerNormer is the test networks' LayerNorm (ε 1e-5), outside net so
// that the interface other tests extend stays as it is.
type layerNormer interface {
	layerNorm(name string, x any) any
}

func (b *graphNet) layerNorm(name string, x any) any {
	n := node(x)
	if n == nil {
		return n
	}
	s := n.Shape()[1:]
	return b.g.LayerNorm(name, n, b.param(name+".g", s...), b.param(name+".b", s...), 1e-5)
}

func (r *refNet) layerNorm(name string, xa any) any {
	x, g, b := t(xa), r.p[name+".g"], r.p[name+".b"]
	y := newT64(x.shape...)
	d := len(g)
	for k := range len(x.v) / d {
		xs := x.v[k*d : (k+1)*d]
		var mean, v float64
		for _, a := range xs {
			mean += a
		}
		mean /= float64(d)
		for _, a := range xs {
			v += (a - mean) * (a - mean)
		}
		rstd := 1 / math.Sqrt(v/float64(d)+1e-5)
		for i, a := range xs {
			y.v[k*d+i] = g[i]*(a-mean)*rstd + b[i]
		}
	}
	return y
}

// envLayerNormChild makes the test binary print layerNormSpecs' digest and
// exit (see TestLayerNormSameBitsOnEveryKernelSet).
const envLayerNormChild = "GTSTORM_TEST_LAYERNORM_DIGEST"

// TestLayerNormSameBitsOnEveryKernelSet runs the networks of
// layerNormSpecs (LayerNorm of an image after a convolution, and of a
// vector between dense layers) in a child process per kernel set this CPU
// runs and checks that every set gives the recorded bits,
// wantLayerNormDigest: the layer's passes are float64 sums in a fixed
// order with explicitly rounded products, the same bits on every set and
// architecture.
func TestLayerNormSameBitsOnEveryKernelSet(t *testing.T) {
	digests, parent := kernelstest.Digests(t, "TestLayerNormSameBitsOnEveryKernelSet", envLayerNormChild,
		func(t testing.TB) string { return specsDigest(t, layerNormSpecs) })
	if !parent {
		return
	}
	for set, d := range digests {
		if d != wantLayerNormDigest {
			t.Errorf("kernel set %s on %s: digest %s, want %s (pure Go: %s)", set, runtime.GOARCH, d, wantLayerNormDigest, digests["go"])
		}
	}
}

// wantLayerNormDigest is specsDigest(layerNormSpecs) on every kernel set
// and architecture, recorded with the pure-Go set on amd64.
const wantLayerNormDigest = "b75f72e4be6f0c4db307852426dd5a8611955cdb410b8dc9efad1782eed0219d"
