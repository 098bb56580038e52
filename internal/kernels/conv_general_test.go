package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// generalShapes are convolutions whose axes differ or whose kernel is
// dilated: factorised 1×3 and 3×1 kernels, per-axis strides and padding,
// dilation with and without stride, and taps that miss the image.
var generalShapes = []ConvShape{
	{C: 2, H: 7, W: 9, KH: 1, KW: 3, PadW: 1},                        // 1×3, padding (0,1)
	{C: 3, H: 9, W: 6, KH: 3, KW: 1, Stride: 2, StrideW: 1, PadH: 1}, // 3×1, stride (2,1), padding (1,0)
	{C: 2, H: 9, W: 10, KH: 3, KW: 3, Pad: 2, DH: 2, DW: 2},          // dilated 3×3, d = 2, padding 2
	{C: 2, H: 11, W: 12, KH: 3, KW: 3, Stride: 2, Pad: 2, DH: 2, DW: 2},
	{C: 1, H: 8, W: 13, KH: 2, KW: 3, Stride: 1, StrideW: 3, PadH: 2, PadW: 1, DH: 3, DW: 2},
	{C: 2, H: 6, W: 5, KH: 3, KW: 3, PadH: 3, PadW: 1}, // rows of taps wholly in the padding
	{C: 1, H: 5, W: 20, KH: 1, KW: 5, PadW: 2, DW: 3},  // a 1×5 dilated along the rows
	{C: 2, H: 20, W: 4, KH: 5, KW: 1, StrideW: 2},      // stride (1,2)
	{C: 1, H: 4, W: 4, KH: 2, KW: 2, PadH: 1, PadW: 1}, // uniform, spelt per axis
	{C: 1, H: 9, W: 9, KH: 3, KW: 3, Stride: 2, DH: 1}, // uniform, dilation 1 spelt out
	{C: 3, H: 16, W: 16, KH: 3, KW: 3, Pad: 1, DH: 2, DW: 1},
	{C: 1, H: 3, W: 3, KH: 3, KW: 3, Stride: 5, StrideW: 4, PadH: 1, PadW: 1}, // strides past the image
	// Unequal padding of the two sides (ONNX pads [top,left,bottom,right]).
	{C: 2, H: 8, W: 8, KH: 3, KW: 3, Stride: 2, ExtraBottom: 1, ExtraRight: 1},                       // [0,0,1,1]: SAME_UPPER, stride 2
	{C: 2, H: 8, W: 9, KH: 3, KW: 3, Stride: 2, Pad: 1, ExtraBottom: -1, ExtraRight: -1},             // [1,1,0,0]: SAME_LOWER
	{C: 3, H: 7, W: 9, KH: 4, KW: 4, Pad: 1, ExtraBottom: 1, ExtraRight: 1},                          // [1,1,2,2]: padding='same', k = 4, the scratch kernels
	{C: 2, H: 5, W: 6, KH: 2, KW: 2, Pad: 1, ExtraBottom: -1, ExtraRight: -1},                        // [1,1,0,0], stride 1
	{C: 1, H: 9, W: 10, KH: 3, KW: 2, Stride: 2, StrideW: 1, PadH: 1, ExtraBottom: 1, DH: 2},         // [1,0,2,0], dilated rows
	{C: 2, H: 10, W: 7, KH: 3, KW: 3, StrideW: 2, PadH: 1, PadW: 2, ExtraRight: -2, DW: 2},           // [1,2,1,0], dilated columns
	{C: 1, H: 3, W: 4, KH: 3, KW: 3, ExtraBottom: 4, ExtraRight: 1},                                  // rows of taps wholly in the bottom padding
	{C: 1, H: 4, W: 4, KH: 3, KW: 3, Stride: 3, StrideW: 7, PadH: 2, ExtraBottom: -2, ExtraRight: 5}, // [2,0,0,5], a stride past the image
}

