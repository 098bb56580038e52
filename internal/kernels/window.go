package kernels

import "fmt"

// WindowShape describes k×k pooling with stride Stride of Planes planes of
// H×W floats each (an NCHW batch has N·C planes), each plane padded with
// Pad on every side: output plane o×o' = ((H+2·Pad−K)/Stride+1)×
// ((W+2·Pad−K)/Stride+1), rounded down as PyTorch's MaxPool2d and
// AvgPool2d (ceil_mode=False) do, or up with Ceil. Windows overlap when
// Stride < K. The
// pooling kernels of this shape are pure Go, the same on every kernel set.
type WindowShape struct {
	Planes, H, W int
	K, Stride    int // window side (at most 16) and step
	// Pad is the padding on every side, at most K/2 as in PyTorch: −∞ for
	// MaxPool (never selected), zeros that count in AvgPool's divisor K·K
	// (PyTorch's count_include_pad=True).
	Pad int
	// ExcludePad makes a padded AvgPool divide each window by the number
	// of its in-plane values instead of K·K (PyTorch's
	// count_include_pad=False). MaxPool ignores it.
	ExcludePad bool
	// Ceil rounds the output size up (PyTorch's ceil_mode=True): a last
	// window that starts inside the plane or its leading padding is kept,
	// clipped at the trailing padding's end (see ceilSide).
	Ceil bool
}

// OH is the number of output rows per plane.
func (s WindowShape) OH() int {
	if s.Ceil {
		return ceilSide(s.H, s.K, s.Stride, s.Pad)
	}
	return (s.H+2*s.Pad-s.K)/s.Stride + 1
}

// OW is the number of output columns per plane.
func (s WindowShape) OW() int {
	if s.Ceil {
		return ceilSide(s.W, s.K, s.Stride, s.Pad)
	}
	return (s.W+2*s.Pad-s.K)/s.Stride + 1
}

// In is the number of input elements, Planes·H·W.
func (s WindowShape) In() int { return s.Planes * s.H * s.W }

// Out is the number of output elements, Planes·OH·OW.
func (s WindowShape) Out() int { return s.Planes * s.OH() * s.OW() }

// Validate reports whether s describes a pooling with a non-empty output
// whose argmax fits a byte (K ≤ 16).
func (s WindowShape) Validate() error {
	if s.Planes < 1 || s.K < 1 || s.K > 16 || s.Stride < 1 || s.Pad < 0 || 2*s.Pad > s.K {
		return fmt.Errorf("pool shape %+v: want planes ≥ 1, 1 ≤ K ≤ 16, stride ≥ 1 and 0 ≤ 2·pad ≤ K", s)
	}
	if s.K > s.H+2*s.Pad || s.K > s.W+2*s.Pad {
		return fmt.Errorf("pool shape %+v: window %d×%d larger than the %d×%d plane", s, s.K, s.K, s.H, s.W)
	}
	return nil
}

// check panics if s is invalid or an operand is shorter than its want
// (given as out, out… for output-sized and in for input-sized operands).
func (s WindowShape) check(op string, lens ...[2]int) {
	if err := s.Validate(); err != nil {
		panic("kernels: " + op + ": " + err.Error())
	}
	for i, l := range lens {
		if l[0] < l[1] {
			panic(fmt.Sprintf("kernels: %s: operand %d has %d elements, want ≥ %d for %+v", op, i, l[0], l[1], s))
		}
	}
}

// MaxPool pools x (s.In() elements) into y (s.Out()): each output is the
// maximum of its window, the first one in row-major window order on ties,
// or the window's first NaN (PyTorch's max_pool2d propagates NaN). arg
// records the position (i·K + j) of the one selected, for the backward
// pass. It panics if s is invalid or a slice is too short.
func MaxPool(y []float32, arg []uint8, x []float32, s WindowShape) {
	s.check("MaxPool", [2]int{len(y), s.Out()}, [2]int{len(arg), s.Out()}, [2]int{len(x), s.In()})
	if s.Pad > 0 || s.Ceil {
		maxPoolPadded(y, arg, x, s)
		return
	}
	oh, ow, in := s.OH(), s.OW(), s.H*s.W
	o := 0
	for p := range s.Planes {
		plane := x[p*in : (p+1)*in]
		for oy := range oh {
			for ox := range ow {
				win := plane[oy*s.Stride*s.W+ox*s.Stride:]
				best, at := win[0], 0
				for i := range s.K {
					row := win[i*s.W:][:s.K]
					for j, v := range row {
						if v > best || v != v && best == best {
							best, at = v, i*s.K+j
						}
					}
				}
				y[o], arg[o] = best, uint8(at)
				o++
			}
		}
	}
}

