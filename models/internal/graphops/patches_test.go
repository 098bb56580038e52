package graphops

import (
	"runtime"
	"slices"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
)

// patchSpecs check Patches through small networks, run by
// TestLayersMatchFiniteDifferences and TestLayersProgramMatchesTapeMachine;
// their bits are wantPatchesDigest's.
var patchSpecs = []netSpec{
	{"patches-pixel-2x3", []int{3, 4, 6}, 3, patchHead(2, 3, false)},    // non-square patches, 4 tokens of 18
	{"patches-channel-2x3", []int{3, 4, 6}, 3, patchHead(2, 3, true)},   // the same, channel-major
	{"patches-channel-3x2", []int{2, 6, 4}, 3, patchHead(3, 2, true)},   // 4 tokens of 12
	{"patches-gray-2x2", []int{1, 4, 6}, 3, patchHead(2, 2, false)},     // C 1: 6 tokens of 4
	{"patches-whole-map", []int{3, 2, 2}, 3, patchHead(2, 2, false)},    // one token
	{"patches-pixel-1x1", []int{2, 3, 2}, 3, patchHead(1, 1, false)},    // the tokens of flatten(2)
	{"patches-channel-1x1", []int{2, 3, 2}, 3, patchHead(1, 1, true)},   // the same
	{"patches-pixel-4x4", []int{3, 8, 8}, 3, patchHead(4, 4, false)},    // lucidrains' ViT, smaller
	{"patches-channel-4x2", []int{3, 8, 4}, 3, patchHead(4, 2, true)},   // tall patches
	{"patches-pixel-1x2", []int{1, 2, 4}, 3, patchHead(1, 2, false)},    // a patch of a row
	{"patches-channel-2x1", []int{2, 4, 1}, 3, patchHead(2, 1, true)},   // a patch of a column
	{"patches-pixel-2x2-c4", []int{4, 2, 4}, 3, patchHead(2, 2, false)}, // more channels than pixels
}

// patchHead is Patches ph×pw → a 1×1 convolution of the tokens' features
// (a Linear) → tanh → dense.
func patchHead(ph, pw int, channelMajor bool) func(b net, x any) any {
	return func(b net, x any) any {
		h := b.(patcher).patches("p", x, ph, pw, channelMajor)
		return b.dense(b.tanh("t", b.conv(h, "lin", 5, 1, 1, 0)), "fc", 3, false)
	}
}

// patcher is the test networks' Patches layer.
type patcher interface {
	patches(name string, x any, ph, pw int, channelMajor bool) any
}

func (b *graphNet) patches(name string, x any, ph, pw int, channelMajor bool) any {
	return b.g.Patches(name, node(x), ph, pw, channelMajor)
}

// patches is the definition: for token t = hh·(W/pw)+ww and pixel (i1,i2)
// of its patch, y[(i1·pw+i2)·C+c, t] (channel-major: y[c·ph·pw+i1·pw+i2,
// t]) = x[c, hh·ph+i1, ww·pw+i2].
func (r *refNet) patches(_ string, xa any, ph, pw int, channelMajor bool) any {
	x := t(xa)
	n, c, h, w := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	rows, cols := h/ph, w/pw
	f, tn := ph*pw*c, rows*cols
	y := newT64(n, f, tn, 1)
	for i := range n {
		for ch := range c {
			for hh := range rows {
				for ww := range cols {
					for i1 := range ph {
						for i2 := range pw {
							feat := (i1*pw+i2)*c + ch
							if channelMajor {
								feat = ch*ph*pw + i1*pw + i2
							}
							y.v[(i*f+feat)*tn+hh*cols+ww] = x.v[((i*c+ch)*h+hh*ph+i1)*w+ww*pw+i2]
						}
					}
				}
			}
		}
	}
	return y
}

