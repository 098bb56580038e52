package kernels

import (
	"fmt"
	"math"
)

// PoolShape describes 2×2, stride-2 max-pooling of Planes planes of H×W
// floats each (an NCHW batch has N·C planes). The output has H/2 × W/2
// elements per plane (rounded down: an odd last row or column is not
// pooled, as in PyTorch's max_pool2d).
type PoolShape struct {
	Planes, H, W int
}

// OH is the number of output rows per plane.
func (s PoolShape) OH() int { return s.H / 2 }

// OW is the number of output columns per plane.
func (s PoolShape) OW() int { return s.W / 2 }

// In is the number of input elements, Planes·H·W.
func (s PoolShape) In() int { return s.Planes * s.H * s.W }

// Out is the number of output elements, Planes·(H/2)·(W/2).
func (s PoolShape) Out() int { return s.Planes * s.OH() * s.OW() }

func (s PoolShape) check(op string, lens ...int) {
	if s.Planes < 0 || s.H < 0 || s.W < 0 {
		panic(fmt.Sprintf("kernels: %s: negative pool shape %+v", op, s))
	}
	want := []int{s.Out(), s.Out(), s.In()}
	for i, n := range lens {
		if n < want[i] {
			panic(fmt.Sprintf("kernels: %s: operand %d has %d elements, want ≥ %d for %+v", op, i, n, want[i], s))
		}
	}
}

// MaxPool2x2 pools x (s.In() elements) into y (s.Out()): each output is the
// maximum of its 2×2 window, the first one in the order (0,0), (0,1),
// (1,0), (1,1) on ties, and code records which (0–3) for the backward pass.
// It panics if a slice is too short.
func MaxPool2x2(y []float32, code []uint8, x []float32, s PoolShape) {
	s.check("MaxPool2x2", len(y), len(code), len(x))
	maxPool(use(), y, code, x, s, nil, 1, false)
}

// MaxPool2x2BiasReLU is MaxPool2x2 followed by adding bias[c] to the
// outputs of plane p (c = p mod len(bias), the channel of an NCHW plane)
// and, if relu, clamping them at zero. Max-pooling commutes with both (they
// are monotone), so this equals pooling relu(x + bias) — PyTorch's
// max_pool2d(relu(conv(x))) — at a quarter of the additions and clamps; the
// selected positions agree wherever the window's maximum is positive.
func MaxPool2x2BiasReLU(y []float32, code []uint8, x []float32, s PoolShape, bias []float32, relu bool) {
	s.check("MaxPool2x2BiasReLU", len(y), len(code), len(x))
	if len(bias) == 0 || s.Planes%len(bias) != 0 {
		panic(fmt.Sprintf("kernels: MaxPool2x2BiasReLU: %d planes are not a whole number of %d channels", s.Planes, len(bias)))
	}
	maxPool(use(), y, code, x, s, bias, len(bias), relu)
}

// MaxPool2x2Backward writes into dx (s.In() elements) the gradient of the
// pooling that produced code: dy[o] at the position code[o] selected in
// window o, zero elsewhere (including an odd last row or column).
func MaxPool2x2Backward(dx, dy []float32, code []uint8, s PoolShape) {
	s.check("MaxPool2x2Backward", len(dy), len(code), len(dx))
	maxPoolBackward(use(), dx, dy, nil, code, s, nil)
}

// MaxPool2x2BiasReLUBackward is the adjoint of MaxPool2x2BiasReLU given its
// output y: the gradient g = dy·[y > 0] (or dy if !relu) goes to dx at the
// selected positions, and Σ g over each channel's planes is added to dbias
// (accumulated in float64 across planes).
func MaxPool2x2BiasReLUBackward(dx, dbias, dy, y []float32, code []uint8, s PoolShape, relu bool) {
	s.check("MaxPool2x2BiasReLUBackward", len(dy), len(code), len(dx))
	if len(y) < s.Out() {
		panic(fmt.Sprintf("kernels: MaxPool2x2BiasReLUBackward: y has %d elements, want ≥ %d", len(y), s.Out()))
	}
	if len(dbias) == 0 || s.Planes%len(dbias) != 0 {
		panic(fmt.Sprintf("kernels: MaxPool2x2BiasReLUBackward: %d planes are not a whole number of %d channels", s.Planes, len(dbias)))
	}
	if !relu {
		y = nil
	}
	maxPoolBackward(use(), dx, dy, y, code, s, dbias)
}

