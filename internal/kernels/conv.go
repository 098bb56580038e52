package kernels

import "fmt"

// ConvShape describes a 2-D convolution of one NCHW image of C channels, H
// rows and W columns by a KH×KW kernel moved by Stride and zero-padded by
// Pad on every side (PyTorch's Conv2d(stride=Stride, padding=Pad)). The zero
// values mean stride 1 and no padding, the valid convolution. Its output is
// OH×OW = ((H+2·Pad−KH)/Stride+1)×((W+2·Pad−KW)/Stride+1) per output
// channel, rounded down as PyTorch does.
//
// The column matrix of an image (Im2Col) has K() = C·KH·KW rows and
// P() = OH·OW columns: row (c·KH+i)·KW+j, column oy·OW+ox holds
// x[c][oy·Stride+i−Pad][ox·Stride+j−Pad], or 0 where that falls in the
// padding. With weights stored [OC][C][KH][KW] (PyTorch's order, so W is
// an OC×K row-major matrix), one image's convolution is
//
//	z_n [OC×P] = W [OC×K] · cols_n [K×P]        Sgemm(false, false, OC, P, K, …)
//	dcols_n [K×P] = Wᵀ · dz_n [OC×P]             Sgemm(true, false, K, P, OC, …), then Col2Im
//	dW [OC×K] += dz_n · cols_nᵀ                  Sgemm(false, true, OC, K, P, …, beta 1)
//
// all in NCHW, image by image. The fastest recipe measured on the MNIST and
// CIFAR CNNs (see PERFLOG.md) keeps one column buffer per layer, filled by
// Conv.Im2Col just before its GEMM (so it stays in cache) and filled again
// in the backward pass rather than kept for the whole batch, and, when
// OC ≥ 16, forms the weight gradient transposed with the broadcast kernels:
// Transpose dz_n into dzᵀ [P×OC], then dWᵀ [K×OC] += cols_n · dzᵀ
// (Sgemm(false, false, K, OC, P, …)), and Transpose dWᵀ once at the end.
// With fewer output channels the dz_n·cols_nᵀ form is faster. Pooling,
// bias and ReLU of the output go through MaxPool2x2BiasReLU.
//
// The valid stride-1 convolution has vector im2col and col2im kernels,
// which a padded stride-1 convolution runs on its padded image when given
// scratch space (Conv.Im2ColScratch, Conv.Col2ImScratch); otherwise a
// strided or padded convolution moves its data in pure Go, with the same
// bits on every kernel set (col2im adds in the fixed order of the column
// matrix's rows, as the vector kernels do).
//
// The general convolution (PyTorch's Conv2d(stride=(SH,SW),
// padding=(PH,PW), dilation=(DH,DW))) sets the per-axis fields below; its
// kernel taps lie DH rows and DW columns apart, so that row (c·KH+i)·KW+j,
// column oy·OW+ox holds x[c][oy·SH+i·DH−PH][ox·SW+j·DW−PW], and
// OH = (H+2·PH−DH·(KH−1)−1)/SH+1, OW likewise. A shape whose two axes
// agree and that is not dilated runs as the same shape spelt with Stride
// and Pad, on its paths and with its bits.
//
// ExtraBottom and ExtraRight pad the bottom and the right unlike the top
// and the left (ONNX's pads [PH,PW,PH+ExtraBottom,PW+ExtraRight], as
// auto_pad SAME_UPPER and SAME_LOWER make): the taps are placed as above,
// and OH = (H+PH+(PH+ExtraBottom)−DH·(KH−1)−1)/SH+1, OW likewise. Such a
// shape runs on the general path (or, at stride 1 undilated, on the valid
// kernels of its padded image).
type ConvShape struct {
	C, H, W     int // input channels, rows and columns of one image
	KH, KW      int // kernel rows and columns
	Stride, Pad int // step of the kernel (0 or 1: 1) and zero padding on every side
	// StrideW, where above 0, is the step along the columns, Stride then
	// being the step along the rows.
	StrideW int
	// PadH and PadW, where either is above 0, are the zero padding of the
	// top and bottom and of the left and right, in place of Pad (which
	// must then be 0).
	PadH, PadW int
	// DH and DW are the dilation of the kernel's rows and columns (0 or 1:
	// adjacent taps).
	DH, DW int
	// ExtraBottom and ExtraRight (0: none) are the rows of zeros below the
	// image and the columns right of it beyond the top's and the left's
	// padding, negative for fewer: the bottom is padded by
	// PadH+ExtraBottom (Pad+ExtraBottom) rows, which must not be negative.
	ExtraBottom, ExtraRight int
}