// TestPatchesMatchDefinition runs the forward op on x[k] = k and checks
// every value of y against refNet.patches, then the backward op on y and
// checks that it gives x back: dx is the inverse copy.
func TestPatchesMatchDefinition(t *testing.T) {
	tests := []struct {
		name         string
		shape        []int // [n,C,H,W]
		ph, pw       int
		channelMajor bool
	}{
		{"pixel-major 2×2", []int{2, 3, 4, 4}, 2, 2, false},
		{"channel-major 2×2", []int{2, 3, 4, 4}, 2, 2, true},
		{"pixel-major 2×3", []int{1, 3, 4, 6}, 2, 3, false},
		{"channel-major 3×2", []int{1, 3, 6, 4}, 3, 2, true},
		{"gray pixel-major 2×4", []int{2, 1, 4, 8}, 2, 4, false},
		{"gray channel-major 4×1", []int{1, 1, 8, 3}, 4, 1, true},
		{"one patch", []int{1, 2, 3, 5}, 3, 5, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, c, h, w := tt.shape[0], tt.shape[1], tt.shape[2], tt.shape[3]
			size := n * c * h * w
			x := make([]float32, size)
			x64 := newT64(tt.shape...)
			for k := range x {
				x[k], x64.v[k] = float32(k), float64(k)
			}
			want := (&refNet{}).patches("p", x64, tt.ph, tt.pw, tt.channelMajor).(*t64)
			f, tn := tt.ph*tt.pw*c, (h/tt.ph)*(w/tt.pw)
			if !slices.Equal(want.shape, []int{n, f, tn, 1}) {
				t.Fatalf("reference shape %v", want.shape)
			}
			l := &patchLayer{name: "p", n: n, to: patchIndex(c, h, w, tt.ph, tt.pw, tt.channelMajor),
				y: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(n, f, tn, 1)), dx: tensor.New(tensor.Of(tensor.Float32), tensor.WithShape(tt.shape...))}
			fwd := &patchOp{kop{"p.forward", l, []int{4}, l.y.Shape()}, l, false}
			out, err := fwd.Do(tensor.New(tensor.WithShape(tt.shape...), tensor.WithBacking(slices.Clone(x))))
			if err != nil {
				t.Fatal(err)
			}
			y := f32(out.(tensor.Tensor))
			for k, v := range want.v {
				if float64(y[k]) != v {
					t.Fatalf("y[%d] = %g, want %g", k, y[k], v)
				}
			}
			back := &patchOp{kop{"p.dx", l, []int{4}, l.dx.Shape()}, l, true}
			out, err = back.Do(tensor.New(tensor.WithShape(n, f, tn, 1), tensor.WithBacking(slices.Clone(y))))
			if err != nil {
				t.Fatal(err)
			}
			if dx := f32(out.(tensor.Tensor)); !slices.Equal(dx, x) {
				t.Errorf("the backward copy of y gives %v, want x %v", dx, x)
			}
		})
	}
}

// TestPatchesErrors checks that Patches refuses what it cannot compute,
// the graph's first error naming the layer.
func TestPatchesErrors(t *testing.T) {
	in := func(g *Graph, name string, shape ...int) *G.Node {
		return g.Input(name, make([]float32, tensor.Shape(shape).TotalSize()), shape...)
	}
	tests := []struct {
		name  string
		build func(g *Graph, x *G.Node) *G.Node // x [2,3,4,6]
		want  string
	}{
		{"height not a multiple", func(g *Graph, x *G.Node) *G.Node { return g.Patches("p", x, 3, 2, false) }, "p: patches 3×2 do not tile the maps 4×6"},
		{"width not a multiple", func(g *Graph, x *G.Node) *G.Node { return g.Patches("p", x, 2, 4, true) }, "p: patches 2×4 do not tile"},
		{"no patch", func(g *Graph, x *G.Node) *G.Node { return g.Patches("p", x, 0, 2, false) }, "p: patches 0×2"},
		{"a vector", func(g *Graph, _ *G.Node) *G.Node { return g.Patches("p", in(g, "v", 2, 12), 2, 2, false) }, "p: input (2, 12), want [n,C,H,W]"},
		{"nil input", func(g *Graph, _ *G.Node) *G.Node { return g.Patches("p", nil, 2, 2, false) }, "p: input 0 is nil"},
		{"two layers named alike", func(g *Graph, x *G.Node) *G.Node { return g.Patches("p", g.Patches("p", x, 2, 2, false), 1, 1, false) }, "p: two layers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Build(func() error {
				g := New(nil, true)
				if n := tt.build(g, in(g, "x", 2, 3, 4, 6)); n != nil {
					t.Errorf("got a node, want an error")
				}
				return g.Err()
			})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// envPatchesChild makes the test binary print patchSpecs' digest and exit
// (see TestPatchesSameBitsOnEveryKernelSet).
const envPatchesChild = "GTSTORM_TEST_PATCHES_DIGEST"

// TestPatchesSameBitsOnEveryKernelSet runs the networks of patchSpecs in a
// child process per kernel set this CPU runs and checks that every set
// gives the recorded bits, wantPatchesDigest (the token layers' own digest
// is TestTokensSameBitsOnEveryKernelSet's).
func TestPatchesSameBitsOnEveryKernelSet(t *testing.T) {
	digests, parent := kernelstest.Digests(t, "TestPatchesSameBitsOnEveryKernelSet", envPatchesChild,
		func(t testing.TB) string { return specsDigest(t, patchSpecs) })
	if !parent {
		return
	}
	for set, d := range digests {
		if d != wantPatchesDigest {
			t.Errorf("kernel set %s on %s: digest %s, want %s (pure Go: %s)", set, runtime.GOARCH, d, wantPatchesDigest, digests["go"])
		}
	}
}

// wantPatchesDigest is specsDigest(patchSpecs) on every kernel set and
// architecture, recorded with the pure-Go set on amd64.
const wantPatchesDigest = "10a996b76a7cd60855fbc3fa55753c4984eba99ef0489f824e6190927e1c722f"
