package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// ceilWindowShapes are pools in PyTorch's ceil_mode, each with the output
// size torch gives it: most keep a last window clipped at the plane's (or
// its padding's) end, some are the same as in floor mode.
var ceilWindowShapes = []struct {
	s      WindowShape
	oh, ow int
}{
	{WindowShape{Planes: 2, H: 28, W: 28, K: 3, Stride: 2}, 14, 14},       // MaxPool2d(3, 2, ceil_mode=True) on MNIST: the last window holds 2 rows
	{WindowShape{Planes: 2, H: 12, W: 12, K: 3, Stride: 2, Pad: 1}, 7, 7}, // the last window ends in the padding and past it
	{WindowShape{Planes: 1, H: 7, W: 9, K: 2, Stride: 2}, 4, 5},           // odd sizes: the last row and column pooled alone
	{WindowShape{Planes: 1, H: 6, W: 11, K: 4, Stride: 3, Pad: 2}, 3, 5},  // rows as in floor mode, columns clipped
	{WindowShape{Planes: 1, H: 6, W: 6, K: 3, Stride: 3, Pad: 1}, 3, 3},   // a last window of one row, one of padding
	{WindowShape{Planes: 2, H: 10, W: 10, K: 2, Stride: 3}, 4, 4},         // gaps: a last window of one column
	{WindowShape{Planes: 1, H: 5, W: 5, K: 2, Stride: 2, Pad: 1}, 3, 3},   // the window that would start in the padding is dropped
	{WindowShape{Planes: 2, H: 9, W: 9, K: 3, Stride: 2}, 4, 4},           // exact: as in floor mode
	{WindowShape{Planes: 1, H: 8, W: 8, K: 2, Stride: 2}, 4, 4},           // exact
	{WindowShape{Planes: 1, H: 1, W: 3, K: 3, Stride: 1, Pad: 1}, 1, 3},   // exact, padded
	{WindowShape{Planes: 1, H: 16, W: 17, K: 16, Stride: 16}, 1, 2},       // the largest window, a one-column last window
}

// ceilRef is PyTorch's max_pool2d and avg_pool2d in ceil mode, written
// from their CPU kernels: the output size from the float ceiling, each
// window [start, start+k) clipped at size+pad for the divisor and at the
// plane for the values.
type ceilRef struct{ WindowShape }

func (s ceilRef) side(size int) int {
	o := int(math.Ceil(float64(size+2*s.Pad-s.K)/float64(s.Stride))) + 1
	if (o-1)*s.Stride >= size+s.Pad {
		o--
	}
	return o
}

// span returns the in-plane part [lo, hi) of the window at out along a
// side of size, and the extent torch's count_include_pad divisor counts.
func (s ceilRef) span(out, size int) (lo, hi, counted int) {
	start := out*s.Stride - s.Pad
	end := min(start+s.K, size+s.Pad)
	counted = end - start
	return max(start, 0), min(end, size), counted
}

