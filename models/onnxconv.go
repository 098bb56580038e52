package models

import (
	"fmt"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// convSettings reads a Conv node's kernel_shape, strides, pads, dilations
// and auto_pad for weights [out,C/G,kh,kw] and the zero padding pad of a
// Pad before it. It refuses a kernel_shape that is not the weights', pads
// that differ between the top and bottom or the left and right (torch's
// nn.Conv2d pads both sides alike), and automatic padding other than
// VALID.
func convSettings(n *onnx.Node, kh, kw, pad int) (convAxes, error) {
	a := convAxes{kh: kh, kw: kw, sh: 1, sw: 1, dh: 1, dw: 1}
	if p := attrString(n, "auto_pad", "NOTSET"); p != "NOTSET" && p != "VALID" {
		return a, fmt.Errorf("auto_pad %s is not supported (write explicit pads)", p)
	}
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
	if p := attr(n, "pads"); p != nil && len(p.Ints) > 0 {
		v := p.Ints
		if len(v) != 4 {
			return a, fmt.Errorf("pads %v: want four values, [top, left, bottom, right]", v)
		}
		for _, x := range v {
			if x < 0 || x > maxLayerWidth {
				return a, fmt.Errorf("pads %v out of range", v)
			}
		}
		if v[0] != v[2] || v[1] != v[3] {
			return a, fmt.Errorf("pads %v differ between the top and bottom or the left and right; the Net's convolutions pad both sides alike (asymmetric settings are not supported)", v)
		}
		a.ph, a.pw = int(v[0]), int(v[1])
	}
	a.ph, a.pw = a.ph+pad, a.pw+pad
	return a, nil
}

// conv returns the Conv of out filters with a's settings.
func (a convAxes) convOf(out int, bias bool, groups int) Conv {
	return a.conv(Conv{Out: out, Bias: bias, Groups: groups})
}
