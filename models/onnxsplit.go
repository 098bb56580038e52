package models

import (
	"fmt"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// The import of ShuffleNet-style blocks: Slice and Split of the data along
// the channels (x[:, a:b], x.chunk(k, dim=1), torch.split(x, sizes, dim=1))
// as Net.Channels, and torch's channel_shuffle (Reshape to [N,G,C/G,H,W],
// Transpose perm [0,2,1,3,4], Reshape back; of a vector [N,C], to
// [N,G,C/G] and perm [0,2,1]) as Net.ShuffleChannels.

// channelData returns input 0 of n, the network's data as the Net holds it
// (not a global pool's [C,1,1] view), and its rank with the batch.
func (im *importer) channelData(n *onnx.Node) (ival, int, error) {
	x, err := im.data(n, 0)
	if err == nil && !slices.Equal(im.net.Shape(x.t), x.view) {
		err = fmt.Errorf("reads [N,%s], which the Net holds as [N,%s]; the import takes %s of the data along the channels of images [N,C,H,W] and vectors [N,F]", joinInts(x.view), joinInts(im.net.Shape(x.t)), n.OpType)
	}
	return x, len(x.view) + 1, err
}

// channelAxis refuses an axis other than the channels, 1.
func channelAxis(n *onnx.Node, a int64, x ival) error {
	if ax, err := axis(a, len(x.view)+1); err != nil || ax != 1 {
		what := map[string]string{"Slice": "cropping or slicing a tensor", "Split": "splitting a tensor"}[n.OpType]
		return fmt.Errorf("%s of the network's data (%s) [N,%s] along axis %d is not supported: the import takes %s of the data along the channels (axis 1) only", n.OpType, what, joinInts(x.view), a, n.OpType)
	}
	return nil
}

// channels records channels [from,to) of x as the output out: x itself
// where they are all of its channels.
func (im *importer) channels(out string, x ival, from, to int) {
	if from == 0 && to == x.view[0] {
		im.vals[out] = x
		return
	}
	t := im.net.Channels(x.t, from, to)
	im.vals[out] = ival{kind: ivAct, t: t, view: im.net.Shape(t)}
}

// sliceData imports the Slice of the data along the channels with
// constant bounds and step 1 (x[:, a:b], and each part of torch's
// x.chunk, whose bounds are shape arithmetic the import folds) as
// Net.Channels.
func (im *importer) sliceData(n *onnx.Node) error {
	x, _, err := im.channelData(n)
	if err != nil {
		return err
	}
	starts, ends, axes, steps, hasAxes, err := im.sliceArgs(n)
	if err != nil {
		return err
	}
	if !hasAxes {
		axes = []int64{0}
	}
	if len(starts) != 1 || len(ends) != 1 || len(axes) != 1 || (steps != nil && len(steps) != 1) {
		return fmt.Errorf("slices [N,%s] along axes %v; the import takes Slice of the network's data along one axis, the channels (axis 1), only", joinInts(x.view), axes)
	}
	if err := channelAxis(n, axes[0], x); err != nil {
		return err
	}
	if steps != nil && steps[0] != 1 || batchFactor(starts[0]) > 0 || batchFactor(ends[0]) > 0 {
		return fmt.Errorf("slices the channels of [N,%s] with starts %v, ends %v and steps %v; want constant bounds and step 1", joinInts(x.view), starts, ends, steps)
	}
	from, count := sliceRange(starts[0], ends[0], 1, x.view[0])
	if count == 0 {
		return fmt.Errorf("slices the channels of [N,%s] from %d to %d, which holds none", joinInts(x.view), starts[0], ends[0])
	}
	im.channels(n.Outputs[0], x, from, from+count)
	return im.net.Err()
}

// split imports the Split of the data along the channels (torch.split and
// x.chunk where torch writes a Split): each output read by a node is
// Net.Channels of its part, the parts' sizes the constant input 1 (the
// attribute split before opset 13) or, absent, equal.
func (im *importer) split(n *onnx.Node) error {
	if v, _, err := im.arg(n, 0); err == nil && v.kind == ivConst {
		return fmt.Errorf("splits a constant; the import takes Split of the network's data along the channels only")
	}
	x, _, err := im.channelData(n)
	if err != nil {
		return err
	}
	if err := channelAxis(n, attrInt(n, "axis", 0), x); err != nil {
		return err
	}
	sizes, has, err := im.intsAttrOrInput(n, "split", 1)
	if err != nil {
		return err
	}
	c, k := x.view[0], len(n.Outputs)
	if !has {
		if k < 1 || c%k != 0 {
			return fmt.Errorf("splits the %d channels of [N,%s] into %d equal parts; want a number of parts dividing them, or the sizes", c, joinInts(x.view), k)
		}
		sizes = slices.Repeat([]int64{int64(c / k)}, k)
	}
	sum := int64(0)
	for _, s := range sizes {
		if s < 1 || s > int64(c) {
			sum = -1
			break
		}
		sum += s
	}
	if len(sizes) != k || sum != int64(c) {
		return fmt.Errorf("splits the %d channels of [N,%s] into parts %v for %d outputs; want one positive size per output, summing to %d", c, joinInts(x.view), sizes, k, c)
	}
	from := 0
	for i, out := range n.Outputs {
		to := from + int(sizes[i])
		if out != "" && len(im.readers[out]) > 0 {
			im.channels(out, x, from, to)
		}
		from = to
	}
	return im.net.Err()
}

// shuffleStart reports whether the Reshape n of x to [N,to…] starts
// torch's channel_shuffle: x an image [C,H,W] or a vector [C], to
// [G,C/G,…] (x's other dimensions), n read only by a Transpose that swaps
// axes 1 and 2, read only by a Reshape.
func (im *importer) shuffleStart(n *onnx.Node, x ival, to []int) bool {
	if len(x.view) != 3 && len(x.view) != 1 || len(to) != len(x.view)+1 || !slices.Equal(im.net.Shape(x.t), x.view) || to[0] < 1 ||
		to[0]*to[1] != x.view[0] || !slices.Equal(to[2:], x.view[1:]) {
		return false
	}
	tr := im.soleReader(n, "Transpose")
	return tr != nil && slices.Equal(permOf(tr), shufflePerm(len(to)+1)) && im.soleReader(tr, "Reshape") != nil
}

// shufflePerm is the perm of a channel shuffle's Transpose of a tensor of
// the given rank: axes 1 and 2 swapped, [0,2,1,3,…].
func shufflePerm(rank int) []int64 {
	perm := []int64{0, 2, 1}
	for k := 3; k < rank; k++ {
		perm = append(perm, int64(k))
	}
	return perm
}

// permOf is the perm attribute of the Transpose n, or nil.
func permOf(n *onnx.Node) []int64 {
	if a := attr(n, "perm"); a != nil {
		return a.Ints
	}
	return nil
}

// shuffleTranspose takes the Transpose of a channel shuffle's first
// Reshape (pShuffle) as the pattern's second step.
func (im *importer) shuffleTranspose(n *onnx.Node, v ival) error {
	if want := shufflePerm(len(v.p.x.view) + 2); !slices.Equal(permOf(n), want) {
		return fmt.Errorf("transposes %s with perm %v; want %v (torch's channel_shuffle)", pendNames[v.p.kind], permOf(n), want)
	}
	p := *v.p
	p.kind = pShuffled
	return im.set(n, ival{kind: ivPending, p: &p})
}

// shuffleEnd finishes a channel shuffle (pShuffled) at its Reshape back to
// [N,to…], x's shape, as Net.ShuffleChannels.
func (im *importer) shuffleEnd(n *onnx.Node, p *pending, to []int) error {
	if !slices.Equal(to, p.x.view) {
		return fmt.Errorf("reshapes %s to [N,%s]; the import takes the Reshape back to [N,%s] there", pendNames[p.kind], joinInts(to), joinInts(p.x.view))
	}
	return im.act(n, im.net.ShuffleChannels(p.x.t, p.groups))
}

// firstInput returns the name of n's first input, or "" where it has none.
func firstInput(n *onnx.Node) string {
	if len(n.Inputs) == 0 {
		return ""
	}
	return n.Inputs[0]
}
