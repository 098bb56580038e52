package models

import (
	"fmt"

	"github.com/gtstorm/gtstorm/models/internal/graphops"
)

// convAxes are a convolution's kernel size, stride, padding and dilation
// per axis, the fields of Conv resolved: rows (h) and columns (w), ph and
// pw padding the top and the left, pb and pr the bottom and the right.
type convAxes struct{ kh, kw, sh, sw, ph, pw, dh, dw, pb, pr int }

// axes resolves c's per-axis fields, refusing negative or oversized ones,
// Pad set beside PadH or PadW, and ExtraBottom or ExtraRight that leave a
// side a negative padding. The settings Conv has always had are checked
// by Conv2D.
func (c Conv) axes() (convAxes, error) {
	for _, f := range []struct {
		name string
		v    int
	}{{"KernelW", c.KernelW}, {"StrideW", c.StrideW}, {"PadH", c.PadH}, {"PadW", c.PadW}, {"Dilation", c.Dilation}, {"DilationW", c.DilationW}} {
		if f.v < 0 || f.v > maxLayerWidth {
			return convAxes{}, fmt.Errorf("%s %d: want 0 to %d", f.name, f.v, maxLayerWidth)
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"ExtraBottom", c.ExtraBottom}, {"ExtraRight", c.ExtraRight}} {
		if f.v < -maxLayerWidth || f.v > maxLayerWidth {
			return convAxes{}, fmt.Errorf("%s %d: want −%d to %d", f.name, f.v, maxLayerWidth, maxLayerWidth)
		}
	}
	if c.Pad != 0 && (c.PadH != 0 || c.PadW != 0) {
		return convAxes{}, fmt.Errorf("padding %d and per-axis padding (%d,%d): set one", c.Pad, c.PadH, c.PadW)
	}
	a := convAxes{kh: c.Kernel, kw: c.Kernel, sh: max(c.Stride, 1), ph: c.Pad, pw: c.Pad, dh: max(c.Dilation, 1)}
	if c.Stride < 0 {
		a.sh = c.Stride // refused by Conv2D
	}
	a.sw, a.dw = a.sh, a.dh
	if c.KernelW > 0 {
		a.kw = c.KernelW
	}
	if c.StrideW > 0 {
		a.sw = c.StrideW
	}
	if c.PadH != 0 || c.PadW != 0 {
		a.ph, a.pw = c.PadH, c.PadW
	}
	if c.DilationW > 0 {
		a.dw = c.DilationW
	}
	a.pb, a.pr = a.ph+c.ExtraBottom, a.pw+c.ExtraRight
	if (c.ExtraBottom != 0 || c.ExtraRight != 0) && (a.pb < 0 || a.pr < 0) { // a negative Pad alone: Conv2D refuses it
		return convAxes{}, fmt.Errorf("ExtraBottom %d and ExtraRight %d with padding (%d,%d): the bottom's and the right's padding (%d,%d) must not be negative", c.ExtraBottom, c.ExtraRight, a.ph, a.pw, a.pb, a.pr)
	}
	return a, nil
}

// conv returns c with its geometry spelt in one way: Kernel, Stride, Pad
// and Dilation where both axes agree (Dilation 0 for 1), the per-axis
// fields only where they differ, so that two spellings of one convolution
// make the same layer, spec and export.
func (a convAxes) conv(c Conv) Conv {
	c.Kernel, c.KernelW = a.kh, 0
	if a.kw != a.kh {
		c.KernelW = a.kw
	}
	c.Stride, c.StrideW = a.sh, 0
	if a.sw != a.sh {
		c.StrideW = a.sw
	}
	c.Pad, c.PadH, c.PadW = a.ph, 0, 0
	if a.pw != a.ph {
		c.Pad, c.PadH, c.PadW = 0, a.ph, a.pw
	}
	c.ExtraBottom, c.ExtraRight = a.pb-a.ph, a.pr-a.pw
	c.Dilation, c.DilationW = 0, 0
	switch {
	case a.dw != a.dh:
		c.Dilation, c.DilationW = a.dh, a.dw
	case a.dh > 1:
		c.Dilation = a.dh
	}
	return c
}

// uniform reports whether a is a k×k convolution, undilated, with one
// stride and one padding of every side: what Conv's first fields describe.
func (a convAxes) uniform() bool {
	return a.kh == a.kw && a.sh == a.sw && a.ph == a.pw && a.pb == a.ph && a.pr == a.pw && a.dh == 1 && a.dw == 1
}

// sidesEqual reports whether a pads the bottom as the top and the right as
// the left.
func (a convAxes) sidesEqual() bool { return a.pb == a.ph && a.pr == a.pw }

// out is the number of outputs along axis 0 (rows) or 1 (columns) of an
// input side of size, (size+top+bottom−span)/stride+1, or 0 where the
// kernel does not fit.
func (a convAxes) out(axis, size int) int {
	lo, hi, st := a.ph, a.pb, a.sh
	if axis == 1 {
		lo, hi, st = a.pw, a.pr, a.sw
	}
	if size+lo+hi < a.span(axis) {
		return 0
	}
	return (size+lo+hi-a.span(axis))/st + 1
}

// span is the extent of the dilated kernel along axis 0 (rows) or 1
// (columns): d·(k−1)+1.
func (a convAxes) span(axis int) int {
	if axis == 0 {
		return a.dh*(a.kh-1) + 1
	}
	return a.dw*(a.kw-1) + 1
}

// String describes a's stride, padding and dilation as torch's tuples,
// an unequal padding of the sides as ONNX's pads [top,left,bottom,right].
func (a convAxes) String() string {
	if !a.sidesEqual() {
		return fmt.Sprintf("stride (%d,%d), pads [%d,%d,%d,%d], dilation (%d,%d)", a.sh, a.sw, a.ph, a.pw, a.pb, a.pr, a.dh, a.dw)
	}
	return fmt.Sprintf("stride (%d,%d), padding (%d,%d), dilation (%d,%d)", a.sh, a.sw, a.ph, a.pw, a.dh, a.dw)
}

// graph returns a's settings for graphops.Conv2DAxes.
func (a convAxes) graph() graphops.ConvAxes {
	return graphops.ConvAxes{SH: a.sh, SW: a.sw, PH: a.ph, PW: a.pw, DH: a.dh, DW: a.dw, EB: a.pb - a.ph, ER: a.pr - a.pw}
}

// mustAxes resolves the per-axis settings of a Conv that Conv2D accepted.
func (c Conv) mustAxes() convAxes {
	a, err := c.axes()
	if err != nil {
		panic("models: " + err.Error())
	}
	return a
}
