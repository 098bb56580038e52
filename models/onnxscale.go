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
// ChannelScale.

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
	if err := noDilationNoAutoPad(n); err != nil {
		return err
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