// naiveCol2Im is the definition of the column matrix's adjoint, adding in
// the order of the column matrix's rows and then columns.
func naiveCol2Im(cols []float32, s ConvShape) []float32 {
	dx := make([]float32, s.InSize())
	for c := range s.C {
		for i := range s.KH {
			for j := range s.KW {
				for oy := range s.OH() {
					for ox := range s.OW() {
						if k := s.source(c, i, j, oy, ox); k >= 0 {
							dx[k] += cols[((c*s.KH+i)*s.KW+j)*s.P()+oy*s.OW()+ox]
						}
					}
				}
			}
		}
	}
	return dx
}

// TestConvShapeGeneralOutput checks the output sizes of dilated and
// per-axis shapes against PyTorch's ⌊(H + 2·pad − d·(k−1) − 1)/stride⌋ + 1,
// and the shapes Validate refuses.
func TestConvShapeGeneralOutput(t *testing.T) {
	tests := []struct {
		s      ConvShape
		oh, ow int
	}{
		{ConvShape{C: 1, H: 28, W: 28, KH: 1, KW: 3, PadW: 1}, 28, 28},
		{ConvShape{C: 1, H: 28, W: 28, KH: 3, KW: 1, Stride: 2, StrideW: 1, PadH: 1}, 14, 28},
		{ConvShape{C: 1, H: 14, W: 28, KH: 3, KW: 3, Pad: 2, DH: 2, DW: 2}, 14, 28},
		{ConvShape{C: 1, H: 32, W: 32, KH: 3, KW: 3, Stride: 2, Pad: 2, DH: 2, DW: 2}, 16, 16},
		{ConvShape{C: 1, H: 10, W: 10, KH: 3, KW: 2, DH: 4, DW: 9}, 2, 1},
		// (H + top + bottom − span)/stride + 1
		{ConvShape{C: 1, H: 28, W: 27, KH: 3, KW: 3, Stride: 2, ExtraBottom: 1, ExtraRight: 1}, 14, 13},
		{ConvShape{C: 1, H: 28, W: 27, KH: 3, KW: 3, Stride: 2, Pad: 1, ExtraBottom: -1, ExtraRight: -1}, 14, 13},
		{ConvShape{C: 1, H: 7, W: 9, KH: 4, KW: 4, Pad: 1, ExtraBottom: 1, ExtraRight: 1}, 7, 9},
		{ConvShape{C: 1, H: 9, W: 10, KH: 3, KW: 2, Stride: 2, StrideW: 1, PadH: 1, ExtraBottom: 1, DH: 2}, 4, 9},
		{ConvShape{C: 1, H: 2, W: 2, KH: 3, KW: 3, ExtraBottom: 1, ExtraRight: 3}, 1, 3},
	}
	for _, tt := range tests {
		if err := tt.s.Validate(); err != nil {
			t.Errorf("%+v: %v", tt.s, err)
		}
		if tt.s.OH() != tt.oh || tt.s.OW() != tt.ow {
			t.Errorf("%+v: output %d×%d, want %d×%d", tt.s, tt.s.OH(), tt.s.OW(), tt.oh, tt.ow)
		}
	}
	for _, s := range []ConvShape{
		{C: 1, H: 4, W: 4, KH: 3, KW: 3, Pad: 1, PadW: 1},
		{C: 1, H: 4, W: 4, KH: 3, KW: 3, DH: 2},
		{C: 1, H: 4, W: 4, KH: 1, KW: 3, DW: 3, PadW: 1},
		{C: 1, H: 4, W: 4, KH: 1, KW: 1, StrideW: -1},
		{C: 1, H: 4, W: 4, KH: 1, KW: 1, DW: -1},
		{C: 1, H: 4, W: 4, KH: 3, KW: 3, ExtraBottom: -1},
		{C: 1, H: 4, W: 4, KH: 3, KW: 3, Pad: 1, ExtraRight: -2},
		{C: 1, H: 4, W: 4, KH: 3, KW: 3, PadH: 1, PadW: 1, ExtraBottom: -2},
		{C: 1, H: 1, W: 4, KH: 3, KW: 3, ExtraBottom: 1}, // 3 rows of kernel over 2 rows
	} {
		if s.Validate() == nil {
			t.Errorf("%+v: valid", s)
		}
	}
	for _, s := range []ConvShape{
		{C: 1, H: 4, W: 4, KH: 2, KW: 2, PadH: 1, PadW: 1},
		{C: 1, H: 4, W: 4, KH: 2, KW: 2, Stride: 2, StrideW: 2, DH: 1, DW: 1},
	} {
		c := s.canon()
		if c.StrideW != 0 || c.PadH != 0 || c.PadW != 0 || c.DH != 0 || c.DW != 0 || c.OH() != s.OH() || c.OW() != s.OW() {
			t.Errorf("%+v: canonical form %+v", s, c)
		}
	}
}