// sh, sw, ph, pw, dh and dw are the per-axis strides, paddings and
// dilations, with the zero values and the both-axes fields resolved.
func (s ConvShape) sh() int { return max(s.Stride, 1) }
func (s ConvShape) sw() int {
	if s.StrideW > 0 {
		return s.StrideW
	}
	return s.sh()
}
func (s ConvShape) perAxisPad() bool { return s.PadH != 0 || s.PadW != 0 }
func (s ConvShape) ph() int {
	if s.perAxisPad() {
		return s.PadH
	}
	return s.Pad
}
func (s ConvShape) pw() int {
	if s.perAxisPad() {
		return s.PadW
	}
	return s.Pad
}

// pb and pr are the bottom's and the right's padding.
func (s ConvShape) pb() int { return s.ph() + s.ExtraBottom }
func (s ConvShape) pr() int { return s.pw() + s.ExtraRight }
func (s ConvShape) dh() int { return max(s.DH, 1) }
func (s ConvShape) dw() int { return max(s.DW, 1) }

// uniform reports whether s's axes have the same stride and padding, its
// sides the same padding, and its kernel is not dilated: the convolutions
// that Stride and Pad describe.
func (s ConvShape) uniform() bool {
	return s.sh() == s.sw() && s.ph() == s.pw() && s.ExtraBottom == 0 && s.ExtraRight == 0 && s.dh() == 1 && s.dw() == 1
}

// canon returns s spelt with Stride and Pad where it is uniform, and s
// otherwise.
func (s ConvShape) canon() ConvShape {
	if !s.uniform() || (s.StrideW == 0 && !s.perAxisPad() && s.DH == 0 && s.DW == 0) {
		return s
	}
	return ConvShape{C: s.C, H: s.H, W: s.W, KH: s.KH, KW: s.KW, Stride: s.Stride, Pad: s.ph()}
}

// step is the kernel's stride of a uniform shape: Stride, or 1 for the
// zero value.
func (s ConvShape) step() int { return s.sh() }

// plain reports whether s is the valid (unpadded) stride-1 convolution that
// the vector im2col and col2im kernels handle.
func (s ConvShape) plain() bool { return s.uniform() && s.step() == 1 && s.ph() == 0 }

// Pointwise reports whether the convolution is a 1×1 kernel moved by 1
// without padding, whose columns (Im2Col) are the image itself, [C×H·W].
func (s ConvShape) Pointwise() bool {
	return s.KH == 1 && s.KW == 1 && s.sh() == 1 && s.sw() == 1 && s.ph() == 0 && s.pw() == 0 && s.pb() == 0 && s.pr() == 0
}

// OH is the number of output rows.
func (s ConvShape) OH() int { return (s.H+s.ph()+s.pb()-s.dh()*(s.KH-1)-1)/s.sh() + 1 }

// OW is the number of output columns.
func (s ConvShape) OW() int { return (s.W+s.pw()+s.pr()-s.dw()*(s.KW-1)-1)/s.sw() + 1 }

// K is the number of rows of the column matrix, C·KH·KW.
func (s ConvShape) K() int { return s.C * s.KH * s.KW }

// P is the number of output pixels per channel, OH·OW.
func (s ConvShape) P() int { return s.OH() * s.OW() }

// InSize is the number of elements of one input image, C·H·W.
func (s ConvShape) InSize() int { return s.C * s.H * s.W }

