package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

var convShapes = []ConvShape{
	{C: 1, H: 28, W: 28, KH: 5, KW: 5},  // MNIST conv1
	{C: 16, H: 12, W: 12, KH: 5, KW: 5}, // MNIST conv2
	{C: 3, H: 32, W: 32, KH: 5, KW: 5},  // CIFAR conv1
	{C: 6, H: 14, W: 14, KH: 5, KW: 5},  // CIFAR conv2
	{C: 2, H: 7, W: 9, KH: 3, KW: 2},
	{C: 3, H: 6, W: 8, KH: 2, KW: 1}, // the narrow AVX-512 col2im, kernel widths 1 to 7
	{C: 2, H: 9, W: 16, KH: 3, KW: 3},
	{C: 2, H: 8, W: 10, KH: 2, KW: 4},
	{C: 1, H: 8, W: 11, KH: 4, KW: 6},
	{C: 2, H: 9, W: 16, KH: 3, KW: 7},
	{C: 1, H: 5, W: 5, KH: 5, KW: 5}, // one output pixel
	{C: 3, H: 4, W: 20, KH: 1, KW: 1},
	{C: 2, H: 6, W: 20, KH: 2, KW: 5},  // ow = 16
	{C: 2, H: 6, W: 21, KH: 2, KW: 5},  // ow = 17
	{C: 2, H: 4, W: 29, KH: 2, KW: 5},  // ow = 25: AVX2's unrolled rows of three steps and one
	{C: 1, H: 3, W: 33, KH: 1, KW: 2},  // ow = 32: the widest unrolled rows
	{C: 1, H: 3, W: 35, KH: 2, KW: 3},  // ow = 33: AVX2's step loop
	{C: 2, H: 5, W: 63, KH: 3, KW: 7},  // widest rows on the assembly col2im (w < 64)
	{C: 1, H: 3, W: 64, KH: 2, KW: 1},  // w = 64: col2im falls back to Go
	{C: 1, H: 3, W: 70, KH: 2, KW: 40}, // w > 64
	{C: 3, H: 16, W: 16, KH: 7, KW: 7}, // widest unrolled col2im
	{C: 2, H: 16, W: 16, KH: 3, KW: 8}, // kw > 7: plane col2im
	{C: 2, H: 17, W: 17, KH: 3, KW: 3}, // w > 16: plane col2im
	{C: 2, H: 9, W: 6, KH: 2, KW: 3},   // ow = 4: several row breaks per chunk
	{C: 1, H: 40, W: 3, KH: 2, KW: 2},  // ow = 2: 16 pixels span 8 rows
	{C: 1, H: 12, W: 10, KH: 3, KW: 8}, // ow = 3: window too wide, no gather table
	// Strided and padded (pure Go on every set).
	{C: 1, H: 5, W: 5, KH: 5, KW: 5, Stride: 1},           // stride 1 spelt out: the valid kernels
	{C: 3, H: 8, W: 8, KH: 3, KW: 3, Pad: 1},              // ResNet's stride-1 3×3
	{C: 2, H: 8, W: 8, KH: 3, KW: 3, Stride: 2, Pad: 1},   // ResNet's first conv of a stage
	{C: 2, H: 8, W: 8, KH: 1, KW: 1, Stride: 2},           // ResNet's shortcut
	{C: 2, H: 9, W: 7, KH: 3, KW: 3, Stride: 2, Pad: 1},   // odd sizes: the last row and column drop
	{C: 1, H: 12, W: 12, KH: 5, KW: 5, Pad: 2},            // the FedAvg CNN's 5×5
	{C: 2, H: 5, W: 6, KH: 2, KW: 4, Stride: 3, Pad: 2},   // stride > kernel rows; windows wholly in the padding
	{C: 1, H: 3, W: 4, KH: 5, KW: 5, Pad: 1},              // kernel larger than the image
	{C: 2, H: 10, W: 11, KH: 3, KW: 2, Stride: 1, Pad: 3}, // padding ≥ kernel
	{C: 1, H: 16, W: 40, KH: 4, KW: 3, Stride: 4, Pad: 0}, // stride only
}

func TestPermTableFallback(t *testing.T) {
	if permTable(ConvShape{C: 1, H: 12, W: 10, KH: 3, KW: 8}) != nil {
		t.Error("ow = 3, kw = 8 (a 60-float window) got a gather table")
	}
	for _, s := range convShapes[:4] {
		if permTable(s) == nil {
			t.Errorf("%+v: no gather table for a CNN shape", s)
		}
	}
}