// TestConvGeneralMatchesDefinition checks the column matrix of the
// general shapes and its adjoint bit for bit against their definitions,
// with NaN and −0 among the values, on every kernel set, through Im2Col
// and Col2Im, a Conv, and a Conv given scratch (a padded stride-1 shape
// runs the valid kernels on its padded image), into buffers holding
// garbage; then a whole convolution by the ConvShape recipe against the
// direct float64 convolution and its adjoint.
func TestConvGeneralMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	for _, s := range generalShapes {
		if err := s.Validate(); err != nil {
			t.Fatalf("%+v: %v", s, err)
		}
		cv, err := NewConv(s)
		if err != nil {
			t.Fatal(err)
		}
		x, y := specialInput(rng, s.InSize()), specialInput(rng, s.K()*s.P())
		wantCols, wantDx := naiveIm2Col(x, s), naiveCol2Im(y, s)
		check := func(what string, run func(cols, dx []float32)) {
			cols, dx := specialInput(rng, len(y)), specialInput(rng, len(x))
			run(cols, dx)
			sameFloats(t, what+" im2col", cols, wantCols)
			sameFloats(t, what+" col2im", dx, wantDx)
		}
		check(fmt.Sprintf("Im2Col %+v", s), func(cols, dx []float32) { Im2Col(cols, x, s); Col2Im(dx, y, s) })
		check(fmt.Sprintf("Conv %+v", s), func(cols, dx []float32) { cv.Im2Col(cols, x); cv.Col2Im(dx, y) })
		for _, ks := range kernelSets() {
			check(fmt.Sprintf("%s %+v", ks.name, s), func(cols, dx []float32) {
				im2col(ks, cols, x, cv.s, cv.tbl)
				col2im(ks, dx, y, cv.s)
			})
			if cv.Scratch() == 0 {
				continue
			}
			scratch := specialInput(rng, cv.Scratch())
			check(fmt.Sprintf("%s scratch %+v", ks.name, s), func(cols, dx []float32) {
				cv.im2colPadded(ks, cols, x, scratch)
				cv.col2imPadded(ks, dx, y, scratch)
			})
		}
		if want := s.sh() == 1 && s.sw() == 1 && s.dh() == 1 && s.dw() == 1 && (s.ph() > 0 || s.pw() > 0 || s.pb() > 0 || s.pr() > 0); (cv.Scratch() > 0) != want {
			t.Errorf("%+v: scratch %d", s, cv.Scratch())
		}

		const oc = 3
		k, p := s.K(), s.P()
		xr, w, dz := randSlice(rng, s.InSize()), randSlice(rng, oc*k), randSlice(rng, oc*p)
		wantZ := directConv(xr, w, oc, s)
		wantDxr, wantDw := directConvGrads(xr, w, dz, oc, s)
		cols, z, dw, dxr := make([]float32, k*p), make([]float32, oc*p), make([]float32, oc*k), make([]float32, s.InSize())
		cv.Im2Col(cols, xr)
		Sgemm(false, false, oc, p, k, 1, w, k, cols, p, 0, z, p)
		Sgemm(false, true, oc, k, p, 1, dz, p, cols, p, 0, dw, k)
		Sgemm(true, false, k, p, oc, 1, w, k, dz, p, 0, cols, p)
		cv.Col2Im(dxr, cols)
		closeTo(t, fmt.Sprint(s, " z"), z, wantZ, 1e-5)
		closeTo(t, fmt.Sprint(s, " dw"), dw, wantDw, 1e-5)
		closeTo(t, fmt.Sprint(s, " dx"), dxr, wantDxr, 1e-5)
	}
}

