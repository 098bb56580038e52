package graphops

import (
	"runtime"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
)

// convAxesSpecs check Conv2DAxes — factorised 1×3 and 3×1 kernels,
// per-axis strides and padding, dilation with and without stride, sides
// padded unequally (ONNX's pads [top,left,bottom,right]), dense and
// grouped — through small networks of them, run by
// TestLayersMatchFiniteDifferences and TestLayersProgramMatchesTapeMachine;
// their bits are wantConvShapesDigest's, not layersDigest's.
var convAxesSpecs = []netSpec{
	{"conv-factorised", []int{3, 7, 8}, 3, func(b net, x any) any {
		a := b.(axesNet)
		h := a.axesConv(x, "c13", 4, 1, 3, ConvAxes{SH: 1, SW: 1, PW: 1}, 1)                             // 1×3, padding (0,1): 7×8, the scratch kernels
		h = a.axesConv(b.relu("r1", b.bias(h, "c13")), "c31", 4, 3, 1, ConvAxes{SH: 2, SW: 1, PH: 1}, 1) // 3×1, stride (2,1), padding (1,0): 4×8
		h = a.axesConv(h, "g13", 4, 1, 3, ConvAxes{SH: 1, SW: 2, PW: 1}, 2)                              // grouped 1×3, stride (1,2): 4×4
		return b.dense(b.globalAvgPool("gap", h), "fc", 3, false)
	}},
	{"conv-dilated", []int{2, 9, 10}, 3, func(b net, x any) any {
		a := b.(axesNet)
		h := a.axesConv(x, "d2", 4, 3, 3, ConvAxes{SH: 1, SW: 1, PH: 2, PW: 2, DH: 2, DW: 2}, 1) // dilated 3×3, d = 2, padding 2: 9×10
		h = b.relu("r1", b.bias(h, "d2"))
		h = a.axesConv(h, "d2s2", 4, 3, 3, ConvAxes{SH: 2, SW: 2, PH: 2, PW: 2, DH: 2, DW: 2}, 2) // grouped, dilated, stride 2: 5×5
		h = a.axesConv(h, "dxy", 3, 2, 3, ConvAxes{SH: 1, SW: 2, PH: 1, DH: 3, DW: 1}, 1)         // 2×3, d = (3,1), stride (1,2), padding (1,0): 3×2
		return b.dense(h, "fc", 3, false)
	}},
	{"conv-unequal-pads", []int{3, 8, 8}, 3, func(b net, x any) any {
		a := b.(axesNet)
		h := a.axesConv(x, "s2", 4, 3, 3, ConvAxes{SH: 2, SW: 2, EB: 1, ER: 1}, 1) // pads [0,0,1,1], stride 2 (SAME_UPPER): 4×4
		h = b.relu("r1", b.bias(h, "s2"))
		h = a.axesConv(h, "g", 4, 3, 3, ConvAxes{SH: 1, SW: 1, PH: 1, EB: 1, ER: 1, DH: 2}, 2)    // grouped, pads [1,0,2,1], dilation (2,1): 3×3
		h = a.axesConv(h, "k4", 4, 4, 4, ConvAxes{SH: 1, SW: 1, PH: 1, PW: 1, EB: 1, ER: 1}, 1)   // pads [1,1,2,2], padding='same': 3×3, the scratch kernels
		h = a.axesConv(h, "lo", 3, 2, 2, ConvAxes{SH: 2, SW: 2, PH: 1, PW: 1, EB: -1, ER: -1}, 1) // pads [1,1,0,0], stride 2 (SAME_LOWER): 2×2
		return b.dense(h, "fc", 3, false)
	}},
}

// axesNet is the convolution of convAxesSpecs: name.w [out,C/groups,kh,kw]
// with per-axis settings.
type axesNet interface {
	axesConv(x any, name string, out, kh, kw int, a ConvAxes, groups int) any
}

func (b *graphNet) axesConv(x any, name string, out, kh, kw int, a ConvAxes, groups int) any {
	return b.g.Conv2DAxes(node(x), b.param(name+".w", out, channels(x)/groups, kh, kw), a, groups)
}

