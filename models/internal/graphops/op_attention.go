package graphops

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// attnLayer is multi-head scaled dot-product self-attention over the T =
// H·W positions of qkv [n,3D,H,W], channel part·D + head·dh + j holding
// component j of a head's query (part 0), key (1) or value (2): timm's ViT
// Attention without its projections. Per sample and head, with Q, K and V
// the [dh,T] matrices of the head,
//
//	S = (Qᵀ·K)·scale, P = softmax of each row of S, O = V·Pᵀ,
//
// O being the head's dh channels of the output [n,D,H,W]. The products are
// kernels.Sgemm's; the softmax is computed in float64 with
// detmath.Exp, its row sums in order: the same bits on every kernel set and
// architecture.
type attnLayer struct {
	name        string
	n, d, t     int // batch, model width D and positions T
	heads, dh   int
	scale       float32
	y           tensor.Tensor
	dqkv        tensor.Tensor // gradient of qkv; nil where it is not formed
	p           []float32     // the softmax of each sample and head (training), or of one
	dp          []float32     // dP, then dS, of one sample and head
	e           []float64     // a row's exponentials
	keepAllRows bool          // p holds every sample's and head's softmax
}

// attnOp is the forward pass: qkv → y.
type attnOp struct {
	kop
	l *attnLayer
}

// attnGradOp is (dy, qkv) → dqkv, reading the softmax the forward op kept.
type attnGradOp struct {
	kop
	l *attnLayer
}

// Attention adds multi-head self-attention for qkv [n,3D,H,W], the
// output of torch's nn.Linear(D, 3D) on tokens [n,T,D] held channel-major
// (T = H·W): channel part·D + head·dh + j is component j (dh = D/heads) of
// a head's query (part 0), key (1) or value (2). Each head's output at
// position t is Σ_u P[t,u]·v[·,u], P[t,·] the softmax over u of
// (Σ_j q[j,t]·k[j,u])·scale, as timm's ViT Attention computes it without
// its projections; the result, [n,D,H,W], holds head h in channels
// h·dh … h·dh+dh−1. The layer takes name, unique within the graph, for its
// buffers and ops. The gradient with respect to qkv is formed in a
// training graph where qkv is computed by another op.
func (g *Graph) Attention(name string, qkv *G.Node, heads int, scale float32) *G.Node {
	if !g.ok(name, qkv) {
		return nil
	}
	s := qkv.Shape()
	if len(s) != 4 || s[1]%3 != 0 {
		g.err = fmt.Errorf("%s: input of shape %v, want [n,3D,H,W]", name, s)
		return nil
	}
	d := s[1] / 3
	if heads < 1 || d%heads != 0 {
		g.err = fmt.Errorf("%s: %d heads do not divide the width %d", name, heads, d)
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	n, t := s[0], s[2]*s[3]
	l := &attnLayer{name: name, n: n, d: d, t: t, heads: heads, dh: d / heads, scale: scale,
		y: g.ws.tensor(name+".y", n, d, s[2], s[3]), e: g.ws.Float64s(name+".e", t)}
	rows := 1
	if g.training && qkv.Op() != nil {
		l.dqkv = g.ws.tensor(name+".dqkv", s...)
		l.dp = g.ws.Floats(name+".dp", t*t)
		l.keepAllRows, rows = true, n*heads
	}
	l.p = g.ws.Floats(name+".p", rows*t*t)
	return g.apply(&attnOp{kop{name + ".forward", l, dims(qkv), l.y.Shape()}, l}, name, qkv)
}

// head returns the offsets in qkv of sample i's head h's Q (K and V follow
// at +D·T and +2D·T) and in y of its output.
func (l *attnLayer) head(i, h int) (q, o int) {
	return (i*3*l.d + h*l.dh) * l.t, (i*l.d + h*l.dh) * l.t
}

func (op *attnOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*3*l.d*l.t)
	if err != nil {
		return nil, err
	}
	qkv, y, t, tt, part := a[0], f32(l.y), l.t, l.t*l.t, l.d*l.t
	for i := range l.n {
		for h := range l.heads {
			q, o := l.head(i, h)
			p := l.p[:tt]
			if l.keepAllRows {
				p = l.p[(i*l.heads+h)*tt:][:tt]
			}
			kernels.Sgemm(true, false, t, t, l.dh, 1, qkv[q:], t, qkv[q+part:], t, 0, p, t)
			for r := range t {
				l.softmax(p[r*t : (r+1)*t])
			}
			kernels.Sgemm(false, true, l.dh, t, t, 1, qkv[q+2*part:], t, p, t, 0, y[o:], t)
		}
	}
	return l.y, nil
}