// Validate reports whether s describes a convolution with a non-empty output.
func (s ConvShape) Validate() error {
	if s.C < 1 || s.KH < 1 || s.KW < 1 {
		return fmt.Errorf("conv shape %+v: channels and kernel sizes must be ≥ 1", s)
	}
	if s.Stride < 0 || s.Pad < 0 || s.StrideW < 0 || s.PadH < 0 || s.PadW < 0 || s.DH < 0 || s.DW < 0 {
		return fmt.Errorf("conv shape %+v: negative stride, padding or dilation", s)
	}
	if s.Pad != 0 && s.perAxisPad() {
		return fmt.Errorf("conv shape %+v: both Pad and PadH or PadW set", s)
	}
	if s.pb() < 0 || s.pr() < 0 {
		return fmt.Errorf("conv shape %+v: negative bottom or right padding", s)
	}
	if eh, ew := s.dh()*(s.KH-1)+1, s.dw()*(s.KW-1)+1; eh > s.H+s.ph()+s.pb() || ew > s.W+s.pw()+s.pr() {
		return fmt.Errorf("conv shape %+v: kernel %d×%d (dilated %d×%d) larger than the %d×%d image padded by %d×%d", s, s.KH, s.KW, eh, ew, s.H, s.W, s.ph()+s.pb(), s.pw()+s.pr())
	}
	return nil
}

func (s ConvShape) mustValid(op string, lenIn, wantIn, lenCols int) {
	if err := s.Validate(); err != nil {
		panic("kernels: " + op + ": " + err.Error())
	}
	if lenIn < wantIn {
		panic(fmt.Sprintf("kernels: %s: image slice has %d elements, want ≥ %d", op, lenIn, wantIn))
	}
	if need := s.K() * s.P(); lenCols < need {
		panic(fmt.Sprintf("kernels: %s: cols slice has %d elements, want ≥ %d", op, lenCols, need))
	}
}

// Im2Col writes the K()×P() column matrix of the image x (C×H×W) into cols.
// It panics if s is invalid or a slice is too short. A Conv made once for
// the shape does the same faster.
func Im2Col(cols, x []float32, s ConvShape) {
	s.mustValid("Im2Col", len(x), s.InSize(), len(cols))
	im2col(use(), cols, x, s.canon(), nil)
}

// Col2Im is the adjoint of Im2Col: it sets dx (C×H×W) to the sum, over the
// entries of cols (K()×P()), of each entry at the image position Im2Col read
// it from. It overwrites dx. It panics if s is invalid or a slice is too
// short.
func Col2Im(dx, cols []float32, s ConvShape) {
	s.mustValid("Col2Im", len(dx), s.InSize(), len(cols))
	col2im(use(), dx, cols, s.canon())
}

// Conv is a convolution shape with the gather table its fastest im2col
// kernel needs, computed once by NewConv. It is immutable and safe for
// concurrent use.
type Conv struct {
	s      ConvShape
	tbl    []int32 // permEntry int32 per 16-pixel chunk, or nil
	padded *Conv   // the valid convolution of the padded image (stride 1, Pad > 0), or nil
}

// NewConv validates s and precomputes its im2col plan. The Conv's Shape is
// s spelt with Stride and Pad where its axes agree and it is not dilated.
func NewConv(s ConvShape) (*Conv, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	s = s.canon()
	cv := &Conv{s: s, tbl: permTable(s)}
	if s.sh() == 1 && s.sw() == 1 && s.dh() == 1 && s.dw() == 1 && (s.ph() > 0 || s.pw() > 0 || s.pb() > 0 || s.pr() > 0) {
		ps := ConvShape{C: s.C, H: s.H + s.ph() + s.pb(), W: s.W + s.pw() + s.pr(), KH: s.KH, KW: s.KW}
		cv.padded = &Conv{s: ps, tbl: permTable(ps)}
	}
	return cv, nil
}

// Shape returns the convolution's shape.
func (cv *Conv) Shape() ConvShape { return cv.s }