// axesConv is the float64 convolution with per-axis settings: output
// (oy, ox) of channel o reads x[c][oy·SH+i·DH−PH][ox·SW+j·DW−PW] for the
// input channels c of its group, o/(out/groups), with OH·OW outputs,
// OH = (H+PH+(PH+EB)−DH·(KH−1)−1)/SH+1.
func (r *refNet) axesConv(xa any, name string, out, kh, kw int, a ConvAxes, groups int) any {
	x, w := t(xa), r.p[name+".w"]
	n, c, h, wd := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	dh, dw := max(a.DH, 1), max(a.DW, 1)
	cg, og := c/groups, out/groups
	oh, ow := (h+2*a.PH+a.EB-dh*(kh-1)-1)/a.SH+1, (wd+2*a.PW+a.ER-dw*(kw-1)-1)/a.SW+1
	y := newT64(n, out, oh, ow)
	for i := range n {
		for o := range out {
			for oy := range oh {
				for ox := range ow {
					var s float64
					for ch := range cg {
						xc := o/og*cg + ch
						for ky := range kh {
							for kx := range kw {
								iy, ix := oy*a.SH+ky*dh-a.PH, ox*a.SW+kx*dw-a.PW
								if iy >= 0 && iy < h && ix >= 0 && ix < wd {
									s += w[((o*cg+ch)*kh+ky)*kw+kx] * x.v[((i*c+xc)*h+iy)*wd+ix]
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

// TestConvAxesErrors checks that Conv2DAxes refuses settings out of range
// and shapes the kernel does not fit, naming the layer.
func TestConvAxesErrors(t *testing.T) {
	tests := []struct {
		name string
		a    ConvAxes
		kh   int
		want string
	}{
		{"stride 0", ConvAxes{SH: 1, SW: 0}, 3, "c: {SH:1 SW:0"},
		{"negative padding", ConvAxes{SH: 1, SW: 1, PW: -1}, 3, "want strides ≥ 1"},
		{"negative dilation", ConvAxes{SH: 1, SW: 1, DH: -2}, 3, "want strides ≥ 1"},
		{"dilated past the image", ConvAxes{SH: 1, SW: 1, DH: 3}, 3, "c: conv shape"},
		{"negative bottom padding", ConvAxes{SH: 1, SW: 1, PH: 1, EB: -2}, 3, "want strides ≥ 1"},
		{"negative right padding", ConvAxes{SH: 1, SW: 1, ER: -1}, 3, "want strides ≥ 1"},
		{"past the image padded below", ConvAxes{SH: 1, SW: 1, PH: 1, EB: -1}, 7, "c: conv shape"},
	}
	for _, tt := range tests {
		err := Build(func() error {
			g := New(nil, true)
			x := g.Input("x", make([]float32, 2*3*5*5), 2, 3, 5, 5)
			w := g.Input("c.w", make([]float32, 4*3*tt.kh*3), 4, 3, tt.kh, 3)
			if z := g.Conv2DAxes(x, w, tt.a, 1); z != nil {
				t.Errorf("%s: got a node, want an error", tt.name)
			}
			return g.Err()
		})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

// envConvShapesChild makes the test binary print convAxesSpecs' digest and
// exit (see TestConvShapesSameBitsOnEveryKernelSet).
const envConvShapesChild = "GTSTORM_TEST_CONVSHAPES_DIGEST"

// TestConvShapesSameBitsOnEveryKernelSet runs the networks of
// convAxesSpecs (factorised, per-axis strided and padded, dilated, and
// padded unequally on two sides, dense and grouped) in a child process per kernel set this
// CPU runs and checks that every set gives the recorded bits,
// wantConvShapesDigest: their im2col copies and their col2im adds in one
// fixed order, in pure Go or on the valid kernels of the padded image,
// the same bits on every set and architecture.
func TestConvShapesSameBitsOnEveryKernelSet(t *testing.T) {
	digests, parent := kernelstest.Digests(t, "TestConvShapesSameBitsOnEveryKernelSet", envConvShapesChild,
		func(t testing.TB) string { return specsDigest(t, convAxesSpecs) })
	if !parent {
		return
	}
	for set, d := range digests {
		if d != wantConvShapesDigest {
			t.Errorf("kernel set %s on %s: digest %s, want %s (pure Go: %s)", set, runtime.GOARCH, d, wantConvShapesDigest, digests["go"])
		}
	}
}

// wantConvShapesDigest is specsDigest(convAxesSpecs) on every kernel set
// and architecture, recorded with the pure-Go set on amd64 (and the same
// on avx2, and on neon and pure Go under qemu-aarch64-static) when
// conv-unequal-pads joined.
const wantConvShapesDigest = "1d8b09fa6d38c14058c5e0ed7aed84330476d4fa4fc044e91ad58db7820b9ed3"
