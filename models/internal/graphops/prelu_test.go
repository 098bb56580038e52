package graphops

import (
	"runtime"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
)

// preluSpecs check PReLU, with a slope per channel and one for all, on
// maps and on features, run by TestLayersMatchFiniteDifferences and
// TestLayersProgramMatchesTapeMachine; their bits are wantPReLUDigest's.
var preluSpecs = []netSpec{
	{"prelu-maps", []int{3, 5, 5}, 3, func(b net, x any) any {
		h := b.(preluer).prelu("p0", b.conv(x, "c0", 4, 3, 1, 1), 4)
		h = b.(preluer).prelu("p1", b.conv(h, "c1", 5, 3, 2, 1), 1)
		h = b.(preluer).prelu("p2", b.dense(b.globalAvgPool("gap", h), "fc0", 6, false), 6)
		return b.dense(h, "fc", 3, false)
	}},
	{"prelu-input", []int{2, 3, 3}, 4, func(b net, x any) any { // the input's gradient through the slope
		return b.dense(b.(preluer).prelu("p", x, 2), "fc", 4, false)
	}},
}

// preluer is the test networks' PReLU, outside net so that the interface
// other tests extend stays as it is.
type preluer interface {
	prelu(name string, x any, slopes int) any
}

func (b *graphNet) prelu(name string, x any, slopes int) any {
	return b.g.PReLU(name, node(x), b.param(name+".a", slopes))
}

func (r *refNet) prelu(name string, xa any, _ int) any {
	x, a := t(xa), r.p[name+".a"]
	y := newT64(x.shape...)
	plane := len(x.v) / x.shape[0] / x.shape[1]
	for i, v := range x.v {
		s := a[0]
		if len(a) > 1 {
			s = a[i/plane%x.shape[1]]
		}
		if v > 0 {
			y.v[i] = v
		} else {
			y.v[i] = s * v
		}
	}
	return y
}

// envPReLUChild makes the test binary print preluSpecs' digest and exit
// (see TestPReLUSameBitsOnEveryKernelSet).
const envPReLUChild = "GTSTORM_TEST_PRELU_DIGEST"

// TestPReLUSameBitsOnEveryKernelSet runs the networks of preluSpecs in a
// child process per kernel set this CPU runs and checks that every set
// gives the recorded bits, wantPReLUDigest: the layer's passes are float32
// products and float64 sums in a fixed order, the same on every set and
// architecture.
func TestPReLUSameBitsOnEveryKernelSet(t *testing.T) {
	digests, parent := kernelstest.Digests(t, "TestPReLUSameBitsOnEveryKernelSet", envPReLUChild,
		func(t testing.TB) string { return specsDigest(t, preluSpecs) })
	if !parent {
		return
	}
	for set, d := range digests {
		if d != wantPReLUDigest {
			t.Errorf("kernel set %s on %s: digest %s, want %s (pure Go: %s)", set, runtime.GOARCH, d, wantPReLUDigest, digests["go"])
		}
	}
}

// wantPReLUDigest is specsDigest(preluSpecs) on every kernel set and
// architecture, recorded with the pure-Go set on amd64.
const wantPReLUDigest = "fb54a90fe0603e5ea4e9f0acdb21b6dfc97c76323018d91702fc7723fc78c3b2"

// TestPReLUShapeErrors checks that PReLU refuses slopes that fit neither
// one value nor one a channel, naming the layer.
func TestPReLUShapeErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		slopes int
	}{{"two for three channels", 2}, {"four for three channels", 4}} {
		t.Run(tc.name, func(t *testing.T) {
			g := New(nil, true)
			x := g.Input("x", make([]float32, 2*3*4), 2, 3, 2, 2)
			a := g.Input("a", make([]float32, tc.slopes), tc.slopes)
			if y := g.PReLU("act", x, a); y != nil {
				t.Fatal("PReLU accepted the slopes")
			}
			if err := g.Err(); err == nil || !strings.Contains(err.Error(), "act:") || !strings.Contains(err.Error(), "want 1 or 3") {
				t.Fatalf("error %v, want one naming act and 1 or 3 slopes", err)
			}
		})
	}
}