// Im2Col is Im2Col for the Conv's shape.
func (cv *Conv) Im2Col(cols, x []float32) {
	cv.s.mustValid("Conv.Im2Col", len(x), cv.s.InSize(), len(cols))
	im2col(use(), cols, x, cv.s, cv.tbl)
}

// Col2Im is Col2Im for the Conv's shape.
func (cv *Conv) Col2Im(dx, cols []float32) {
	cv.s.mustValid("Conv.Col2Im", len(dx), cv.s.InSize(), len(cols))
	col2im(use(), dx, cols, cv.s)
}

// permEntry is the size of one chunk's entry in a gather table: 16 window
// offsets, the window start, the window's lane mask and the chunk's store
// mask (and one spare word).
const permEntry = 20

// permTable builds the gather table of the permute im2col kernel: for each
// chunk of 16 consecutive output pixels, the offsets of their source
// elements (kernel offset i = j = 0) relative to the first one. It returns
// nil when some chunk's window, widened by KW−1 for the kernel columns,
// exceeds the 32 floats of a register pair, and for a strided or padded
// convolution.
func permTable(s ConvShape) []int32 {
	if !s.plain() {
		return nil
	}
	ow, p := s.OW(), s.P()
	chunks := (p + 15) / 16
	tbl := make([]int32, permEntry*chunks)
	for q := range chunks {
		e := tbl[permEntry*q : permEntry*(q+1)]
		q0 := 16 * q
		start := (q0/ow)*s.W + q0%ow
		var reach int
		var store uint32
		for l := range min(16, p-q0) {
			px := q0 + l
			off := (px/ow)*s.W + px%ow - start
			e[l] = int32(off)
			reach = max(reach, off)
			store |= 1 << l
		}
		lanes := reach + s.KW
		if lanes > 32 {
			return nil
		}
		e[16] = int32(start)
		e[17] = int32(uint32(laneMask(lanes)))
		e[18] = int32(store)
	}
	return tbl
}

func im2col(ks *kernelSet, cols, x []float32, s ConvShape, tbl []int32) {
	switch {
	case !s.uniform():
		im2colGeneral(cols, x, s)
		return
	case !s.plain():
		im2colStrided(ks, cols, x, s)
		return
	case ks.isa == isaAVX512:
		im2colAsm(cols, x, s, tbl)
		return
	case ks.isa == isaAVX2 && s.OW() >= 4:
		im2colAVX2(cols, x, s)
		return
	case ks.isa == isaNEON && s.OW() >= 4:
		im2colNEON(cols, x, s)
		return
	}
	oh, ow, p := s.OH(), s.OW(), s.P()
	r := 0
	for c := range s.C {
		for i := range s.KH {
			for j := range s.KW {
				dst := cols[r*p : (r+1)*p]
				for oy := range oh {
					src := x[(c*s.H+oy+i)*s.W+j:]
					copy(dst[oy*ow:(oy+1)*ow], src[:ow])
				}
				r++
			}
		}
	}
}

func col2im(ks *kernelSet, dx, cols []float32, s ConvShape) {
	switch {
	case !s.uniform():
		col2imGeneral(dx, cols, s)
		return
	case !s.plain():
		col2imStrided(dx, cols, s)
		return
	case ks.isa == isaAVX512 && s.W < 64:
		col2imAsm(dx, cols, s)
		return
	case ks.isa == isaAVX2:
		col2imAVX2(dx, cols, s)
		return
	case ks.isa == isaNEON:
		col2imNEON(dx, cols, s)
		return
	}
	oh, ow, p := s.OH(), s.OW(), s.P()
	clear(dx[:s.InSize()])
	r := 0
	for c := range s.C {
		for i := range s.KH {
			for j := range s.KW {
				src := cols[r*p : (r+1)*p]
				for oy := range oh {
					dst := dx[(c*s.H+oy+i)*s.W+j:][:ow]
					for ox, v := range src[oy*ow : (oy+1)*ow] {
						dst[ox] += v
					}
				}
				r++
			}
		}
	}
}
