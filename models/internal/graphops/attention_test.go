package graphops

import (
	"math"
	"math/rand/v2"
	"testing"
)

// attention is timm's ViT Attention without its projections, in float64:
// per sample and head, S = Qᵀ·K·scale, P the softmax of S's rows, O = V·Pᵀ.
func (r *refNet) attention(_ string, xa any, heads int, scale float32) any {
	x := t(xa)
	n, d, tn := x.shape[0], x.shape[1]/3, x.shape[2]*x.shape[3]
	dh := d / heads
	y := newT64(n, d, x.shape[2], x.shape[3])
	at := func(i, part, h, j, u int) float64 { return x.v[((i*3+part)*d+h*dh+j)*tn+u] }
	p := make([]float64, tn)
	for i := range n {
		for h := range heads {
			for q := range tn {
				for u := range tn {
					var s float64
					for j := range dh {
						s += at(i, 0, h, j, q) * at(i, 1, h, j, u)
					}
					p[u] = s * float64(scale)
				}
				m := maxOf(p)
				var sum float64
				for u := range p {
					p[u] = math.Exp(p[u] - m)
					sum += p[u]
				}
				for j := range dh {
					var o float64
					for u := range tn {
						o += p[u] / sum * at(i, 2, h, j, u)
					}
					y.v[((i*d)+h*dh+j)*tn+q] = o
				}
			}
		}
	}
	return y
}

// TestAttentionWithoutInputGradient checks that an Attention on a
// parameter forms no gradient and keeps one softmax, so that its forward
// pass needs no buffer per sample and head.
func TestAttentionWithoutInputGradient(t *testing.T) {
	err := Build(func() error {
		g := New(nil, true)
		y := g.Attention("attn", g.Input("qkv", make([]float32, 2*12*5), 2, 12, 5, 1), 2, 1)
		if y == nil {
			return g.Err()
		}
		l := y.Op().(*attnOp).l
		if l.dqkv != nil || len(l.p) != 25 {
			t.Errorf("gradient %v and %d softmax values, want none and 25", l.dqkv != nil, len(l.p))
		}
		if d := y.Op().(*attnOp).DiffWRT(1); d[0] {
			t.Errorf("DiffWRT %v, want [false]", d)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// BenchmarkAttention times the forward and backward passes of the
// attention of a ViT-tiny on CIFAR-10: batch 32, width 192 in 3 heads, 65
// tokens (64 patches and the class token); GTSTORM_KERNELS picks the
// kernel set.
func BenchmarkAttention(b *testing.B) {
	const n, d, heads, tn = 32, 192, 3, 65
	rng := rand.New(rand.NewPCG(1, 2))
	qkv, dy := uniform(rng, n*3*d*tn, 1), uniform(rng, n*d*tn, 1)
	var fwd *attnOp
	err := Build(func() error {
		g := New(nil, true)
		x := g.Input("x", qkv, n, 3*d, tn, 1)
		y := g.Attention("attn", g.ChannelConst("c", x, ConstMul, []float32{1}), heads, float32(1/math.Sqrt(d/heads)))
		if y != nil {
			fwd = y.Op().(*attnOp)
		}
		return g.Err()
	})
	if err != nil {
		b.Fatal(err)
	}
	l := fwd.l
	back := &attnGradOp{kop{"attn.dqkv", l, []int{4, 4}, l.dqkv.Shape()}, l}
	qv, dv := view(qkv, n, 3*d, tn, 1), view(dy, n, d, tn, 1)
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"forward", func() error { _, err := fwd.Do(qv); return err }},
		{"forward+backward", func() error {
			if _, err := fwd.Do(qv); err != nil {
				return err
			}
			_, err := back.Do(dv, qv)
			return err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.run(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/step")
		})
	}
}
