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
	name string
	n    int
	to   []int32 // to[k]: the index in a sample's y [F,T] of value k of its x [C,H,W]
	y    tensor.Tensor
	dx   tensor.Tensor // gradient of x; nil where it is not formed
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
	l := &patchLayer{name: name, n: xs[0], to: patchIndex(xs[1], xs[2], xs[3], ph, pw, channelMajor)}
	l.y = g.ws.tensor(name+".y", l.n, ph*pw*xs[1], (xs[2]/ph)*(xs[3]/pw), 1)
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(name+".dx", xs...)
	}
	return g.apply(&patchOp{kop{name + ".forward", l, dims(x), l.y.Shape()}, l, false}, name, x)
}

// patchIndex returns, for each value k of an image [c,h,w] in row-major
// order, its index in the tokens [F,T] of patches ph×pw (see Patches).
func patchIndex(c, h, w, ph, pw int, channelMajor bool) []int32 {
	t, area := (h/ph)*(w/pw), ph*pw
	to := make([]int32, 0, c*h*w)
	for ch := range c {
		for r := range h {
			for col := range w {
				pos := r/ph*(w/pw) + col/pw
				px := r%ph*pw + col%pw
				feat := px*c + ch
				if channelMajor {
					feat = ch*area + px
				}
				to = append(to, int32(feat*t+pos))
			}
		}
	}
	return to
}

func (op *patchOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	size := len(l.to)
	a, err := op.args(inputs, l.n*size)
	if err != nil {
		return nil, err
	}
	src := a[0]
	for i := range l.n {
		in := src[i*size : (i+1)*size]
		if op.back {
			dx := f32(l.dx)[i*size : (i+1)*size]
			for k, j := range l.to {
				dx[k] = in[j]
			}
		} else {
			y := f32(l.y)[i*size : (i+1)*size]
			for k, j := range l.to {
				y[j] = in[k]
			}
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
