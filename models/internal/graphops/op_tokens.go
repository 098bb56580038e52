package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The token layers of a vision transformer act on a sequence [n,T,D] held
// channel-major as maps [n,D,H,W], the T = H·W positions of a channel read
// flat. They copy and add values, and sum a parameter's gradient over the
// batch in float64 in sample order: the same bits on every kernel set and
// architecture.

// tokenKind tells the token layers apart.
type tokenKind int

const (
	kindClassToken  tokenKind = iota // y = [cls, x] along the positions
	kindPositionAdd                  // y[i,d,t] = x[i,d,t] + pos[t,d]
	kindToken                        // y[i,d,c] = x[i,d,index+c], c < count
)

// tokenLayer is a ClassToken, PositionAdd or Token layer of input x
// [n,D,H,W] (T positions) and, but for Token, a parameter.
type tokenLayer struct {
	name    string
	kind    tokenKind
	n, d, t int
	index   int // Token's first position
	count   int // Token's positions
	y       tensor.Tensor
	dx      tensor.Tensor // gradient of x; nil where it is not formed
	dp      tensor.Tensor // gradient of the parameter; nil where it is not formed
}

// tokenOp is the forward pass: (x[, param]) → y.
type tokenOp struct {
	kop
	l *tokenLayer
}

// tokenDXOp is dy → dx.
type tokenDXOp struct {
	kop
	l *tokenLayer
}

// tokenDPOp is dy → the parameter's gradient.
type tokenDPOp struct {
	kop
	l *tokenLayer
}

// ClassToken adds torch.cat((cls.expand(n,-1,-1), x), dim=1) for tokens x
// [n,D,H,W] (T = H·W positions) and a parameter cls [D]: y [n,D,T+1,1],
// position 0 holding cls and positions 1 … T those of x in order. The layer
// takes name, unique within the graph, for its buffers and ops. The
// gradient of cls, summed over the samples in float64, is formed in a
// training graph; that of x where x is computed by another op.
func (g *Graph) ClassToken(name string, x, cls *G.Node) *G.Node {
	if !g.ok(name, x, cls) {
		return nil
	}
	xs := x.Shape()
	if len(xs) != 4 || cls.Shape().TotalSize() != xs[1] {
		g.err = fmt.Errorf("%s: input %v and class token %v, want [n,D,H,W] and [D]", name, xs, cls.Shape())
		return nil
	}
	l := &tokenLayer{name: name, kind: kindClassToken, n: xs[0], d: xs[1], t: xs[2] * xs[3]}
	return g.token(l, x, cls, l.n, l.d, l.t+1, 1)
}

// PositionAdd adds y[i,d,t] = x[i,d,t] + pos[t,d] for tokens x [n,D,H,W]
// (T = H·W positions) and a parameter pos [T,D], torch's x + pos_embed of
// pos_embed [1,T,D]. The layer takes name, unique within the graph, for its
// buffers and ops. The gradient of pos, summed over the samples in float64,
// is formed in a training graph; that of x where x is computed by another
// op.
func (g *Graph) PositionAdd(name string, x, pos *G.Node) *G.Node {
	if !g.ok(name, x, pos) {
		return nil
	}
	xs, ps := x.Shape(), pos.Shape()
	if len(xs) != 4 || len(ps) != 2 || ps[0] != xs[2]*xs[3] || ps[1] != xs[1] {
		g.err = fmt.Errorf("%s: input %v and position embedding %v, want [n,D,H,W] and [H·W,D]", name, xs, ps)
		return nil
	}
	l := &tokenLayer{name: name, kind: kindPositionAdd, n: xs[0], d: xs[1], t: xs[2] * xs[3]}
	return g.token(l, x, pos, xs...)
}

// Token adds y[i,d] = x[i,d,index] for tokens x [n,D,H,W]: the token at
// position index of the H·W positions read flat, torch's x[:, index] of
// [n,T,D]; y is [n,D]. The layer takes name, unique within the graph, for
// its buffers and ops. The gradient of x, dy at that position and zeros
// elsewhere, is formed where x is computed by another op.
func (g *Graph) Token(name string, x *G.Node, index int) *G.Node {
	l := g.tokenRange(name, x, index, 1)
	if l == nil {
		return nil
	}
	return g.token(l, x, nil, l.n, l.d)
}

// TokenRange adds y[i,d,c] = x[i,d,from+c], c < count, for tokens x
// [n,D,H,W]: positions from … from+count-1 of the H·W read flat, torch's
// x[:, from:from+count] of [n,T,D]; y is [n,D,count,1]. The layer takes
// name, unique within the graph, for its buffers and ops. The gradient of
// x, dy at those positions and zeros elsewhere, is formed where x is
// computed by another op.
func (g *Graph) TokenRange(name string, x *G.Node, from, count int) *G.Node {
	l := g.tokenRange(name, x, from, count)
	if l == nil {
		return nil
	}
	return g.token(l, x, nil, l.n, l.d, count, 1)
}

