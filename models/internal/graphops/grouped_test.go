package graphops

import (
	"runtime"
	"testing"

	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
)

// groupedSpecs check grouped and depthwise convolution (Conv2DGrouped) and
// Clamp through small networks of them, run by
// TestLayersMatchFiniteDifferences and TestLayersProgramMatchesTapeMachine;
// their bits are groupedDigest's, not layersDigest's.
var groupedSpecs = []netSpec{
	{"grouped", []int{4, 6, 6}, 3, func(b net, x any) any {
		h := b.groupConv(x, "g1", 6, 3, 1, 1, 2)                            // padded stride 1: the scratch kernels
		h = b.groupConv(b.relu("r", b.bias(h, "g1")), "g2", 32, 3, 1, 0, 2) // valid; 16 a group: the transposed dW
		h = b.groupConv(h, "g3", 4, 1, 1, 0, 4)                             // 1×1, 8 channels a group
		return b.dense(b.globalAvgPool("gap", h), "fc", 3, false)
	}},
	{"depthwise", []int{3, 7, 7}, 4, func(b net, x any) any {
		h := b.groupConv(x, "dw1", 3, 3, 2, 1, 3) // one channel a group, stride 2, padding 1
		h = b.clamp("c1", b.groupNorm(h, "n1", 3), 0, 0.6)
		h = b.groupConv(h, "dw2", 6, 3, 1, 1, 3) // two filters a channel
		h = b.add("sum", h, b.conv(h, "pw", 6, 1, 1, 0))
		return b.dense(b.clamp("c2", h, -0.4, 0.3), "fc", 4, false)
	}},
	{"clamp", []int{2, 5, 5}, 3, func(b net, x any) any { // x read by two clamps
		h := b.add("sum", b.clamp("c1", x, -0.5, 0.25), b.clamp("c2", x, 0, 6))
		h = b.clamp("c3", b.dense(b.conv(h, "c", 4, 3, 1, 1), "fc1", 6, false), -0.3, 0.2)
		return b.dense(h, "fc2", 3, false)
	}},
}

func (b *graphNet) groupConv(x any, name string, out, k, stride, pad, groups int) any {
	return b.g.Conv2DGrouped(node(x), b.param(name+".w", out, channels(x)/groups, k, k), stride, pad, groups)
}

func (b *graphNet) clamp(name string, x any, lo, hi float32) any {
	return b.g.Clamp(name, node(x), lo, hi)
}

// groupConv is the float64 grouped convolution: output channel o reads the
// input channels of its group, o/(out/groups), through w [out,C/groups,k,k].
func (r *refNet) groupConv(xa any, name string, out, k, stride, pad, groups int) any {
	x, w := t(xa), r.p[name+".w"]
	n, c, h, wd := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	cg, og := c/groups, out/groups
	oh, ow := (h+2*pad-k)/stride+1, (wd+2*pad-k)/stride+1
	y := newT64(n, out, oh, ow)
	for i := range n {
		for o := range out {
			for oy := range oh {
				for ox := range ow {
					var s float64
					for ch := range cg {
						xc := o/og*cg + ch
						for ky := range k {
							for kx := range k {
								iy, ix := oy*stride+ky-pad, ox*stride+kx-pad
								if iy >= 0 && iy < h && ix >= 0 && ix < wd {
									s += w[((o*cg+ch)*k+ky)*k+kx] * x.v[((i*c+xc)*h+iy)*wd+ix]
								}
							}
						}
					}
					y.v[((i*out+o)*oh+oy)*ow+ox] = s
				}
			}
		}
	}
	return y
}

func (r *refNet) clamp(_ string, x any, lo, hi float32) any {
	return elementwise(t(x), func(v float64) float64 { return min(max(v, float64(lo)), float64(hi)) })
}

// envGroupedChild makes the test binary print groupedSpecs' digest and exit
// (see TestGroupedLayersSameBitsOnEveryKernelSet).
const envGroupedChild = "GTSTORM_TEST_GROUPED_DIGEST"

// TestGroupedLayersSameBitsOnEveryKernelSet runs the networks of
// groupedSpecs (grouped and depthwise convolutions, strided and padded,
// and Clamp) in a child process per kernel set this CPU runs and checks
// that every set gives the recorded bits, wantGroupedDigest: each group is
// the dense convolution's im2col and GEMM, and Clamp compares and copies,
// the same bits on every set and architecture.
func TestGroupedLayersSameBitsOnEveryKernelSet(t *testing.T) {
	digests, parent := kernelstest.Digests(t, "TestGroupedLayersSameBitsOnEveryKernelSet", envGroupedChild,
		func(t testing.TB) string { return specsDigest(t, groupedSpecs) })
	if !parent {
		return
	}
	for set, d := range digests {
		if d != wantGroupedDigest {
			t.Errorf("kernel set %s on %s: digest %s, want %s (pure Go: %s)", set, runtime.GOARCH, d, wantGroupedDigest, digests["go"])
		}
	}
}

// wantGroupedDigest is specsDigest(groupedSpecs) on every kernel set and
// architecture, recorded with the pure-Go set on amd64.
const wantGroupedDigest = "c0b4179e85af0828a4bdfe261ba7808c2a1e49a8886a4e5b26b6cbe17e7b8429"