func maxPool(ks *kernelSet, y []float32, code []uint8, x []float32, s PoolShape, bias []float32, nc int, relu bool) {
	oh, ow := s.OH(), s.OW()
	if oh == 0 || ow == 0 || s.Planes == 0 {
		return
	}
	lo := float32(math.Inf(-1))
	if relu {
		lo = 0
	}
	switch {
	case ks.isa == isaAVX512:
		maxpoolAsm(y, code, x, s, bias, lo)
		return
	case ks.isa == isaAVX2 && ow >= 4:
		maxpoolAVX2(y, code, x, s, bias, lo)
		return
	case ks.isa == isaNEON && ow >= 4:
		maxpoolNEON(y, code, x, s, bias, lo)
		return
	}
	in, out := s.H*s.W, oh*ow
	for p := range s.Planes {
		var b float32
		if bias != nil {
			b = bias[p%nc]
		}
		maxpoolPlaneGo(y[p*out:(p+1)*out], code[p*out:(p+1)*out], x[p*in:(p+1)*in], s.W, ow, b, lo)
	}
}

func maxpoolPlaneGo(y []float32, code []uint8, x []float32, w, ow int, bias, lo float32) {
	for oy := range len(y) / ow {
		r0 := x[2*oy*w:][:2*ow]
		r1 := x[(2*oy+1)*w:][:2*ow]
		yr := y[oy*ow:][:ow]
		cr := code[oy*ow:][:ow]
		for ox := range yr {
			best, c := r0[2*ox], uint8(0)
			if v := r0[2*ox+1]; v > best {
				best, c = v, 1
			}
			if v := r1[2*ox]; v > best {
				best, c = v, 2
			}
			if v := r1[2*ox+1]; v > best {
				best, c = v, 3
			}
			// As VMAXPS(t, lo): lo also when t is NaN (or t = −0, lo = +0).
			if t := best + bias; t > lo {
				yr[ox] = t
			} else {
				yr[ox] = lo
			}
			cr[ox] = c
		}
	}
}

func maxPoolBackward(ks *kernelSet, dx, dy, y []float32, code []uint8, s PoolShape, dbias []float32) {
	oh, ow := s.OH(), s.OW()
	in, out := s.H*s.W, oh*ow
	if oh == 0 || ow == 0 {
		clear(dx[:s.In()])
		return
	}
	var acc [64]float64
	var sums []float64
	if dbias != nil {
		if len(dbias) <= len(acc) {
			sums = acc[:len(dbias)]
		} else {
			sums = make([]float64, len(dbias))
		}
	}
	if ks.isa == isaAVX512 && s.Planes > 0 {
		maxpoolBackAsm(dx, dy, y, code, s, sums)
	} else if ks.isa == isaAVX2 && s.Planes > 0 && ow >= 4 {
		maxpoolBackAVX2(dx, dy, y, code, s, sums)
	} else if ks.isa == isaNEON && s.Planes > 0 && ow >= 4 {
		maxpoolBackNEON(dx, dy, y, code, s, sums)
	} else {
		for p := range s.Planes {
			var yp []float32
			if y != nil {
				yp = y[p*out : (p+1)*out]
			}
			sum := maxpoolBackPlaneGo(dx[p*in:(p+1)*in], dy[p*out:(p+1)*out], yp, code[p*out:(p+1)*out], s.W, ow)
			if sums != nil {
				sums[p%len(sums)] += float64(sum)
			}
		}
	}
	if s.W%2 == 1 || s.H%2 == 1 {
		for p := range s.Planes {
			plane := dx[p*in : (p+1)*in]
			if s.W%2 == 1 {
				for r := range 2 * oh {
					plane[r*s.W+s.W-1] = 0
				}
			}
			if s.H%2 == 1 {
				clear(plane[(s.H-1)*s.W:])
			}
		}
	}
	for c, v := range sums {
		dbias[c] += float32(v)
	}
}

// maxpoolBackPlaneGo writes one plane's input gradient and returns the sum
// of its gated gradients, summed as the vector kernels do: in 16 lanes,
// output ox of every row going to lane ox mod 16 (a row's last, partial
// chunk adds exact zeros in its other lanes), folded as foldLanes does.
func maxpoolBackPlaneGo(dx, dy, y []float32, code []uint8, w, ow int) float32 {
	var lane [dotLanes]float32
	for oy := range len(dy) / ow {
		d0 := dx[2*oy*w:][:2*ow]
		d1 := dx[(2*oy+1)*w:][:2*ow]
		gr := dy[oy*ow:][:ow]
		cr := code[oy*ow:][:ow]
		var yr []float32
		if y != nil {
			yr = y[oy*ow:][:ow]
		}
		for ox, g := range gr {
			if yr != nil && !(yr[ox] > 0) {
				g = 0
			}
			lane[ox%dotLanes] += g
			var g0, g1, g2, g3 float32
			switch cr[ox] {
			case 0:
				g0 = g
			case 1:
				g1 = g
			case 2:
				g2 = g
			default:
				g3 = g
			}
			d0[2*ox], d0[2*ox+1], d1[2*ox], d1[2*ox+1] = g0, g1, g2, g3
		}
		for l := ow % dotLanes; l > 0 && l < dotLanes; l++ {
			lane[l] += 0 // the dead lanes of the last chunk: turns −0 into +0
		}
	}
	return foldLanes(&lane)
}