// tokenRange returns the layer of Token or TokenRange, or nil with g.err
// set.
func (g *Graph) tokenRange(name string, x *G.Node, from, count int) *tokenLayer {
	if !g.ok(name, x) {
		return nil
	}
	xs := x.Shape()
	if len(xs) != 4 {
		g.err = fmt.Errorf("%s: input %v, want [n,D,H,W]", name, xs)
		return nil
	}
	if t := xs[2] * xs[3]; from < 0 || count < 1 || from+count > t {
		g.err = fmt.Errorf("%s: positions [%d,%d) outside the %d positions of an input %v", name, from, from+count, t, xs)
		return nil
	}
	return &tokenLayer{name: name, kind: kindToken, n: xs[0], d: xs[1], t: xs[2] * xs[3], index: from, count: count}
}

// token completes the layer l of input x and parameter p (nil for Token),
// whose output has shape out, and adds its forward op.
func (g *Graph) token(l *tokenLayer, x, p *G.Node, out ...int) *G.Node {
	if !g.claim(l.name) {
		return nil
	}
	l.y = g.ws.tensor(l.name+".y", out...)
	in := []*G.Node{x}
	if p != nil {
		in = append(in, p)
	}
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(l.name+".dx", x.Shape()...)
	}
	if g.training && p != nil {
		l.dp = g.ws.tensor(l.name+".dparam", p.Shape()...)
	}
	return g.apply(&tokenOp{kop{l.name + ".forward", l, dims(in...), l.y.Shape()}, l}, l.name, in...)
}

// params returns the number of values of the layer's parameter.
func (l *tokenLayer) params() int {
	switch l.kind {
	case kindClassToken:
		return l.d
	case kindPositionAdd:
		return l.t * l.d
	}
	return 0
}

// outPlane returns the positions of a channel of the output.
func (l *tokenLayer) outPlane() int {
	switch l.kind {
	case kindClassToken:
		return l.t + 1
	case kindToken:
		return l.count
	}
	return l.t
}

func (op *tokenOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	var a [maxArity][]float32
	var err error
	if l.kind == kindToken {
		a, err = op.args(inputs, l.n*l.d*l.t)
	} else {
		a, err = op.args(inputs, l.n*l.d*l.t, l.params())
	}
	if err != nil {
		return nil, err
	}
	x, p, y := a[0], a[1], f32(l.y)
	for k := range l.n * l.d {
		xb, d := x[k*l.t:(k+1)*l.t], k%l.d
		switch l.kind {
		case kindClassToken:
			yb := y[k*(l.t+1) : (k+1)*(l.t+1)]
			yb[0] = p[d]
			copy(yb[1:], xb)
		case kindPositionAdd:
			yb := y[k*l.t : (k+1)*l.t]
			for t, v := range xb {
				yb[t] = v + p[t*l.d+d]
			}
		case kindToken:
			copy(y[k*l.count:(k+1)*l.count], xb[l.index:l.index+l.count])
		}
	}
	return l.y, nil
}

func (op *tokenOp) DiffWRT(n int) []bool { return []bool{op.l.dx != nil, op.l.dp != nil}[:n] }

func (op *tokenOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	d := make(G.Nodes, len(inputs))
	var err error
	if l.dx != nil {
		if d[0], err = G.ApplyOp(&tokenDXOp{kop{l.name + ".dx", l, dims(grad), l.dx.Shape()}, l}, grad); err != nil {
			return nil, fmt.Errorf("%s: input gradient: %w", l.name, err)
		}
	}
	if l.dp != nil && len(inputs) == 2 {
		if d[1], err = G.ApplyOp(&tokenDPOp{kop{l.name + ".dparam", l, dims(grad), l.dp.Shape()}, l}, grad); err != nil {
			return nil, fmt.Errorf("%s: parameter gradient: %w", l.name, err)
		}
	}
	return d, nil
}

func (op *tokenDXOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	plane := l.outPlane()
	a, err := op.args(inputs, l.n*l.d*plane)
	if err != nil {
		return nil, err
	}
	dy, dx := a[0], f32(l.dx)
	switch l.kind {
	case kindClassToken:
		for k := range l.n * l.d {
			copy(dx[k*l.t:(k+1)*l.t], dy[k*plane+1:(k+1)*plane])
		}
	case kindPositionAdd:
		copy(dx, dy)
	case kindToken:
		clear(dx)
		for k := range l.n * l.d {
			copy(dx[k*l.t+l.index:k*l.t+l.index+l.count], dy[k*plane:(k+1)*plane])
		}
	}
	return l.dx, nil
}

// Do sums dy over the samples in float64, in sample order: dcls[d] the
// sum of position 0 of channel d, dpos[t,d] that of position t.
func (op *tokenDPOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	plane := l.outPlane()
	a, err := op.args(inputs, l.n*l.d*plane)
	if err != nil {
		return nil, err
	}
	dy, dp := a[0], f32(l.dp)
	per := 1 // positions summed a channel
	if l.kind == kindPositionAdd {
		per = l.t
	}
	for d := range l.d {
		for t := range per {
			var s float64
			for i := range l.n {
				s += float64(dy[(i*l.d+d)*plane+t])
			}
			dp[t*l.d+d] = float32(s)
		}
	}
	return l.dp, nil
}
