package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestConvShapeOutput checks the output sizes against PyTorch's
// ⌊(H + 2·pad − k)/stride⌋ + 1, and that stride 0 and 1 are the same
// convolution.
func TestConvShapeOutput(t *testing.T) {
	tests := []struct {
		s      ConvShape
		oh, ow int
	}{
		{ConvShape{C: 1, H: 28, W: 28, KH: 5, KW: 5}, 24, 24},
		{ConvShape{C: 1, H: 28, W: 28, KH: 5, KW: 5, Stride: 1}, 24, 24},
		{ConvShape{C: 3, H: 32, W: 32, KH: 3, KW: 3, Pad: 1}, 32, 32},
		{ConvShape{C: 16, H: 32, W: 32, KH: 3, KW: 3, Stride: 2, Pad: 1}, 16, 16},
		{ConvShape{C: 16, H: 32, W: 32, KH: 1, KW: 1, Stride: 2}, 16, 16},
		{ConvShape{C: 32, H: 15, W: 9, KH: 3, KW: 3, Stride: 2, Pad: 1}, 8, 5},
		{ConvShape{C: 1, H: 28, W: 28, KH: 5, KW: 5, Pad: 2}, 28, 28},
		{ConvShape{C: 1, H: 7, W: 8, KH: 2, KW: 3, Stride: 3}, 2, 2},
	}
	for _, tt := range tests {
		if err := tt.s.Validate(); err != nil {
			t.Errorf("%+v: %v", tt.s, err)
		}
		if tt.s.OH() != tt.oh || tt.s.OW() != tt.ow {
			t.Errorf("%+v: output %d×%d, want %d×%d", tt.s, tt.s.OH(), tt.s.OW(), tt.oh, tt.ow)
		}
	}
	if s := (ConvShape{C: 1, H: 28, W: 28, KH: 5, KW: 5, Stride: 1}); !s.plain() || permTable(s) == nil {
		t.Error("stride 1 spelt out does not take the valid convolution's kernels")
	}
	if permTable(ConvShape{C: 1, H: 28, W: 28, KH: 5, KW: 5, Pad: 1}) != nil {
		t.Error("a padded convolution got a gather table")
	}
}

// directConv is the definition of a strided, padded convolution of one
// image x [C,H,W] by w [OC,C,KH,KW], in float64: z [OC,OH,OW].
func directConv(x, w []float32, oc int, s ConvShape) []float64 {
	z := make([]float64, oc*s.P())
	for o := range oc {
		for oy := range s.OH() {
			for ox := range s.OW() {
				var sum float64
				for c := range s.C {
					for i := range s.KH {
						for j := range s.KW {
							if k := s.source(c, i, j, oy, ox); k >= 0 {
								sum += float64(w[((o*s.C+c)*s.KH+i)*s.KW+j]) * float64(x[k])
							}
						}
					}
				}
				z[(o*s.OH()+oy)*s.OW()+ox] = sum
			}
		}
	}
	return z
}

// directConvGrads is the adjoint of directConv for the upstream gradient
// dz: the gradients with respect to x and w, in float64.
func directConvGrads(x, w, dz []float32, oc int, s ConvShape) (dx, dw []float64) {
	dx, dw = make([]float64, s.InSize()), make([]float64, len(w))
	for o := range oc {
		for oy := range s.OH() {
			for ox := range s.OW() {
				g := float64(dz[(o*s.OH()+oy)*s.OW()+ox])
				for c := range s.C {
					for i := range s.KH {
						for j := range s.KW {
							if k := s.source(c, i, j, oy, ox); k >= 0 {
								q := ((o*s.C+c)*s.KH+i)*s.KW + j
								dx[k] += g * float64(w[q])
								dw[q] += g * float64(x[k])
							}
						}
					}
				}
			}
		}
	}
	return dx, dw
}

// closeTo fails unless got[i] is within tol·scale of want[i], scale being
// the largest |want| (or floor, if larger: the size of the terms that
// cancel in want).
func closeTo(t *testing.T, what string, got []float32, want []float64, tol float64, floor ...float64) {
	t.Helper()
	scale := 0.0
	for _, v := range append(want, floor...) {
		scale = math.Max(scale, math.Abs(v))
	}
	for i, w := range want {
		if d := math.Abs(float64(got[i]) - w); !(d <= tol*scale+1e-30) {
			t.Fatalf("%s: [%d] = %g, want %g (scale %g)", what, i, got[i], w, scale)
		}
	}
}

