package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// patchLayer is a Patches layer of input x [n,C,H,W] cut into patches
// ph×pw: a permutation of the values, copied forward and back, the same
// bits on every kernel set and architecture.
type patchLayer struct {
	name         string
	n, c, h, w   int
	ph, pw       int
	channelMajor bool
	y            tensor.Tensor
	dx           tensor.Tensor // gradient of x; nil where it is not formed
}

// patchOp is the forward pass, x → y, and (back) the backward pass, dy →
// dx.
type patchOp struct {
	kop
	l    *patchLayer
	back bool
}

// Patches adds the patchify of a vision transformer's patch embedding,
// einops' Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)') of x
// [n,C,H,W] into patches ph×pw (H and W multiples of them), as the tokens
// [n,F,T,1] held channel-major: T = (H/ph)·(W/pw) positions, row-major over
// the patches, of F = ph·pw·C features. Feature (i1·pw+i2)·C+c of a
// patch holds its pixel (i1,i2) of channel c, or, where channelMajor
// (einops' (c p1 p2)), feature c·ph·pw+i1·pw+i2. The layer takes name,
// unique within the graph, for its buffers and ops. The gradient of x, dy
// copied back, is formed in a training graph where x is computed by
// another op.
func (g *Graph) Patches(name string, x *G.Node, ph, pw int, channelMajor bool) *G.Node {
	if !g.ok(name, x) {
		return nil
	}
	xs := x.Shape()
	if len(xs) != 4 {
		g.err = fmt.Errorf("%s: input %v, want [n,C,H,W]", name, xs)
		return nil
	}
	if ph < 1 || pw < 1 || xs[2]%ph != 0 || xs[3]%pw != 0 {
		g.err = fmt.Errorf("%s: patches %d×%d do not tile the maps %d×%d of an input %v", name, ph, pw, xs[2], xs[3], xs)
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	l := &patchLayer{name: name, n: xs[0], c: xs[1], h: xs[2], w: xs[3], ph: ph, pw: pw, channelMajor: channelMajor}
	l.y = g.ws.tensor(name+".y", l.n, ph*pw*l.c, (l.h/ph)*(l.w/pw), 1)
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(name+".dx", xs...)
	}
	return g.apply(&patchOp{kop{name + ".forward", l, dims(x), l.y.Shape()}, l, false}, name, x)
}

// each calls f(k, j) for every value of a sample: k its index in x
// [C,H,W], j its index in y [F,T].
func (l *patchLayer) each(f func(k, j int)) {
	t, area := (l.h/l.ph)*(l.w/l.pw), l.ph*l.pw
	k := 0
	for c := range l.c {
		for r := range l.h {
			hh, i1 := r/l.ph, r%l.ph
			for col := range l.w {
				pos := hh*(l.w/l.pw) + col/l.pw
				px := i1*l.pw + col%l.pw
				feat := px*l.c + c
				if l.channelMajor {
					feat = c*area + px
				}
				f(k, feat*t+pos)
				k++
			}
		}
	}
}

func (op *patchOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	size := l.c * l.h * l.w
	a, err := op.args(inputs, l.n*size)
	if err != nil {
		return nil, err
	}
	src := a[0]
	for i := range l.n {
		in := src[i*size : (i+1)*size]
		if op.back {
			dx := f32(l.dx)[i*size : (i+1)*size]
			l.each(func(k, j int) { dx[k] = in[j] })
		} else {
			y := f32(l.y)[i*size : (i+1)*size]
			l.each(func(k, j int) { y[j] = in[k] })
		}
	}
	if op.back {
		return l.dx, nil
	}
	return l.y, nil
}

func (op *patchOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil} }

func (op *patchOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%s: %d inputs, want 1", l.name, len(inputs))
	}
	if l.dx == nil || op.back {
		return G.Nodes{nil}, nil
	}
	d, err := G.ApplyOp(&patchOp{kop{l.name + ".dx", l, dims(grad), l.dx.Shape()}, l, true}, grad)
	if err != nil {
		return nil, fmt.Errorf("%s: input gradient: %w", l.name, err)
	}
	return G.Nodes{d}, nil
}
