package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

var windowShapes = []WindowShape{
	{Planes: 3, H: 8, W: 8, K: 2, Stride: 2},   // the FedAvg CNN's 2×2
	{Planes: 2, H: 7, W: 9, K: 2, Stride: 2},   // odd sizes: the last row and column drop
	{Planes: 2, H: 9, W: 9, K: 3, Stride: 2},   // overlapping windows
	{Planes: 1, H: 6, W: 10, K: 3, Stride: 1},  // heavily overlapping
	{Planes: 2, H: 10, W: 11, K: 3, Stride: 4}, // gaps between windows
	{Planes: 1, H: 16, W: 16, K: 16, Stride: 1},
	{Planes: 4, H: 1, W: 5, K: 1, Stride: 2},
}

// paddedWindowShapes are padded pools, checked by TestWindowPools beside
// windowShapes (whose bits layersDigest records).
var paddedWindowShapes = []WindowShape{
	{Planes: 2, H: 7, W: 9, K: 3, Stride: 2, Pad: 1}, // MaxPool2d(3, 2, 1)
	{Planes: 1, H: 5, W: 5, K: 2, Stride: 1, Pad: 1},
	{Planes: 2, H: 6, W: 6, K: 5, Stride: 3, Pad: 2},
	{Planes: 1, H: 1, W: 3, K: 3, Stride: 1, Pad: 1},
}

// window calls f with the input index of each position of window (oy, ox)
// of plane p inside the plane (not on its padding), in row-major order.
func (s WindowShape) window(p, oy, ox int, f func(q, k int)) {
	for i := range s.K {
		for j := range s.K {
			y, z := oy*s.Stride+i-s.Pad, ox*s.Stride+j-s.Pad
			if y < 0 || y >= s.H || z < 0 || z >= s.W {
				continue
			}
			f(i*s.K+j, (p*s.H+y)*s.W+z)
		}
	}
}

// TestWindowPools checks max- and average pooling and their gradients
// against their definitions: the first maximum (or first NaN) and its
// position, the float64 mean, and gradients summed in float64.
func TestWindowPools(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, s := range append(windowShapes[:len(windowShapes):len(windowShapes)], paddedWindowShapes...) {
		for _, ties := range []bool{false, true} {
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
			wantMax, wantAvg := make([]float64, s.In()), make([]float64, s.In())
			o := 0
			for p := range s.Planes {
				for oy := range s.OH() {
					for ox := range s.OW() {
						best, at, sum := float32(math.Inf(-1)), -1, 0.0
						s.window(p, oy, ox, func(q, k int) {
							v := x[k]
							if at < 0 || v > best || math.IsNaN(float64(v)) && !math.IsNaN(float64(best)) {
								best, at = v, q
							}
							sum += float64(v)
							wantAvg[k] += float64(dy[o]) / float64(s.K*s.K)
						})
						if math.Float32bits(y[o]) != math.Float32bits(best) || int(arg[o]) != at {
							t.Fatalf("%s: max[%d] = %g at %d, want %g at %d", what, o, y[o], arg[o], best, at)
						}
						s.window(p, oy, ox, func(q, k int) {
							if q == at {
								wantMax[k] += float64(dy[o])
							}
						})
						if want := float32(sum / float64(s.K*s.K)); math.Float32bits(avg[o]) != math.Float32bits(want) && !math.IsNaN(float64(want)) {
							t.Fatalf("%s: avg[%d] = %g, want %g", what, o, avg[o], want)
						}
						o++
					}
				}
			}
			closeTo(t, what+" max dx", dxMax, wantMax, 1e-6)
			closeTo(t, what+" avg dx", dxAvg, wantAvg, 1e-6)
		}
	}
}

func TestGlobalAvgPoolAndAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	for _, tt := range []struct{ planes, plane int }{{1, 1}, {6, 64}, {5, 49}, {128, 16}} {
		x, dy := randSlice(rng, tt.planes*tt.plane), randSlice(rng, tt.planes)
		y, dx := make([]float32, tt.planes), make([]float32, len(x))
		GlobalAvgPool(y, x, tt.planes, tt.plane)
		GlobalAvgPoolBackward(dx, dy, tt.planes, tt.plane)
		for p := range tt.planes {
			var sum float64
			for _, v := range x[p*tt.plane : (p+1)*tt.plane] {
				sum += float64(v)
			}
			if want := float32(sum / float64(tt.plane)); y[p] != want {
				t.Fatalf("%v: y[%d] = %g, want %g", tt, p, y[p], want)
			}
			for i := p * tt.plane; i < (p+1)*tt.plane; i++ {
				if want := float32(float64(dy[p]) / float64(tt.plane)); dx[i] != want {
					t.Fatalf("%v: dx[%d] = %g, want %g", tt, i, dx[i], want)
				}
			}
		}
		a, b := randSlice(rng, len(x)), randSlice(rng, len(x))
		sum := make([]float32, len(x))
		Add(sum, a, b)
		for i := range sum {
			if sum[i] != a[i]+b[i] {
				t.Fatalf("Add: [%d] = %g, want %g", i, sum[i], a[i]+b[i])
			}
		}
	}
}

func TestWindowShapeValidate(t *testing.T) {
	tests := []struct {
		s  WindowShape
		ok bool
	}{
		{WindowShape{Planes: 1, H: 4, W: 4, K: 2, Stride: 2}, true},
		{WindowShape{Planes: 1, H: 4, W: 4, K: 2}, false},
		{WindowShape{Planes: 1, H: 4, W: 4, K: 5, Stride: 1}, false},
		{WindowShape{Planes: 1, H: 17, W: 17, K: 17, Stride: 1}, false},
		{WindowShape{Planes: 0, H: 4, W: 4, K: 2, Stride: 2}, false},
		{WindowShape{Planes: 1, H: 4, W: 4, K: 3, Stride: 2, Pad: 1}, true},
		{WindowShape{Planes: 1, H: 4, W: 4, K: 2, Stride: 2, Pad: 2}, false},
		{WindowShape{Planes: 1, H: 1, W: 1, K: 3, Stride: 1, Pad: 1}, true},
	}
	for _, tt := range tests {
		if err := tt.s.Validate(); (err == nil) != tt.ok {
			t.Errorf("%+v: Validate() = %v, want ok=%v", tt.s, err, tt.ok)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("MaxPool with a short output did not panic")
		}
	}()
	s := tests[0].s
	MaxPool(make([]float32, s.Out()-1), make([]uint8, s.Out()), make([]float32, s.In()), s)
}