// softmax replaces the row s of raw scores Σ_j q[j,t]·k[j,u] by the
// softmax of s·scale (softmaxRow).
func (l *attnLayer) softmax(s []float32) { softmaxRow(s, l.scale, l.e) }

// softmaxRow replaces the row s by the softmax of s·scale: each value
// scaled in float32, then exponentials of the differences from the row's
// maximum in float64 (in e, at least as long as s), summed in order.
func softmaxRow(s []float32, scale float32, e []float64) {
	m := math.Inf(-1)
	for u, v := range s {
		v = float32(v * scale) // rounded: torch's (q @ kᵀ) * scale
		s[u] = v
		m = max(m, float64(v))
	}
	e = e[:len(s)]
	for u, v := range s {
		e[u] = float64(v) - m
	}
	kernels.Exp64s(e, e) // detmath.Exp's bits
	var sum float64
	for _, v := range e {
		sum += v
	}
	for u, v := range e {
		s[u] = float32(v / sum)
	}
}

func (op *attnOp) DiffWRT(int) []bool { return []bool{op.l.dqkv != nil} }

func (op *attnOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%s: %d inputs, want 1", l.name, len(inputs))
	}
	if l.dqkv == nil {
		return G.Nodes{nil}, nil
	}
	d, err := G.ApplyOp(&attnGradOp{kop{l.name + ".dqkv", l, dims(grad, inputs[0]), l.dqkv.Shape()}, l}, grad, inputs[0])
	if err != nil {
		return nil, fmt.Errorf("%s: input gradient: %w", l.name, err)
	}
	return G.Nodes{d}, nil
}

// Do forms, per sample and head, with dO the head's [dh,T] gradient:
// dV = dO·P, dP = dOᵀ·V, dS = P∘(dP − rowsum(P∘dP)), dQ = scale·K·dSᵀ and
// dK = scale·Q·dS, the scale folded into dS.
func (op *attnGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.d*l.t, l.n*3*l.d*l.t)
	if err != nil {
		return nil, err
	}
	dy, qkv, dqkv := a[0], a[1], f32(l.dqkv)
	t, tt, part, ds := l.t, l.t*l.t, l.d*l.t, l.dp
	for i := range l.n {
		for h := range l.heads {
			q, o := l.head(i, h)
			p := l.p[(i*l.heads+h)*tt:][:tt]
			kernels.Sgemm(false, false, l.dh, t, t, 1, dy[o:], t, p, t, 0, dqkv[q+2*part:], t)
			kernels.Sgemm(true, false, t, t, l.dh, 1, dy[o:], t, qkv[q+2*part:], t, 0, ds, t)
			for r := range t {
				l.softmaxGrad(ds[r*t:(r+1)*t], p[r*t:(r+1)*t])
			}
			kernels.Sgemm(false, true, l.dh, t, t, 1, qkv[q+part:], t, ds, t, 0, dqkv[q:], t)
			kernels.Sgemm(false, false, l.dh, t, t, 1, qkv[q:], t, ds, t, 0, dqkv[q+part:], t)
		}
	}
	return l.dqkv, nil
}

// softmaxGrad replaces the row dp of dP by the gradient at the row's
// scores before scaling (softmaxRowGrad).
func (l *attnLayer) softmaxGrad(dp, p []float32) { softmaxRowGrad(dp, p, l.scale) }

// softmaxRowGrad replaces dp, the gradient at the softmax p of a row
// scaled by scale, by scale·p∘(dp − Σ_u p[u]·dp[u]), the gradient at the
// row before scaling; the sum is float64, in order.
func softmaxRowGrad(dp, p []float32, scale float32) {
	var r float64
	for u, v := range dp {
		r += float64(float64(p[u]) * float64(v))
	}
	sc := float64(scale)
	for u, v := range dp {
		dp[u] = float32(float64(float64(p[u])*(float64(v)-r)) * sc)
	}
}