// source returns the image element that the column matrix's entry for
// kernel position (c, i, j) and output (oy, ox) reads, or −1 in the
// padding: the definition of the column matrix.
func (s ConvShape) source(c, i, j, oy, ox int) int {
	iy, ix := oy*s.sh()+i*s.dh()-s.ph(), ox*s.sw()+j*s.dw()-s.pw()
	if iy < 0 || iy >= s.H || ix < 0 || ix >= s.W {
		return -1
	}
	return (c*s.H+iy)*s.W + ix
}

// naiveIm2Col is the definition of the column matrix.
func naiveIm2Col(x []float32, s ConvShape) []float32 {
	cols := make([]float32, s.K()*s.P())
	for c := range s.C {
		for i := range s.KH {
			for j := range s.KW {
				for oy := range s.OH() {
					for ox := range s.OW() {
						if k := s.source(c, i, j, oy, ox); k >= 0 {
							cols[((c*s.KH+i)*s.KW+j)*s.P()+oy*s.OW()+ox] = x[k]
						}
					}
				}
			}
		}
	}
	return cols
}

func TestIm2ColCol2Im(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, ks := range kernelSets() {
		for _, s := range convShapes {
			x := randSlice(rng, s.InSize())
			want := naiveIm2Col(x, s)
			cols := randSlice(rng, len(want)+7) // spare tail must stay untouched
			tail := append([]float32(nil), cols[len(want):]...)
			for _, tbl := range [][]int32{nil, permTable(s)} {
				clear(cols[:len(want)])
				im2col(ks, cols, x, s, tbl)
				for i, w := range want {
					if cols[i] != w {
						t.Fatalf("%s %+v table=%v: cols[%d] = %g, want %g", ks.name, s, tbl != nil, i, cols[i], w)
					}
				}
				for i, v := range tail {
					if cols[len(want)+i] != v {
						t.Fatalf("%s %+v table=%v: Im2Col wrote past its output at %d", ks.name, s, tbl != nil, len(want)+i)
					}
				}
			}
			// Col2Im against the scatter definition, exactly up to summation order.
			y := randSlice(rng, len(want))
			wantDx := make([]float64, s.InSize())
			absDx := make([]float64, s.InSize())
			for c := range s.C {
				for i := range s.KH {
					for j := range s.KW {
						for oy := range s.OH() {
							for ox := range s.OW() {
								k := s.source(c, i, j, oy, ox)
								if k < 0 {
									continue
								}
								v := float64(y[((c*s.KH+i)*s.KW+j)*s.P()+oy*s.OW()+ox])
								wantDx[k] += v
								absDx[k] += math.Abs(v)
							}
						}
					}
				}
			}
			dx := make([]float32, s.InSize()+5)
			for i := range dx {
				dx[i] = float32(math.NaN()) // Col2Im overwrites
			}
			col2im(ks, dx, y, s)
			tol := float64(s.KH*s.KW) * 0x1p-24
			for i, w := range wantDx {
				if math.IsNaN(float64(dx[i])) || math.Abs(float64(dx[i])-w) > tol*absDx[i] {
					t.Fatalf("%s %+v: dx[%d] = %g, want %g", ks.name, s, i, dx[i], w)
				}
			}
			for i := s.InSize(); i < len(dx); i++ {
				if !math.IsNaN(float64(dx[i])) {
					t.Fatalf("%s %+v: Col2Im wrote past its output at %d", ks.name, s, i)
				}
			}
		}
	}
}

func TestConvShapeValidate(t *testing.T) {
	tests := []struct {
		s  ConvShape
		ok bool
	}{
		{ConvShape{C: 1, H: 28, W: 28, KH: 5, KW: 5}, true},
		{ConvShape{C: 0, H: 28, W: 28, KH: 5, KW: 5}, false},
		{ConvShape{C: 1, H: 4, W: 28, KH: 5, KW: 5}, false},
		{ConvShape{C: 1, H: 28, W: 28, KH: 5, KW: 0}, false},
		{ConvShape{C: 1, H: 4, W: 4, KH: 5, KW: 5, Pad: 1}, true},
		{ConvShape{C: 1, H: 2, W: 4, KH: 5, KW: 5, Pad: 1}, false},
		{ConvShape{C: 1, H: 8, W: 8, KH: 3, KW: 3, Stride: -1}, false},
		{ConvShape{C: 1, H: 8, W: 8, KH: 3, KW: 3, Pad: -1}, false},
	}
	for _, tt := range tests {
		if err := tt.s.Validate(); (err == nil) != tt.ok {
			t.Errorf("%+v: Validate() = %v, want ok=%v", tt.s, err, tt.ok)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("Im2Col with a short output did not panic")
		}
	}()
	s := ConvShape{C: 1, H: 28, W: 28, KH: 5, KW: 5}
	Im2Col(make([]float32, s.K()*s.P()-1), make([]float32, s.InSize()), s)
}
