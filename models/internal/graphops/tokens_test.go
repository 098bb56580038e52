package graphops

import (
	"math"
	"runtime"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
)

// tokenSpecs check the layers of vision transformers and MLP-Mixers
// (Attention, TokenLinear, ClassToken, PositionAdd, Token, TokenRange,
// AttentionPool) through small
// networks of them, run by TestLayersMatchFiniteDifferences and
// TestLayersProgramMatchesTapeMachine; their bits are wantTokensDigest's.
var tokenSpecs = []netSpec{
	{"vit-block", []int{3, 2, 2}, 3, func(b net, x any) any { // patches 1×1 → 4 tokens of width 4, 2 heads
		tk := b.(tokener)
		h := tk.positionAdd("pe", tk.classToken("cls", b.conv(x, "patch", 4, 1, 1, 0)))
		a := tk.attention("attn", b.conv(b.(channelNormer).channelNorm("ln", h), "qkv", 12, 1, 1, 0), 2, 0.7071068)
		h = b.add("res", h, b.conv(a, "proj", 4, 1, 1, 0))
		return b.dense(tk.token("tok", h, 0), "head", 3, false)
	}},
	{"attention-input", []int{6, 2, 3}, 4, func(b net, x any) any { // one head, T 6, on the (biased) input
		h := b.(tokener).attention("attn", x, 1, 1.3)
		return b.dense(b.tanh("t", h), "fc", 4, false)
	}},
	{"attention-heads", []int{18, 5, 1}, 3, func(b net, x any) any { // three heads of width 2
		tk := b.(tokener)
		h := tk.attention("attn", x, 3, 0.5)
		return b.dense(tk.token("last", h, 4), "fc", 3, false)
	}},
	{"mixer-block", []int{3, 6, 1}, 4, func(b net, x any) any { // token mixing 6 → 5 → 6, residual
		tk := b.(tokener)
		h := tk.tokenLinear("tm1", x, 5, true)
		h = tk.tokenLinear("tm2", b.pointwise("g", "gelu", h, 0), 6, true)
		h = b.add("res", x, h)
		return b.dense(tk.token("tok", h, 2), "fc", 4, false)
	}},
	{"tokenlinear-map", []int{3, 2, 3}, 3, func(b net, x any) any { // positions of a map, no bias
		h := b.(tokener).tokenLinear("tm", b.conv(x, "c", 4, 3, 1, 1), 4, false)
		return b.dense(b.globalAvgPool("gap", h), "fc", 3, false)
	}},
	{"token-range", []int{4, 2, 3}, 3, func(b net, x any) any { // timm's x[:, 1:].mean(1) after a class token
		tk := b.(tokener)
		h := tk.tokenLinear("tm", tk.classToken("cls", x), 7, true) // mixes the class token in
		return b.dense(b.globalAvgPool("gap", tk.tokenRange("rest", h, 1, 6)), "fc", 3, false)
	}},
	{"attention-pool", []int{4, 2, 3}, 3, func(b net, x any) any { // CCT's SeqPool: scores by a Linear D → 1
		h := b.conv(x, "c", 5, 1, 1, 0)
		return b.dense(b.(tokener).attentionPool("pool", h, b.conv(h, "score", 1, 1, 1, 0)), "fc", 3, false)
	}},
	{"position-map", []int{3, 2, 3}, 3, func(b net, x any) any { // pos [6,3] on a 2×3 map
		tk := b.(tokener)
		h := b.conv(tk.positionAdd("pe", x), "c", 4, 3, 1, 1)
		return b.dense(tk.token("tok", h, 4), "fc", 3, false)
	}},
}

// tokener is the test networks' token layers, outside net so that the
// interface other tests extend stays as it is.
type tokener interface {
	attention(name string, qkv any, heads int, scale float32) any
	tokenLinear(name string, x any, out int, bias bool) any // name.w [P,out], name.b [out]
	classToken(name string, x any) any                      // name.cls [D]
	positionAdd(name string, x any) any                     // name.pos [T,D]
	token(name string, x any, index int) any
	tokenRange(name string, x any, from, count int) any
	attentionPool(name string, x, s any) any
}

// positions returns x's H·W, or 1 for a nil node (an earlier error).
func positions(x any) int {
	if n := node(x); n != nil && n.Dims() == 4 {
		return n.Shape()[2] * n.Shape()[3]
	}
	return 1
}