// TestConvGeneralPathAgreesOnUniformShapes runs uniform shapes through the
// general path and checks it gives the bits of their own paths: the same
// copies and the same order of additions.
func TestConvGeneralPathAgreesOnUniformShapes(t *testing.T) {
	rng := rand.New(rand.NewPCG(39, 40))
	shapes := append([]ConvShape{
		{C: 3, H: 8, W: 8, KH: 3, KW: 3, Pad: 1},
		{C: 2, H: 9, W: 7, KH: 3, KW: 3, Stride: 2, Pad: 1},
		{C: 2, H: 5, W: 6, KH: 2, KW: 4, Stride: 3, Pad: 2},
		{C: 1, H: 3, W: 3, KH: 3, KW: 3, Stride: 5, Pad: 1},           // a stride past the image: one output
		{C: 2, H: 3, W: 14, KH: 3, KW: 3, Stride: 1000000000, Pad: 1}, // and a huge one
	}, convShapes...)
	for _, s := range shapes {
		x, y := specialInput(rng, s.InSize()), specialInput(rng, s.K()*s.P())
		gcols, gdx := make([]float32, len(y)), make([]float32, len(x))
		im2colGeneral(gcols, x, s)
		col2imGeneral(gdx, y, s)
		for _, ks := range kernelSets() {
			cols, dx := make([]float32, len(y)), make([]float32, len(x))
			im2col(ks, cols, x, s, permTable(s))
			col2im(ks, dx, y, s)
			sameFloats(t, fmt.Sprint(ks.name, " im2col ", s), cols, gcols)
			sameFloats(t, fmt.Sprint(ks.name, " col2im ", s), dx, gdx)
		}
	}
}

// TestConvUnequalSidesDispatch checks that only shapes that need it take
// the general path: a uniform shape (the ResNet and CNN convolutions,
// spelt with Stride and Pad, per axis, or with zero ExtraBottom and
// ExtraRight) keeps its own path, and a shape padded unequally on its two
// sides is not uniform; at stride 1 undilated it gets the scratch kernels.
func TestConvUnequalSidesDispatch(t *testing.T) {
	uniform := append([]ConvShape{
		{C: 64, H: 56, W: 56, KH: 3, KW: 3, Pad: 1},            // ResNet 3×3
		{C: 64, H: 56, W: 56, KH: 3, KW: 3, Stride: 2, Pad: 1}, // ResNet down-sampling 3×3
		{C: 3, H: 224, W: 224, KH: 7, KW: 7, Stride: 2, Pad: 3},
		{C: 64, H: 56, W: 56, KH: 1, KW: 1, Stride: 2},
		{C: 2, H: 8, W: 8, KH: 3, KW: 3, PadH: 1, PadW: 1},
	}, convShapes...)
	for _, s := range uniform {
		cv, err := NewConv(s)
		if err != nil {
			t.Fatal(err)
		}
		if !cv.Shape().uniform() || cv.Shape().ExtraBottom != 0 || cv.Shape().ExtraRight != 0 {
			t.Errorf("%+v: runs as %+v, not uniform", s, cv.Shape())
		}
	}
	for _, s := range []ConvShape{
		{C: 2, H: 8, W: 8, KH: 3, KW: 3, Stride: 2, ExtraBottom: 1, ExtraRight: 1},
		{C: 2, H: 8, W: 8, KH: 3, KW: 3, Stride: 2, Pad: 1, ExtraBottom: -1},
		{C: 2, H: 8, W: 8, KH: 4, KW: 4, Pad: 1, ExtraRight: 1},
	} {
		cv, err := NewConv(s)
		if err != nil {
			t.Fatal(err)
		}
		if cv.Shape().uniform() || cv.Shape() != s {
			t.Errorf("%+v: runs as uniform %+v", s, cv.Shape())
		}
		if want := s.sh() == 1; (cv.Scratch() > 0) != want {
			t.Errorf("%+v: scratch %d", s, cv.Scratch())
		}
	}
}
