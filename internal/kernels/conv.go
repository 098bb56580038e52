package kernels

import "fmt"

// ConvShape describes a stride-1, unpadded 2-D convolution of one NCHW image
// of C channels, H rows and W columns by a KH×KW kernel. Its output is
// OH×OW = (H−KH+1)×(W−KW+1) per output channel.
//
// The column matrix of an image (Im2Col) has K() = C·KH·KW rows and
// P() = OH·OW columns: row (c·KH+i)·KW+j, column oy·OW+ox holds
// x[c][oy+i][ox+j]. With weights stored [OC][C][KH][KW] (PyTorch's order,
// so W is an OC×K row-major matrix), one image's convolution is
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
type ConvShape struct {
	C, H, W int // input channels, rows and columns of one image
	KH, KW  int // kernel rows and columns
}

// OH is the number of output rows.
func (s ConvShape) OH() int { return s.H - s.KH + 1 }

// OW is the number of output columns.
func (s ConvShape) OW() int { return s.W - s.KW + 1 }

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
	if s.KH > s.H || s.KW > s.W {
		return fmt.Errorf("conv shape %+v: kernel %d×%d larger than the %d×%d image", s, s.KH, s.KW, s.H, s.W)
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
	im2col(use(), cols, x, s, nil)
}

// Col2Im is the adjoint of Im2Col: it sets dx (C×H×W) to the sum, over the
// entries of cols (K()×P()), of each entry at the image position Im2Col read
// it from. It overwrites dx. It panics if s is invalid or a slice is too
// short.
func Col2Im(dx, cols []float32, s ConvShape) {
	s.mustValid("Col2Im", len(dx), s.InSize(), len(cols))
	col2im(use(), dx, cols, s)
}

// Conv is a convolution shape with the gather table its fastest im2col
// kernel needs, computed once by NewConv. It is immutable and safe for
// concurrent use.
type Conv struct {
	s   ConvShape
	tbl []int32 // permEntry int32 per 16-pixel chunk, or nil
}

// NewConv validates s and precomputes its im2col plan.
func NewConv(s ConvShape) (*Conv, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &Conv{s: s, tbl: permTable(s)}, nil
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
// exceeds the 32 floats of a register pair.
func permTable(s ConvShape) []int32 {
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
