package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// channelsLayer picks channels of its input: channel k of y is channel
// src[k] of x, for tensors [n,C,rest…] read as C planes of plane values
// per sample. A range of channels (Channels) and a channel shuffle
// (ShuffleChannels) are such picks, each source read at most once.
// Forward and backward are copies, the same bits on every kernel set and
// architecture.
type channelsLayer struct {
	name  string
	n     int           // batch
	c     int           // channels of x
	plane int           // values per channel
	src   []int         // the channel of x each channel of y copies
	y     tensor.Tensor // output
	dx    tensor.Tensor // gradient of x; nil where it is not formed
}

// channelsOp is the forward pass: x → y.
type channelsOp struct {
	kop
	l *channelsLayer
}

// channelsGradOp is dy → dx: each channel of dy written back where it
// came from, zeros in the channels y does not hold.
type channelsGradOp struct {
	kop
	l *channelsLayer
}

// Channels adds y = x[:, from:to], channels from to to−1 of x, a tensor
// [n,C,rest…] (torch's x[:, from:to], a part of x.chunk or torch.split
// along dim 1), named name, unique within the graph. Its gradient is the
// upstream gradient in those channels and zeros in the others, formed
// only where x is computed by another op; Gorgonia sums it with the
// gradients of x's other readers.
func (g *Graph) Channels(name string, x *G.Node, from, to int) *G.Node {
	if !g.ok(name, x) {
		return nil
	}
	s := x.Shape()
	if len(s) < 2 || from < 0 || to <= from || to > s[1] {
		g.err = fmt.Errorf("%s: channels [%d,%d) of a tensor of shape %v, want 0 ≤ from < to ≤ its channels", name, from, to, s)
		return nil
	}
	src := make([]int, to-from)
	for k := range src {
		src[k] = from + k
	}
	return g.channels(name, x, src)
}

// ShuffleChannels adds torch's channel shuffle of x, a tensor [n,C,rest…]
// whose C the groups divide (ShuffleNet's x.view(n, groups, C/groups, …)
// .transpose(1, 2).reshape(n, C, …)): channel j·groups+i of y is channel
// i·(C/groups)+j of x. Its gradient, the inverse permutation of the
// upstream gradient, is formed only where x is computed by another op.
func (g *Graph) ShuffleChannels(name string, x *G.Node, groups int) *G.Node {
	if !g.ok(name, x) {
		return nil
	}
	s := x.Shape()
	if len(s) < 2 || groups < 1 || s[1]%groups != 0 {
		g.err = fmt.Errorf("%s: %d groups of the channels of a tensor of shape %v, want a number of groups dividing them", name, groups, s)
		return nil
	}
	per := s[1] / groups
	src := make([]int, s[1])
	for i := range groups {
		for j := range per {
			src[j*groups+i] = i*per + j
		}
	}
	return g.channels(name, x, src)
}

// channels adds the layer picking the channels src of x.
func (g *Graph) channels(name string, x *G.Node, src []int) *G.Node {
	if !g.claim(name) {
		return nil
	}
	s := x.Shape()
	l := &channelsLayer{name: name, n: s[0], c: s[1], plane: s.TotalSize() / s[0] / s[1], src: src}
	out := append([]int{s[0], len(src)}, s[2:]...)
	l.y = g.ws.tensor(name+".y", out...)
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(name+".dx", s...)
	}
	return g.apply(&channelsOp{kop{name + ".forward", l, dims(x), l.y.Shape()}, l}, name, x)
}

func (op *channelsOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.c*l.plane)
	if err != nil {
		return nil, err
	}
	x, y, p, k := a[0], f32(l.y), l.plane, len(l.src)
	for i := range l.n {
		for o, c := range l.src {
			copy(y[(i*k+o)*p:(i*k+o+1)*p], x[(i*l.c+c)*p:(i*l.c+c+1)*p])
		}
	}
	return l.y, nil
}

func (op *channelsOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil} }

func (op *channelsOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%s: %d inputs, want 1", l.name, len(inputs))
	}
	if l.dx == nil {
		return G.Nodes{nil}, nil
	}
	gop := &channelsGradOp{kop{l.name + ".dx", l, dims(grad), l.dx.Shape()}, l}
	dx, err := G.ApplyOp(gop, grad)
	if err != nil {
		return nil, fmt.Errorf("%s: gradient: %w", l.name, err)
	}
	return G.Nodes{dx}, nil
}

func (op *channelsGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	k := len(l.src)
	a, err := op.args(inputs, l.n*k*l.plane)
	if err != nil {
		return nil, err
	}
	dy, dx, p := a[0], f32(l.dx), l.plane
	if k != l.c {
		clear(dx)
	}
	for i := range l.n {
		for o, c := range l.src {
			copy(dx[(i*l.c+c)*p:(i*l.c+c+1)*p], dy[(i*k+o)*p:(i*k+o+1)*p])
		}
	}
	return l.dx, nil
}
