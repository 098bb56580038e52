package models

import (
	"fmt"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// globalMaxPool imports GlobalMaxPool of an image [N,C,H,W] (torch's
// nn.AdaptiveMaxPool2d(1)) as Net.GlobalMaxPool, [N,C,1,1] in the file.
func (im *importer) globalMaxPool(n *onnx.Node) error {
	x, err := im.image(n, 0)
	if err != nil {
		return err
	}
	return im.set(n, ival{kind: ivAct, t: im.net.GlobalMaxPool(x.t), view: []int{x.view[0], 1, 1}})
}

// reduceMax imports ReduceMax of an image over axes (2, 3) (x.amax((2,
// 3))) as Net.GlobalMaxPool: [N,C,1,1] in the file with keepdims 1 (the
// default), [N,C] without. Other axes are refused.
func (im *importer) reduceMax(n *onnx.Node) error {
	x, err := im.image(n, 0)
	if err != nil {
		return err
	}
	axes, ok, err := im.intsAttrOrInput(n, "axes", 1)
	if err != nil {
		return err
	}
	if !ok || !overMaps(axes) {
		return fmt.Errorf("axes %v: the import takes ReduceMax of images over the maps, axes (2, 3) (x.amax((2, 3)))", axes)
	}
	view := []int{x.view[0]}
	if attrInt(n, "keepdims", 1) != 0 {
		view = append(view, 1, 1)
	}
	return im.set(n, ival{kind: ivAct, t: im.net.GlobalMaxPool(x.t), view: view})
}

// overMaps reports whether axes of an image [N,C,H,W] are its maps', 2
// and 3 (or −2 and −1) in any order.
func overMaps(axes []int64) bool {
	norm := make([]int64, len(axes))
	for i, a := range axes {
		norm[i] = a
		if a < 0 {
			norm[i] = a + 4
		}
	}
	slices.Sort(norm)
	return slices.Equal(norm, []int64{2, 3})
}

// wholeMapMaxPool imports n, a MaxPool, as Net.GlobalMaxPool where its
// window is the whole map of its input, an image [N,C,H,W] (kernel_shape
// [H,W], no padding, no dilation: torch's F.adaptive_max_pool2d(x, 1) and
// F.max_pool2d(x, H) of a static H×W map), larger than the Net's pools
// take, and reports whether it did: the same values and gradient as the
// pool would give. Smaller windows stay pools, whose [N,C,1,1] output is
// an image that convolutions may read (SqueezeNet's last pool on a small
// input) and that a Concat with a global pool's output flattens.
func (im *importer) wholeMapMaxPool(n *onnx.Node) (bool, error) {
	v, ok, err := im.arg(n, 0)
	if err != nil || !ok || v.kind != ivAct || len(v.view) != 3 || !slices.Equal(im.net.Shape(v.t), v.view) {
		return false, nil
	}
	k := attr(n, "kernel_shape")
	if k == nil || !slices.Equal(k.Ints, []int64{int64(v.view[1]), int64(v.view[2])}) || max(v.view[1], v.view[2]) <= maxPoolWindow {
		return false, nil
	}
	for _, a := range []string{"pads", "dilations"} {
		if p := attr(n, a); p != nil && slices.ContainsFunc(p.Ints, func(x int64) bool { return x != 0 && (a == "pads" || x != 1) }) {
			return false, nil
		}
	}
	if p := attrString(n, "auto_pad", "NOTSET"); p != "NOTSET" && p != "VALID" {
		return false, nil
	}
	if len(n.Outputs) > 1 && n.Outputs[1] != "" {
		return false, nil // the indices output: the pool's refusal names it
	}
	return true, im.set(n, ival{kind: ivAct, t: im.net.GlobalMaxPool(v.t), view: []int{v.view[0], 1, 1}})
}