// TestCeilWindowPools checks MaxPool and AvgPool (with and without
// ExcludePad) of Ceil shapes and their gradients against ceilRef, bit for
// bit: the first maximum (or NaN) of each clipped window, the float64 sum
// divided by torch's divisor, and the gradients added in output order.
func TestCeilWindowPools(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for _, tt := range ceilWindowShapes {
		tt.s.Ceil = true
		ref := ceilRef{tt.s}
		if err := tt.s.Validate(); err != nil {
			t.Fatal(err)
		}
		if tt.s.OH() != tt.oh || tt.s.OW() != tt.ow || ref.side(tt.s.H) != tt.oh || ref.side(tt.s.W) != tt.ow {
			t.Fatalf("%+v: output %d×%d (reference %d×%d), want %d×%d", tt.s, tt.s.OH(), tt.s.OW(), ref.side(tt.s.H), ref.side(tt.s.W), tt.oh, tt.ow)
		}
		for _, exclude := range []bool{false, true} {
			for _, ties := range []bool{false, true} {
				s := tt.s
				s.ExcludePad = exclude
				what := fmt.Sprintf("%+v ties=%v", s, ties)
				x := randSlice(rng, s.In())
				if ties {
					x = tiedInput(rng, s.In())
					x[rng.IntN(len(x))] = float32(math.NaN())
				}
				dy := randSlice(rng, s.Out())
				y, arg, avg := make([]float32, s.Out()), make([]uint8, s.Out()), make([]float32, s.Out())
				dxMax, dxAvg := make([]float32, s.In()), make([]float32, s.In())
				for i := range dxMax {
					dxMax[i], dxAvg[i] = 7, 7 // overwritten
				}
				MaxPool(y, arg, x, s)
				MaxPoolBackward(dxMax, dy, arg, s)
				AvgPool(avg, x, s)
				AvgPoolBackward(dxAvg, dy, s)
				wantMax, wantAvg := make([]float32, s.In()), make([]float32, s.In())
				o := 0
				for p := range s.Planes {
					for oy := range s.OH() {
						y0, y1, ny := ref.span(oy, s.H)
						for ox := range s.OW() {
							x0, x1, nx := ref.span(ox, s.W)
							div := ny * nx
							if s.ExcludePad {
								div = (y1 - y0) * (x1 - x0)
							}
							if y1 <= y0 || x1 <= x0 {
								t.Fatalf("%s: window (%d, %d) holds no value", what, oy, ox)
							}
							best, at, sum := float32(0), -1, 0.0
							for r := y0; r < y1; r++ {
								for c := x0; c < x1; c++ {
									k := (p*s.H+r)*s.W + c
									if v := x[k]; at < 0 || v > best || math.IsNaN(float64(v)) && !math.IsNaN(float64(best)) {
										best, at = v, k
									}
									sum += float64(x[k])
									wantAvg[k] += float32(float64(dy[o]) / float64(div))
								}
							}
							wantMax[at] += dy[o]
							if math.Float32bits(y[o]) != math.Float32bits(best) {
								t.Fatalf("%s: max[%d] = %g, want %g", what, o, y[o], best)
							}
							if want := float32(sum / float64(div)); math.Float32bits(avg[o]) != math.Float32bits(want) && !math.IsNaN(float64(want)) {
								t.Fatalf("%s: avg[%d] = %g, want %g (divisor %d)", what, o, avg[o], want, div)
							}
							o++
						}
					}
				}
				for k := range wantMax {
					if math.Float32bits(dxMax[k]) != math.Float32bits(wantMax[k]) || math.Float32bits(dxAvg[k]) != math.Float32bits(wantAvg[k]) {
						t.Fatalf("%s: dx[%d] = %g (max), %g (avg), want %g, %g", what, k, dxMax[k], dxAvg[k], wantMax[k], wantAvg[k])
					}
				}
			}
		}
	}
}

// TestCeilIsFloorWhenExact checks that Ceil changes nothing, not a bit, on
// a shape whose windows tile the padded plane exactly.
func TestCeilIsFloorWhenExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(63, 64))
	for _, s := range []WindowShape{
		{Planes: 2, H: 9, W: 9, K: 3, Stride: 2},
		{Planes: 2, H: 9, W: 9, K: 3, Stride: 2, Pad: 1},
		{Planes: 2, H: 9, W: 9, K: 3, Stride: 2, Pad: 1, ExcludePad: true},
	} {
		c := s
		c.Ceil = true
		if c.OH() != s.OH() || c.OW() != s.OW() {
			t.Fatalf("%+v: ceil output %d×%d, floor %d×%d", s, c.OH(), c.OW(), s.OH(), s.OW())
		}
		x, dy := randSlice(rng, s.In()), randSlice(rng, s.Out())
		run := func(s WindowShape) [4][]float32 {
			y, arg, avg := make([]float32, s.Out()), make([]uint8, s.Out()), make([]float32, s.Out())
			dxMax, dxAvg := make([]float32, s.In()), make([]float32, s.In())
			MaxPool(y, arg, x, s)
			MaxPoolBackward(dxMax, dy, arg, s)
			AvgPool(avg, x, s)
			AvgPoolBackward(dxAvg, dy, s)
			return [4][]float32{y, avg, dxMax, dxAvg}
		}
		got, want := run(c), run(s)
		for i := range got {
			for k := range got[i] {
				if math.Float32bits(got[i][k]) != math.Float32bits(want[i][k]) {
					t.Fatalf("%+v: result %d [%d] = %g with Ceil, %g without", s, i, k, got[i][k], want[i][k])
				}
			}
		}
	}
}