// TestConvStridedMatchesDirect runs a whole convolution by the ConvShape
// recipe — Im2Col and the GEMMs forward, Col2Im and the GEMMs backward —
// on strided and padded shapes, on every kernel set, against the direct
// float64 convolution and its adjoint.
func TestConvStridedMatchesDirect(t *testing.T) {
	tests := []struct {
		s  ConvShape
		oc int
	}{
		{ConvShape{C: 3, H: 8, W: 8, KH: 3, KW: 3, Pad: 1}, 4},
		{ConvShape{C: 2, H: 9, W: 7, KH: 3, KW: 3, Stride: 2, Pad: 1}, 5},
		{ConvShape{C: 4, H: 8, W: 8, KH: 1, KW: 1, Stride: 2}, 3},
		{ConvShape{C: 1, H: 12, W: 12, KH: 5, KW: 5, Pad: 2}, 2},
		{ConvShape{C: 2, H: 5, W: 6, KH: 2, KW: 4, Stride: 3, Pad: 2}, 3},
		{ConvShape{C: 2, H: 7, W: 7, KH: 3, KW: 3}, 3}, // the valid kernels, for comparison
	}
	rng := rand.New(rand.NewPCG(31, 32))
	for _, tt := range tests {
		s, oc := tt.s, tt.oc
		k, p := s.K(), s.P()
		x, w, dz := randSlice(rng, s.InSize()), randSlice(rng, oc*k), randSlice(rng, oc*p)
		wantZ := directConv(x, w, oc, s)
		wantDx, wantDw := directConvGrads(x, w, dz, oc, s)
		for _, ks := range kernelSets() {
			what := fmt.Sprintf("%s %+v", ks.name, s)
			cols, z := make([]float32, k*p), make([]float32, oc*p)
			im2col(ks, cols, x, s, permTable(s))
			sgemm(ks, 0, false, false, oc, p, k, 1, 1, w, k, 0, cols, p, 0, 0, z, p)
			closeTo(t, what+" z", z, wantZ, 1e-5)
			dw := make([]float32, oc*k)
			sgemm(ks, 0, false, true, oc, k, p, 1, 1, dz, p, 0, cols, p, 0, 0, dw, k)
			closeTo(t, what+" dw", dw, wantDw, 1e-5)
			dx := make([]float32, s.InSize())
			sgemm(ks, 0, true, false, k, p, oc, 1, 1, w, k, 0, dz, p, 0, 0, cols, p)
			col2im(ks, dx, cols, s)
			closeTo(t, what+" dx", dx, wantDx, 1e-5)
		}
	}
}

// TestConvScratchSameBits checks that a padded stride-1 convolution given
// scratch space (the valid convolution's kernels on the padded image)
// gives the bits of the pure-Go strided path, on every kernel set, with
// NaN and −0 among the values; and that the other shapes ignore scratch.
func TestConvScratchSameBits(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	for _, s := range append(convShapes,
		ConvShape{C: 16, H: 32, W: 32, KH: 3, KW: 3, Pad: 1},
		ConvShape{C: 4, H: 8, W: 8, KH: 3, KW: 3, Pad: 1},
		ConvShape{C: 2, H: 70, W: 70, KH: 3, KW: 3, Pad: 1}, // padded rows of 72: the Go col2im on AVX-512
		ConvShape{C: 3, H: 14, W: 14, KH: 5, KW: 5, Pad: 2},
		ConvShape{C: 1, H: 7, W: 5, KH: 7, KW: 7, Pad: 3}) {
		cv, err := NewConv(s)
		if err != nil {
			t.Fatal(err)
		}
		if want := s.step() == 1 && s.Pad > 0; (cv.Scratch() > 0) != want {
			t.Fatalf("%+v: scratch %d", s, cv.Scratch())
		}
		if cv.Scratch() == 0 {
			continue
		}
		x, y := specialInput(rng, s.InSize()), specialInput(rng, s.K()*s.P())
		wcols, wdx := make([]float32, len(y)), make([]float32, len(x))
		im2colStrided(generic, wcols, x, s)
		col2imStrided(wdx, y, s)
		for _, ks := range kernelSets() {
			scratch := specialInput(rng, cv.Scratch()) // any contents
			cols, dx := make([]float32, len(y)), make([]float32, len(x))
			cv.im2colPadded(ks, cols, x, scratch)
			cv.col2imPadded(ks, dx, y, scratch)
			sameFloats(t, fmt.Sprint(ks.name, " im2col ", s), cols, wcols)
			sameFloats(t, fmt.Sprint(ks.name, " col2im ", s), dx, wdx)
		}
	}
}

// TestIm2ColStridedEveryKernelSet checks the column matrix of strided
// convolutions (the vector stride-2 gather on amd64, rows of 8 or more
// values, short rows and padding around them) against its definition, bit
// for bit with NaN and −0 among the values, on every kernel set, into a
// buffer holding garbage.
func TestIm2ColStridedEveryKernelSet(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	shapes := []ConvShape{
		{C: 16, H: 32, W: 32, KH: 3, KW: 3, Stride: 2, Pad: 1}, // resnet20-gn, rows of 16
		{C: 32, H: 16, W: 16, KH: 3, KW: 3, Stride: 2, Pad: 1}, // rows of 8 and 7
		{C: 16, H: 32, W: 32, KH: 1, KW: 1, Stride: 2},
		{C: 2, H: 40, W: 41, KH: 3, KW: 3, Stride: 2, Pad: 1}, // rows of 21: an overlapping last step
		{C: 2, H: 9, W: 36, KH: 2, KW: 4, Stride: 2, Pad: 2},
		{C: 3, H: 9, W: 11, KH: 3, KW: 3, Stride: 2, Pad: 1},
		{C: 2, H: 10, W: 30, KH: 4, KW: 5, Stride: 3, Pad: 2},
		{C: 2, H: 12, W: 11, KH: 3, KW: 3, Stride: 2, Pad: 1}, // rows of 6 and 5
		{C: 2, H: 12, W: 8, KH: 1, KW: 1, Stride: 2},          // rows of 4
		{C: 1, H: 7, W: 6, KH: 3, KW: 3, Stride: 2},           // rows of 2: in Go
	}
	for _, s := range shapes {
		x := specialInput(rng, s.InSize())
		want := naiveIm2Col(x, s)
		for _, ks := range kernelSets() {
			cols := specialInput(rng, s.K()*s.P())
			im2col(ks, cols, x, s, nil)
			sameFloats(t, fmt.Sprint(ks.name, " ", s), cols, want)
		}
	}
}