func (b *graphNet) attention(name string, qkv any, heads int, scale float32) any {
	return b.g.Attention(name, node(qkv), heads, scale)
}

func (b *graphNet) tokenLinear(name string, x any, out int, bias bool) any {
	w := b.param(name+".w", positions(x), out)
	var bn *G.Node
	if bias {
		bn = b.param(name+".b", out)
	}
	return b.g.TokenLinear(name, node(x), w, bn)
}

func (b *graphNet) classToken(name string, x any) any {
	return b.g.ClassToken(name, node(x), b.param(name+".cls", channels(x)))
}

func (b *graphNet) positionAdd(name string, x any) any {
	return b.g.PositionAdd(name, node(x), b.param(name+".pos", positions(x), channels(x)))
}

func (b *graphNet) token(name string, x any, index int) any { return b.g.Token(name, node(x), index) }

func (r *refNet) tokenLinear(name string, xa any, out int, bias bool) any {
	x, w := t(xa), r.p[name+".w"]
	p := x.shape[2] * x.shape[3]
	y := newT64(x.shape[0], x.shape[1], out, 1)
	for row := range x.shape[0] * x.shape[1] {
		for k := range out {
			var s float64
			if bias {
				s = r.p[name+".b"][k]
			}
			for j := range p {
				s += x.v[row*p+j] * w[j*out+k]
			}
			y.v[row*out+k] = s
		}
	}
	return y
}

func (r *refNet) classToken(name string, xa any) any {
	x, cls := t(xa), r.p[name+".cls"]
	d, tn := x.shape[1], x.shape[2]*x.shape[3]
	y := newT64(x.shape[0], d, tn+1, 1)
	for k := range x.shape[0] * d {
		y.v[k*(tn+1)] = cls[k%d]
		copy(y.v[k*(tn+1)+1:(k+1)*(tn+1)], x.v[k*tn:(k+1)*tn])
	}
	return y
}

func (r *refNet) positionAdd(name string, xa any) any {
	x, pos := t(xa), r.p[name+".pos"]
	d, tn := x.shape[1], x.shape[2]*x.shape[3]
	y := newT64(x.shape...)
	for i, v := range x.v {
		y.v[i] = v + pos[i%tn*d+i/tn%d]
	}
	return y
}

func (b *graphNet) tokenRange(name string, x any, from, count int) any {
	return b.g.TokenRange(name, node(x), from, count)
}

func (b *graphNet) attentionPool(name string, x, s any) any {
	return b.g.AttentionPool(name, node(x), node(s))
}

func (r *refNet) attentionPool(_ string, xa, sa any) any {
	x, s := t(xa), t(sa)
	n, d, tn := x.shape[0], x.shape[1], x.shape[2]*x.shape[3]
	y := newT64(n, d)
	for i := range n {
		row := s.v[i*tn : (i+1)*tn]
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, v)
		}
		var z float64
		for _, v := range row {
			z += math.Exp(v - m)
		}
		for c := range d {
			for k, v := range row {
				y.v[i*d+c] += math.Exp(v-m) / z * x.v[(i*d+c)*tn+k]
			}
		}
	}
	return y
}

func (r *refNet) tokenRange(_ string, xa any, from, count int) any {
	x := t(xa)
	tn := x.shape[2] * x.shape[3]
	y := newT64(x.shape[0], x.shape[1], count, 1)
	for k := range x.shape[0] * x.shape[1] {
		copy(y.v[k*count:(k+1)*count], x.v[k*tn+from:k*tn+from+count])
	}
	return y
}

func (r *refNet) token(_ string, xa any, index int) any {
	x := t(xa)
	tn := x.shape[2] * x.shape[3]
	y := newT64(x.shape[0], x.shape[1])
	for k := range y.v {
		y.v[k] = x.v[k*tn+index]
	}
	return y
}

