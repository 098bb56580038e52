package models

import (
	"github.com/gtstorm/gtstorm/internal/onnx"
)

// The layers of ShuffleNet-style blocks: a range of channels (x.chunk,
// torch.split and x[:, a:b] along the channels) and the channel shuffle.
// Both are parameter-free copies, computed alike on every kernel set and
// architecture.

// Channels adds x's channels from to to−1: a tensor [C,H,W] (or a vector
// [F], its features) gives [to−from,H,W], as torch's x[:, from:to], one
// part of x.chunk(k, dim=1) or torch.split(x, sizes, dim=1), computes it.
// Its gradient is the upstream gradient in those channels and zeros in
// the others (summed with the gradients of x's other readers).
func (n *Net) Channels(x Tensor, from, to int) Tensor {
	name := n.autoName("channels")
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	s := n.shapes[x.id]
	if from < 0 || to <= from || to > s[0] {
		return n.fail(name, "channels [%d,%d) of a tensor of shape %v, want 0 ≤ from < to ≤ %d", from, to, s, s[0])
	}
	out := append([]int{to - from}, s[1:]...)
	return n.record(netLayer{kind: kindChannels, name: name, span: [2]int{from, to}}, out, x)
}

// ShuffleChannels adds ShuffleNet's channel shuffle of x [C,H,W] (or a
// vector [F]) in groups groups, which must divide C: torch's
// x.view(N, groups, C/groups, H, W).transpose(1, 2).reshape(N, C, H, W),
// whose channel j·groups+i is channel i·(C/groups)+j of x. Its gradient
// is the inverse permutation of the upstream gradient.
func (n *Net) ShuffleChannels(x Tensor, groups int) Tensor {
	name := n.autoName("shuffle")
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	s := n.shapes[x.id]
	if groups < 1 || s[0]%groups != 0 {
		return n.fail(name, "shuffles the %d channels of a tensor of shape %v in %d groups, want a number of groups dividing them", s[0], s, groups)
	}
	return n.record(netLayer{kind: kindShuffle, name: name, groups: groups}, s, x)
}

// addChannels appends the export of a Channels layer: Slice along axis 1,
// its starts, ends and axes initialisers.
func (g *onnxGraph) addChannels(l netLayer, x, out string, in []int) {
	starts, ends, axes := l.name+".starts", l.name+".ends", l.name+".axes"
	g.inits = append(g.inits,
		onnx.Int64Tensor(starts, []int64{int64(l.span[0])}, 1),
		onnx.Int64Tensor(ends, []int64{int64(l.span[1])}, 1),
		onnx.Int64Tensor(axes, []int64{1}, 1))
	g.node(l.name, "Slice", []string{x, starts, ends, axes}, out)
	g.describe("%s: Slice of channels %d to %d (axis 1) of [N,%s]", l.name, l.span[0], l.span[1]-1, joinInts(in))
}

// addShuffle appends the export of a ShuffleChannels layer as torch writes
// channel_shuffle at opset 13: Reshape [N,C,…] to [N,G,C/G,…], Transpose
// perm [0,2,1,…], Reshape back to [N,C,…].
func (g *onnxGraph) addShuffle(l netLayer, x, out string, in []int) {
	grouped, back := l.name+".grouped", l.name+".shape"
	to := []int64{0, int64(l.groups), int64(in[0] / l.groups)}
	from := []int64{0, int64(in[0])}
	perm := []int64{0, 2, 1}
	for k, d := range in[1:] {
		to, from, perm = append(to, int64(d)), append(from, int64(d)), append(perm, int64(k+3))
	}
	g.inits = append(g.inits, onnx.Int64Tensor(grouped, to, len(to)), onnx.Int64Tensor(back, from, len(from)))
	g.node(l.name+".group", "Reshape", []string{x, grouped}, l.name+".group")
	g.node(l.name+".transpose", "Transpose", []string{l.name + ".group"}, l.name+".transpose", onnx.IntsAttr("perm", perm...))
	g.node(l.name, "Reshape", []string{l.name + ".transpose", back}, out)
	g.describe("%s: channel shuffle of [N,%s] in %d groups (Reshape, Transpose, Reshape)", l.name, joinInts(in), l.groups)
}
