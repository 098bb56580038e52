package graphops

import (
	"math"
	"runtime"
	"testing"

	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
)

// globalMaxSpecs check GlobalMaxPool, run by
// TestLayersMatchFiniteDifferences and
// TestLayersProgramMatchesTapeMachine; their bits are
// wantGlobalMaxDigest's.
var globalMaxSpecs = []netSpec{
	{"global-max", []int{3, 5, 5}, 3, func(b net, x any) any {
		h := b.tanh("t0", b.conv(x, "c0", 4, 3, 1, 1))
		h = b.(maxPooler).globalMaxPool("gmp", h)
		return b.dense(h, "fc", 3, false)
	}},
	{"global-max-input", []int{2, 3, 4}, 4, func(b net, x any) any { // one map not square
		return b.dense(b.(maxPooler).globalMaxPool("gmp", x), "fc", 4, false)
	}},
}

// maxPooler is the test networks' GlobalMaxPool, outside net so that the
// interface other tests extend stays as it is.
type maxPooler interface {
	globalMaxPool(name string, x any) any
}

func (b *graphNet) globalMaxPool(name string, x any) any { return b.g.GlobalMaxPool(name, node(x)) }

func (r *refNet) globalMaxPool(_ string, xa any) any {
	x := t(xa)
	n, c, plane := x.shape[0], x.shape[1], x.shape[2]*x.shape[3]
	y := newT64(n, c)
	for p := range n * c {
		m := math.Inf(-1)
		for _, v := range x.v[p*plane : (p+1)*plane] {
			m = math.Max(m, v)
		}
		y.v[p] = m
	}
	return y
}

// envGlobalMaxChild makes the test binary print globalMaxSpecs' digest
// and exit (see TestGlobalMaxPoolSameBitsOnEveryKernelSet).
const envGlobalMaxChild = "GTSTORM_TEST_GLOBALMAX_DIGEST"

// TestGlobalMaxPoolSameBitsOnEveryKernelSet runs the networks of
// globalMaxSpecs in a child process per kernel set this CPU runs and
// checks that every set gives the recorded bits, wantGlobalMaxDigest.
func TestGlobalMaxPoolSameBitsOnEveryKernelSet(t *testing.T) {
	digests, parent := kernelstest.Digests(t, "TestGlobalMaxPoolSameBitsOnEveryKernelSet", envGlobalMaxChild,
		func(t testing.TB) string { return specsDigest(t, globalMaxSpecs) })
	if !parent {
		return
	}
	for set, d := range digests {
		if d != wantGlobalMaxDigest {
			t.Errorf("kernel set %s on %s: digest %s, want %s (pure Go: %s)", set, runtime.GOARCH, d, wantGlobalMaxDigest, digests["go"])
		}
	}
}

// wantGlobalMaxDigest is specsDigest(globalMaxSpecs) on every kernel set
// and architecture, recorded with the pure-Go set on amd64.
const wantGlobalMaxDigest = "71299de9f1d82fae11be66f729e7a97bfe8bd48e838c354f6c332707de3a3c1d"

// TestGlobalMaxPoolTiesAndNaN checks the forward pass's choice of index,
// which the gradient follows: the first of equal maxima, and a NaN over
// any number (torch's adaptive_max_pool2d).
func TestGlobalMaxPoolTiesAndNaN(t *testing.T) {
	nan := float32(math.NaN())
	for _, c := range []struct {
		name string
		x    []float32
		at   int
	}{
		{"first of two maxima", []float32{1, 3, 3, 2}, 1},
		{"the last NaN", []float32{nan, 5, nan, 2}, 2},
		{"all -Inf", []float32{float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1))}, 0},
	} {
		g := New(nil, false)
		y := g.GlobalMaxPool("gmp", g.Input("x", make([]float32, 4), 1, 1, 2, 2))
		if y == nil {
			t.Fatal(g.Err())
		}
		op := y.Op().(*globalMaxOp)
		if _, err := op.Do(tensor.New(tensor.WithShape(1, 1, 2, 2), tensor.WithBacking(c.x))); err != nil {
			t.Fatal(err)
		}
		if op.l.index[0] != c.at {
			t.Errorf("%s: index %d, want %d", c.name, op.l.index[0], c.at)
		}
	}
}
