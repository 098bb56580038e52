package graphops

import "github.com/gtstorm/gtstorm/internal/kernels"

// ConvAxes are the per-axis settings of a convolution (Conv2DAxes): the
// steps SH and SW of the kernel along the rows and columns, the zero
// padding PH of the top and bottom and PW of the left and right, and the
// dilations DH and DW, the distance between the kernel's taps (0 or 1:
// adjacent taps). EB and ER (0: none) pad the bottom and the right with
// that many zeros beyond PH and PW, negative for fewer (ONNX's pads
// [PH,PW,PH+EB,PW+ER], auto_pad SAME_UPPER's and SAME_LOWER's); PH+EB and
// PW+ER must not be negative.
type ConvAxes struct {
	SH, SW, PH, PW, DH, DW int
	EB, ER                 int
}

// shape is the kernels.ConvShape of the convolution with a's settings of a
// C×H×W image by a KH×KW kernel.
func (a ConvAxes) shape(c, h, w, kh, kw int) kernels.ConvShape {
	return kernels.ConvShape{C: c, H: h, W: w, KH: kh, KW: kw, Stride: a.SH, StrideW: a.SW, PadH: a.PH, PadW: a.PW, DH: a.DH, DW: a.DW,
		ExtraBottom: a.EB, ExtraRight: a.ER}
}
