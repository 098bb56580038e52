package kernels

// The pooling kernels of a padded (or Ceil) WindowShape: each window is
// clipped to the plane, in the same row-major window order as the unpadded
// kernels.

// clip returns the rows [i0,i1) of a window at padded offset o (o = out·
// stride − pad) that fall inside a side of size n.
func clip(o, k, n int) (i0, i1 int) {
	return max(0, -o), min(k, n-o)
}

// maxPoolPadded is MaxPool over windows clipped to the plane (padding −∞,
// never selected; PyTorch's 2·pad ≤ K leaves every window a value). arg
// records the position i·K + j within the unclipped window.
func maxPoolPadded(y []float32, arg []uint8, x []float32, s WindowShape) {
	oh, ow, in := s.OH(), s.OW(), s.H*s.W
	o := 0
	for p := range s.Planes {
		plane := x[p*in : (p+1)*in]
		for oy := range oh {
			r := oy*s.Stride - s.Pad
			i0, i1 := clip(r, s.K, s.H)
			for ox := range ow {
				c := ox*s.Stride - s.Pad
				j0, j1 := clip(c, s.K, s.W)
				best, at := plane[(r+i0)*s.W+c+j0], i0*s.K+j0
				for i := i0; i < i1; i++ {
					row := plane[(r+i)*s.W:]
					for j := j0; j < j1; j++ {
						if v := row[c+j]; v > best || v != v && best == best {
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

// maxPoolPaddedBackward adds each dy[o] into dx (cleared by the caller) at
// the position window o selected, outputs in order.
func maxPoolPaddedBackward(dx, dy []float32, arg []uint8, s WindowShape) {
	oh, ow, in := s.OH(), s.OW(), s.H*s.W
	o := 0
	for p := range s.Planes {
		plane := dx[p*in : (p+1)*in]
		for oy := range oh {
			for ox := range ow {
				a := int(arg[o])
				plane[(oy*s.Stride-s.Pad+a/s.K)*s.W+ox*s.Stride-s.Pad+a%s.K] += dy[o]
				o++
			}
		}
	}
}

// avgPoolPadded is AvgPool over zero-padded planes: the in-plane values of
// each window summed in float64 in row-major order and divided by K·K
// (the padding's zeros count, PyTorch's count_include_pad=True). With
// backward it is instead AvgPoolBackward's scatter, into a (dx, cleared by
// the caller) from b (dy): dy[o]/(K·K), rounded once, added to the
// window's in-plane positions, outputs in order. With s.ExcludePad the
// divisor is instead the window's count of in-plane values
// (count_include_pad=False), and with s.Ceil (without ExcludePad) the
// window's rows and columns up to the trailing padding's end (ceilDivisor).
func avgPoolPadded(a, b []float32, s WindowShape, backward bool) {
	oh, ow, in := s.OH(), s.OW(), s.H*s.W
	n := float64(s.K * s.K)
	o := 0
	for p := range s.Planes {
		for oy := range oh {
			r := oy*s.Stride - s.Pad
			i0, i1 := clip(r, s.K, s.H)
			for ox := range ow {
				c := ox*s.Stride - s.Pad
				j0, j1 := clip(c, s.K, s.W)
				if s.ExcludePad {
					n = float64((i1 - i0) * (j1 - j0))
				} else if s.Ceil {
					n = float64(ceilDivisor(r, s.K, s.H, s.Pad) * ceilDivisor(c, s.K, s.W, s.Pad))
				}
				if backward {
					g := float32(float64(b[o]) / n)
					plane := a[p*in : (p+1)*in]
					for i := i0; i < i1; i++ {
						row := plane[(r+i)*s.W:]
						for j := j0; j < j1; j++ {
							row[c+j] += g
						}
					}
				} else {
					plane := b[p*in : (p+1)*in]
					var sum float64
					for i := i0; i < i1; i++ {
						for _, v := range plane[(r+i)*s.W+c+j0 : (r+i)*s.W+c+j1] {
							sum += float64(v)
						}
					}
					a[o] = float32(sum / n)
				}
				o++
			}
		}
	}
}
