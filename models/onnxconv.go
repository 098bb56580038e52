package models

import (
	"fmt"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// padSides are the zero padding of the top, left, bottom and right of
// the maps, ONNX's order.
type padSides [4]int

// even returns the padding of every side where all four agree.
func (p padSides) even() (int, bool) {
	return p[0], p[0] == p[1] && p[0] == p[2] && p[0] == p[3]
}

// convSettings reads a Conv node's kernel_shape, strides, pads, dilations
// and auto_pad for weights [out,C/G,kh,kw] and an input [C,H,W] that a
// Pad before it pads with the zeros zero. Pads may differ between opposite
// sides (Conv.ExtraBottom, ExtraRight); auto_pad SAME_UPPER and SAME_LOWER
// are resolved from the input's size as ONNX defines them: a total of
// max((⌈H/s⌉−1)·s + span − H, 0) rows of zeros (span the dilated
// kernel's), half of it at the top and the odd one at the bottom
// (SAME_UPPER) or the top (SAME_LOWER), and likewise the columns. It
// refuses a kernel_shape that is not the weights', negative pads, auto_pad
// beside pads, and other auto_pad values than NOTSET, VALID and SAME_*.
func convSettings(n *onnx.Node, kh, kw int, in []int, zero padSides) (convAxes, error) {
	a := convAxes{kh: kh, kw: kw, sh: 1, sw: 1, dh: 1, dw: 1}
	if k := attr(n, "kernel_shape"); k != nil && len(k.Ints) > 0 && (len(k.Ints) != 2 || k.Ints[0] != int64(kh) || k.Ints[1] != int64(kw)) {
		return a, fmt.Errorf("kernel_shape %v, but the weights' kernel is %d×%d", k.Ints, kh, kw)
	}
	pair := func(name string, lo int, h, w *int) error {
		v := attr(n, name)
		if v == nil || len(v.Ints) == 0 {
			return nil
		}
		if len(v.Ints) != 2 {
			return fmt.Errorf("%s %v: want two values, rows' and columns'", name, v.Ints)
		}
		for _, x := range v.Ints {
			if x < int64(lo) || x > maxLayerWidth {
				return fmt.Errorf("%s %v out of range (want %d to %d)", name, v.Ints, lo, maxLayerWidth)
			}
		}
		*h, *w = int(v.Ints[0]), int(v.Ints[1])
		return nil
	}
	if err := pair("strides", 1, &a.sh, &a.sw); err != nil {
		return a, err
	}
	if err := pair("dilations", 1, &a.dh, &a.dw); err != nil {
		return a, err
	}
	padded := in // the maps the kernel moves over: the input and the Pad's zeros
	if len(in) == 3 {
		padded = []int{in[0], in[1] + zero[0] + zero[2], in[2] + zero[1] + zero[3]}
	}
	pads, err := nodePads(n, padded, [2]int{a.span(0), a.span(1)}, [2]int{a.sh, a.sw})
	if err != nil {
		return a, err
	}
	a.ph, a.pw, a.pb, a.pr = pads[0]+zero[0], pads[1]+zero[1], pads[2]+zero[2], pads[3]+zero[3]
	return a, nil
}

// nodePads reads the padding of n, a Conv or a pool whose window of span
// rows and columns moves by stride over the maps of in [C,H,W]: its pads
// [top, left, bottom, right], or auto_pad SAME_UPPER and SAME_LOWER
// resolved as ONNX defines them (see samePads). It refuses negative pads,
// auto_pad beside pads, and other auto_pad values than NOTSET, VALID and
// SAME_*.
func nodePads(n *onnx.Node, in []int, span, stride [2]int) (padSides, error) {
	var pads padSides
	auto := attrString(n, "auto_pad", "NOTSET")
	switch auto {
	case "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER":
	default:
		return pads, fmt.Errorf("auto_pad %s is not supported (want NOTSET, VALID, SAME_UPPER or SAME_LOWER)", auto)
	}
	same := auto == "SAME_UPPER" || auto == "SAME_LOWER"
	if p := attr(n, "pads"); p != nil && len(p.Ints) > 0 {
		v := p.Ints
		if len(v) != 4 {
			return pads, fmt.Errorf("pads %v: want four values, [top, left, bottom, right]", v)
		}
		for i, x := range v {
			if x < 0 || x > maxLayerWidth {
				return pads, fmt.Errorf("pads %v out of range (want 0 to %d; a negative pad crops)", v, maxLayerWidth)
			}
			pads[i] = int(x)
		}
		if same && pads != (padSides{}) {
			return pads, fmt.Errorf("auto_pad %s with pads %v: set one", auto, v)
		}
	}
	if same {
		if len(in) != 3 {
			return pads, fmt.Errorf("auto_pad %s of an input of shape %v, want [C,H,W]", auto, in)
		}
		pads[0], pads[2] = samePads(in[1], stride[0], span[0], auto == "SAME_LOWER")
		pads[1], pads[3] = samePads(in[2], stride[1], span[1], auto == "SAME_LOWER")
	}
	return pads, nil
}

// samePads returns the padding before and after a side of size that
// auto_pad SAME_UPPER (lower false) or SAME_LOWER gives a window of span
// moved by stride: ⌈size/stride⌉ outputs.
func samePads(size, stride, span int, lower bool) (before, after int) {
	total := max(((size+stride-1)/stride-1)*stride+span-size, 0)
	if lower {
		return total - total/2, total / 2
	}
	return total / 2, total - total/2
}

// conv returns the Conv of out filters with a's settings.
func (a convAxes) convOf(out int, bias bool, groups int) Conv {
	return a.conv(Conv{Out: out, Bias: bias, Groups: groups})
}