// MaxPoolBackward writes into dx (s.In() elements) the gradient of the
// pooling that recorded arg: each dy[o] added at the position its window
// selected, outputs in order (overlapping windows add in that fixed order),
// zero elsewhere.
func MaxPoolBackward(dx, dy []float32, arg []uint8, s WindowShape) {
	s.check("MaxPoolBackward", [2]int{len(dy), s.Out()}, [2]int{len(arg), s.Out()}, [2]int{len(dx), s.In()})
	oh, ow, in := s.OH(), s.OW(), s.H*s.W
	clear(dx[:s.In()])
	if s.Pad > 0 || s.Ceil {
		maxPoolPaddedBackward(dx, dy, arg, s)
		return
	}
	o := 0
	for p := range s.Planes {
		plane := dx[p*in : (p+1)*in]
		for oy := range oh {
			for ox := range ow {
				a := int(arg[o])
				plane[(oy*s.Stride+a/s.K)*s.W+ox*s.Stride+a%s.K] += dy[o]
				o++
			}
		}
	}
}

// AvgPool pools x (s.In() elements) into y (s.Out()): each output is the
// mean of its K·K values, summed in float64 in row-major window order and
// divided by K·K before rounding to float32.
func AvgPool(y, x []float32, s WindowShape) {
	s.check("AvgPool", [2]int{len(y), s.Out()}, [2]int{len(x), s.In()})
	if s.Pad > 0 || s.Ceil {
		avgPoolPadded(y, x, s, false)
		return
	}
	oh, ow, in := s.OH(), s.OW(), s.H*s.W
	n := float64(s.K * s.K)
	o := 0
	for p := range s.Planes {
		plane := x[p*in : (p+1)*in]
		for oy := range oh {
			for ox := range ow {
				win := plane[oy*s.Stride*s.W+ox*s.Stride:]
				var sum float64
				for i := range s.K {
					for _, v := range win[i*s.W:][:s.K] {
						sum += float64(v)
					}
				}
				y[o] = float32(sum / n)
				o++
			}
		}
	}
}

// AvgPoolBackward writes into dx (s.In() elements) the gradient of AvgPool:
// dy[o]/(K·K) (rounded to float32 once) added to each position of window o,
// outputs in order, zero where no window reaches.
func AvgPoolBackward(dx, dy []float32, s WindowShape) {
	s.check("AvgPoolBackward", [2]int{len(dy), s.Out()}, [2]int{len(dx), s.In()})
	oh, ow, in := s.OH(), s.OW(), s.H*s.W
	n := float64(s.K * s.K)
	clear(dx[:s.In()])
	if s.Pad > 0 || s.Ceil {
		avgPoolPadded(dx, dy, s, true)
		return
	}
	o := 0
	for p := range s.Planes {
		plane := dx[p*in : (p+1)*in]
		for oy := range oh {
			for ox := range ow {
				g := float32(float64(dy[o]) / n)
				win := plane[oy*s.Stride*s.W+ox*s.Stride:]
				for i := range s.K {
					row := win[i*s.W:][:s.K]
					for j := range row {
						row[j] += g
					}
				}
				o++
			}
		}
	}
}

// GlobalAvgPool sets y[p] to the mean of plane p of x (planes of plane
// elements each): summed in float64 in order, divided by plane, then
// rounded to float32.
func GlobalAvgPool(y, x []float32, planes, plane int) {
	if plane < 1 || len(y) < planes || len(x) < planes*plane {
		panic(fmt.Sprintf("kernels: GlobalAvgPool: %d outputs and %d inputs for %d planes of %d", len(y), len(x), planes, plane))
	}
	for p := range planes {
		var sum float64
		for _, v := range x[p*plane : (p+1)*plane] {
			sum += float64(v)
		}
		y[p] = float32(sum / float64(plane))
	}
}

// GlobalAvgPoolBackward sets every element of plane p of dx to
// dy[p]/plane, rounded to float32.
func GlobalAvgPoolBackward(dx, dy []float32, planes, plane int) {
	if plane < 1 || len(dy) < planes || len(dx) < planes*plane {
		panic(fmt.Sprintf("kernels: GlobalAvgPoolBackward: %d outputs and %d inputs for %d planes of %d", len(dy), len(dx), planes, plane))
	}
	for p := range planes {
		g := float32(float64(dy[p]) / float64(plane))
		d := dx[p*plane : (p+1)*plane]
		for i := range d {
			d[i] = g
		}
	}
}

// Add sets y = a + b elementwise (float32 additions, as Gorgonia's Add);
// y may be a or b.
func Add(y, a, b []float32) {
	if len(a) != len(b) || len(y) < len(a) {
		panic(fmt.Sprintf("kernels: Add: %d + %d values into %d", len(a), len(b), len(y)))
	}
	addSet(use(), y, a, b)
}

func addSet(ks *kernelSet, y, a, b []float32) {
	y = y[:len(a)]
	b = b[:len(a)]
	i := 0
	if n := len(a) &^ 7; n > 0 && elementwiseAsm(ks) {
		addAVX2(&y[0], &a[0], &b[0], n)
		i = n
	}
	for ; i < len(a); i++ {
		y[i] = a[i] + b[i]
	}
}