// TestTokenLayerErrors checks that the token layers refuse shapes and
// arguments they cannot compute, with the graph's first error naming the
// layer.
func TestTokenLayerErrors(t *testing.T) {
	in := func(g *Graph, name string, shape ...int) *G.Node {
		n := 1
		for _, d := range shape {
			n *= d
		}
		return g.Input(name, make([]float32, n), shape...)
	}
	tests := []struct {
		name  string
		build func(g *Graph, x *G.Node) *G.Node // x [2,12,2,3]
		want  string
	}{
		{"heads not dividing the width", func(g *Graph, x *G.Node) *G.Node { return g.Attention("attn", x, 3, 1) }, "attn: 3 heads do not divide the width 4"},
		{"no heads", func(g *Graph, x *G.Node) *G.Node { return g.Attention("attn", x, 0, 1) }, "attn: 0 heads"},
		{"channels not 3D", func(g *Graph, _ *G.Node) *G.Node { return g.Attention("attn", in(g, "q", 2, 8, 2, 3), 2, 1) }, "attn: input of shape (2, 8, 2, 3), want [n,3D,H,W]"},
		{"attention on features", func(g *Graph, _ *G.Node) *G.Node { return g.Attention("attn", in(g, "q", 2, 12), 2, 1) }, "attn: input of shape (2, 12)"},
		{"position embedding transposed", func(g *Graph, x *G.Node) *G.Node { return g.PositionAdd("pe", x, in(g, "pe.pos", 12, 6)) }, "pe: input (2, 12, 2, 3) and position embedding (12, 6), want"},
		{"position embedding of a sample", func(g *Graph, x *G.Node) *G.Node { return g.PositionAdd("pe", x, in(g, "pe.pos", 1, 6, 12)) }, "pe: input"},
		{"class token width", func(g *Graph, x *G.Node) *G.Node { return g.ClassToken("cls", x, in(g, "cls.cls", 6)) }, "cls: input (2, 12, 2, 3) and class token (6)"},
		{"token past the positions", func(g *Graph, x *G.Node) *G.Node { return g.Token("tok", x, 6) }, "tok: positions [6,7) outside the 6 positions"},
		{"negative token", func(g *Graph, x *G.Node) *G.Node { return g.Token("tok", x, -1) }, "tok: positions [-1,0)"},
		{"token range past the positions", func(g *Graph, x *G.Node) *G.Node { return g.TokenRange("tr", x, 2, 5) }, "tr: positions [2,7) outside the 6 positions"},
		{"empty token range", func(g *Graph, x *G.Node) *G.Node { return g.TokenRange("tr", x, 2, 0) }, "tr: positions [2,2)"},
		{"token-mixing weights", func(g *Graph, x *G.Node) *G.Node {
			return g.TokenLinear("tm", x, in(g, "tm.w", 5, 4), in(g, "tm.b", 4))
		}, "tm: input (2, 12, 2, 3), weights (5, 4)"},
		{"token-mixing bias", func(g *Graph, x *G.Node) *G.Node {
			return g.TokenLinear("tm", x, in(g, "tm.w", 6, 4), in(g, "tm.b", 5))
		}, "do not make a token-mixing layer"},
		{"two token layers named alike", func(g *Graph, x *G.Node) *G.Node { return g.Token("t", g.Attention("t", x, 2, 1), 0) }, "t: two layers"},
		{"nil class token", func(g *Graph, x *G.Node) *G.Node { return g.ClassToken("cls", x, nil) }, "cls: input 1 is nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Build(func() error {
				g := New(nil, true)
				if n := tt.build(g, in(g, "x", 2, 12, 2, 3)); n != nil {
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

// envTokensChild makes the test binary print tokenSpecs' digest and exit
// (see TestTokensSameBitsOnEveryKernelSet).
const envTokensChild = "GTSTORM_TEST_TOKENS_DIGEST"

// TestTokensSameBitsOnEveryKernelSet runs the networks of tokenSpecs in a
// child process per kernel set this CPU runs and checks that every set
// gives the recorded bits, wantTokensDigest.
func TestTokensSameBitsOnEveryKernelSet(t *testing.T) {
	digests, parent := kernelstest.Digests(t, "TestTokensSameBitsOnEveryKernelSet", envTokensChild,
		func(t testing.TB) string { return specsDigest(t, tokenSpecs) })
	if !parent {
		return
	}
	for set, d := range digests {
		if d != wantTokensDigest {
			t.Errorf("kernel set %s on %s: digest %s, want %s (pure Go: %s)", set, runtime.GOARCH, d, wantTokensDigest, digests["go"])
		}
	}
}

// wantTokensDigest is specsDigest(tokenSpecs) on every kernel set and
// architecture, recorded with the pure-Go set on amd64.
const wantTokensDigest = "7a2637709d55a1190dcc102437c55532f539da6cf754b71ac54aa409ef9e1e28"
