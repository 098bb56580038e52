package models

import (
	"fmt"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// poolPads reads the padding of the pool n of a k×k window moved by
// stride over maps [C,H,W] (in): pads, or auto_pad SAME_UPPER and
// SAME_LOWER resolved as ONNX defines them (nodePads), and ceil_mode. The Net's pools pad every side alike; pads whose bottom and
// right exceed an equal top and left (TensorFlow's "SAME" pools, written
// by tf2onnx as pads [0,0,1,1] or SAME_UPPER) are ceil mode's padding
// where they give its output size: a last window reaching past the map is
// kept, and its out-of-map part never selected (MaxPool) or not counted
// (AveragePool with count_include_pad 0, ONNX's default). It returns the
// padding of every side and whether the pool is in ceil mode, refusing
// other unequal pads in one line.
func poolPads(n *onnx.Node, in []int, k, stride int) (pad int, ceil bool, err error) {
	if d, err := attrPair(n, "dilations", 1); err != nil || d != 1 {
		return 0, false, fmt.Errorf("dilations %v are not supported (want 1)", attr(n, "dilations").Ints)
	}
	ceil = attrInt(n, "ceil_mode", 0) != 0
	sides, err := nodePads(n, in, [2]int{k, k}, [2]int{stride, stride})
	if err != nil {
		return 0, false, err
	}
	if p, even := sides.even(); even {
		return p, ceil, nil
	}
	unequal := fmt.Errorf("pads %v (top, left, bottom, right): the Net's pools pad every side alike, or pad the bottom and right more only as ceil mode does", sides)
	if ceil || sides[0] != sides[1] || sides[2] < sides[0] || sides[3] < sides[1] || len(in) != 3 {
		return 0, false, unequal
	}
	if n.OpType == "AveragePool" && attrInt(n, "count_include_pad", 0) != 0 {
		return 0, false, fmt.Errorf("pads %v with count_include_pad 1: the zeros past the map would count in the divisor, which ceil mode's windows do not (the Net pads every side alike)", sides)
	}
	pad = sides[0]
	for axis, size := range in[1:] {
		if size+pad+sides[2+axis] < k || (size+pad+sides[2+axis]-k)/stride+1 != ceilWindow(size, k, stride, pad) {
			return 0, false, unequal
		}
	}
	return pad, true, nil
}
