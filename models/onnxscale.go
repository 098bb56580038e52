package models

import (
	"fmt"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// The importer's handling of the per-sample vector [N,C] that the ONNX
// file holds as [N,C,1,1] (GlobalAveragePool, or ReduceMean over the maps
// with keepdims): a 1×1 Conv on it is a dense layer, and the Mul of an
// image and it, a squeeze-and-excitation block's excitation, is the Net's
// ChannelScale. A gate computed as a vector [N,C] (a Linear's output)
// reaches that view by a Reshape (y.view(N, C, 1, 1), onnxshapes.go), by
// Unsqueeze (y[:, :, None, None], y.unsqueeze(-1).unsqueeze(-1)), and may
// be expanded to the image's shape before the Mul (x * y.expand_as(x)).

// onPoint reports whether v is the network's data of view [C,1,1] that the
// Net holds as the vector [C]: a global pool's output.
func (im *importer) onPoint(v ival) bool {
	return v.kind == ivAct && len(v.view) == 3 && v.view[1] == 1 && v.view[2] == 1 && len(im.net.Shape(v.t)) == 1
}

// convPoint imports the Conv n of x, a global pool's output [N,C,1,1]:
// a 1×1 kernel without padding (any stride: the output is 1×1 too) is the
// dense layer of its weights [out,C,1,1] transposed to [C,out], whose
// output keeps the view [out,1,1].
func (im *importer) convPoint(n *onnx.Node, x ival) error {
	c := x.view[0]
	w, err := im.konst(n, 1, "weights", false)
	if err != nil {
		return err
	}
	if groups := attrInt(n, "group", 1); groups != 1 {
		return fmt.Errorf("group %d on [N,%d,1,1], a global pool's output; the import takes a convolution there as a dense layer, of group 1 only", groups, c)
	}
	if !w.float || len(w.dims) != 4 || w.dims[1] != c || w.dims[2] != w.dims[3] {
		return fmt.Errorf("weights %q of shape %v, want [out,%d,1,1] (input [N,%d,1,1], a global pool's output)", w.name, w.dims, c, c)
	}
	if d, err := attrPair(n, "dilations", 1); err != nil || d != 1 {
		return fmt.Errorf("dilations %v are not supported (want 1)", attr(n, "dilations").Ints)
	}
	switch auto := attrString(n, "auto_pad", "NOTSET"); auto {
	case "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER": // SAME_*: no padding for a 1×1 kernel on a 1×1 map (other kernels are refused below)
	default:
		return fmt.Errorf("auto_pad %s is not supported", auto)
	}
	if _, err := attrPair(n, "strides", 1); err != nil {
		return err
	}
	p, err := attrPair(n, "pads", 0)
	if err != nil {
		return err
	}
	if k := w.dims[2]; k != 1 || p != 0 {
		return fmt.Errorf("a %d×%d kernel with padding %d on [N,%d,1,1], a global pool's output, reads only its centre tap; the import takes a 1×1 kernel without padding there (a dense layer): use nn.Conv2d(%d, %d, 1)", k, k, p, c, c, w.dims[0])
	}
	out := w.dims[0]
	bias, err := im.floats(n, 2, "bias", out, true)
	if err != nil {
		return err
	}
	wt := transpose2(w.reshaped([]int{out, c}))
	wt.name = w.name
	if err := im.dense(n, x, wt, w.name, bias); err != nil {
		return err
	}
	v := im.vals[n.Outputs[0]]
	v.view = []int{out, 1, 1}
	return im.set(n, v)
}

// scaleMul imports the Mul n of a and b, both the network's data, where
// one is an image [N,C,H,W] and the other a per-sample gate [N,C,1,1] (a
// squeeze-and-excitation block's x * gate, in either order), as the Net's
// ChannelScale. It reports false, having added nothing, for other
// operands.
func (im *importer) scaleMul(n *onnx.Node, a, b ival) (bool, error) {
	if a.kind == ivConst || b.kind == ivConst {
		return false, nil
	}
	var err error
	if a, err = im.settle(n.Inputs[0], a); err != nil {
		return true, err
	}
	if b, err = im.settle(n.Inputs[1], b); err != nil {
		return true, err
	}
	if a.kind != ivAct || b.kind != ivAct {
		return false, nil
	}
	image := func(v ival) bool { return len(v.view) == 3 && slices.Equal(im.net.Shape(v.t), v.view) }
	gate := func(v ival) bool { return len(v.view) == 3 && v.view[1] == 1 && v.view[2] == 1 }
	x, g := a, b
	if !image(x) || !gate(g) || (x.view[0] != g.view[0] && image(b) && gate(a)) {
		x, g = b, a
	}
	switch {
	case !image(x) || !gate(g):
		return false, nil
	case x.view[0] != g.view[0]:
		return true, fmt.Errorf("multiplies an image [N,%s] by a gate [N,%s]; want one gate value per channel, [N,%d,1,1]", joinInts(x.view), joinInts(g.view), x.view[0])
	}
	return true, im.set(n, ival{kind: ivAct, t: im.net.ChannelScale(x.t, g.t), view: x.view})
}

// unsqueezeData imports the Unsqueeze n of the network's data: only new
// trailing axes of a per-sample vector [N,C], up to [N,C,1,1] (in one node
// or two), which the Net keeps as the vector viewed as [C,1] or [C,1,1].
func (im *importer) unsqueezeData(n *onnx.Node) error {
	v, err := im.data(n, 0)
	if err != nil {
		return err
	}
	refuse := fmt.Errorf("Unsqueeze of the network's data [N,%s] is not supported: the import takes it only at the end of a per-sample vector [N,C], up to [N,C,1,1] (a squeeze-and-excitation gate: y[:, :, None, None])", joinInts(v.view))
	if len(im.net.Shape(v.t)) != 1 || len(v.view) > 2 || len(v.view) == 2 && v.view[1] != 1 {
		return refuse
	}
	axes, _, err := im.intsAttrOrInput(n, "axes", 1)
	if err != nil {
		return err
	}
	rank := 1 + len(v.view) + len(axes) // with the batch
	if rank > 4 {
		return refuse
	}
	seen := make([]bool, rank)
	for _, a := range axes {
		k, err := axis(a, rank)
		if err != nil {
			return err
		}
		if k <= len(v.view) || seen[k] {
			return refuse // a new axis before the data's own, or one twice
		}
		seen[k] = true
	}
	view := append(slices.Clone(v.view), make([]int, len(axes))...)
	for i := len(v.view); i < len(view); i++ {
		view[i] = 1
	}
	return im.set(n, ival{kind: ivAct, t: v.t, view: view})
}

// expand imports the Expand n of a squeeze-and-excitation gate [N,C,1,1]
// to the shape of the image [N,C,H,W] that the Mul reading it, its only
// reader, multiplies it by (x * y.expand_as(x)): the Mul broadcasts the
// gate alike, so the gate passes on unexpanded and the Mul makes the
// ChannelScale.
func (im *importer) expand(n *onnx.Node) error {
	v, _, err := im.arg(n, 0)
	if err != nil {
		return err
	}
	if v.kind == ivConst {
		return fmt.Errorf("Expand of constants is not supported")
	}
	if v.kind == ivPending && v.p.kind == pL2Clipped {
		return im.set(n, v) // F.normalize's norm to x's shape: Div broadcasts it anyway
	}
	g, err := im.data(n, 0)
	if err != nil {
		return err
	}
	if !im.onPoint(g) {
		return fmt.Errorf("Expand of the network's data [N,%s] is not supported: the import takes it only of a squeeze-and-excitation gate [N,C,1,1] to the image it multiplies (y.expand_as(x))", joinInts(g.view))
	}
	to, err := im.ints(n, 1, "shape", false)
	if err != nil {
		return err
	}
	mul := im.soleReader(n, "Mul")
	if mul == nil || len(mul.Inputs) != 2 {
		return fmt.Errorf("expands a gate [N,%s], read by other than one Mul; the import takes Expand only of a gate that a Mul then applies to an image (x * y.expand_as(x))", joinInts(g.view))
	}
	other := mul.Inputs[0]
	if other == n.Outputs[0] {
		other = mul.Inputs[1]
	}
	x, ok := im.vals[other]
	want := []int{g.view[0], 0, 0}
	if ok && x.kind == ivAct && len(x.view) == 3 {
		want[1], want[2] = x.view[1], x.view[2]
	}
	batch := len(to) == 4 && (to[0] == batchDim || to[0] == 1 || im.batch > 0 && to[0] == im.batch)
	if !ok || x.kind != ivAct || !batch || !slices.Equal([]int{int(to[1]), int(to[2]), int(to[3])}, want) || !slices.Equal(x.view, want) {
		return fmt.Errorf("expands a gate [N,%s] to %s; the import takes Expand of a gate only to the shape of the image [N,C,H,W] that its Mul multiplies, computed before it", joinInts(g.view), shapeText(to))
	}
	return im.set(n, g)
}
