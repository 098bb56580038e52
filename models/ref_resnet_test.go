package models

import (
	"math"

	"github.com/gtstorm/gtstorm/data"
)

// A float64 reference of SPEC §12's networks, written from the SPEC's
// text rather than from their Net descriptions: the graphs' losses must
// match it, and central differences of it check their gradients.

// refConvSP is a cross-correlation of x [n,c,h,w] with w [k,c,kk,kk] of
// the given stride and zero padding, plus bias [k] when bias is not nil.
func refConvSP(x []float64, n, c, h, wd int, w, bias []float64, k, kk, stride, pad int) ([]float64, int, int) {
	oh, ow := (h+2*pad-kk)/stride+1, (wd+2*pad-kk)/stride+1
	out := make([]float64, n*k*oh*ow)
	for b := range n {
		for o := range k {
			for i := range oh {
				for j := range ow {
					var s float64
					if bias != nil {
						s = bias[o]
					}
					for ci := range c {
						for u := range kk {
							for v := range kk {
								y, z := i*stride+u-pad, j*stride+v-pad
								if y < 0 || y >= h || z < 0 || z >= wd {
									continue
								}
								s += x[((b*c+ci)*h+y)*wd+z] * w[((o*c+ci)*kk+u)*kk+v]
							}
						}
					}
					out[((b*k+o)*oh+i)*ow+j] = s
				}
			}
		}
	}
	return out, oh, ow
}

// refGroupNorm normalises x [n,c,hw] over groups of c/groups channels per
// sample (biased variance, ε 1e-5), then scales and shifts each channel.
func refGroupNorm(x []float64, n, c, hw, groups int, gamma, beta []float64) []float64 {
	out := make([]float64, len(x))
	size := c / groups * hw
	for b := range n {
		for g := range groups {
			lo := (b*c + g*c/groups) * hw
			var mean, vr float64
			for _, v := range x[lo : lo+size] {
				mean += v
			}
			mean /= float64(size)
			for _, v := range x[lo : lo+size] {
				vr += (v - mean) * (v - mean)
			}
			vr /= float64(size)
			inv := 1 / math.Sqrt(vr+1e-5)
			for k := range size {
				ch := g*c/groups + k/hw
				out[lo+k] = (x[lo+k]-mean)*inv*gamma[ch] + beta[ch]
			}
		}
	}
	return out
}

// refMaxPool2 is a 2×2 stride-2 max-pool of x [n,c,h,w], rounding down.
func refMaxPool2(x []float64, n, c, h, w int) ([]float64, int, int) {
	oh, ow := h/2, w/2
	out := make([]float64, n*c*oh*ow)
	for p := range n * c {
		for i := range oh {
			for j := range ow {
				m := math.Inf(-1)
				for u := range 2 {
					for v := range 2 {
						m = math.Max(m, x[(p*h+2*i+u)*w+2*j+v])
					}
				}
				out[(p*oh+i)*ow+j] = m
			}
		}
	}
	return out, oh, ow
}

// refResNetGN is the batch-mean loss of SPEC §12's ResNet-GN of any depth
// on any image shape, reading the parameter tensors in the order the
// SPEC's text lists the layers.
func refResNetGN(m Model, p []float64, b data.Batch) float64 {
	w := tensors(m, p)
	next := func() []float64 { t := w[0]; w = w[1:]; return t }
	x, labels := refInputs(b)
	n, s, classes := b.Len(), b.Data.Shape, m.(*classifier).classes
	c, h, wd := s[0], s[1], s[2]
	convGN := func(x []float64, c, h, wd, out, stride, k int) ([]float64, int, int) {
		y, oh, ow := refConvSP(x, n, c, h, wd, next(), nil, out, k, stride, (k-1)/2)
		return refGroupNorm(y, n, out, oh*ow, 2, next(), next()), oh, ow
	}
	x, h, wd = convGN(x, c, h, wd, 16, 1, 3)
	x, c = refRelu(x), 16
	depth, _, _ := resNetDepth(m.Name())
	for stage, width := range []int{16, 32, 64} {
		for blk := range (depth - 2) / 6 {
			stride := 1
			if stage > 0 && blk == 0 {
				stride = 2
			}
			y, oh, ow := convGN(x, c, h, wd, width, stride, 3)
			y, _, _ = convGN(refRelu(y), width, oh, ow, width, 1, 3)
			short := x
			if stride != 1 || c != width {
				short, _, _ = convGN(x, c, h, wd, width, stride, 1)
			}
			for i := range y {
				y[i] += short[i]
			}
			x, c, h, wd = refRelu(y), width, oh, ow
		}
	}
	pooled := make([]float64, n*c)
	for i := range pooled {
		for _, v := range x[i*h*wd : (i+1)*h*wd] {
			pooled[i] += v
		}
		pooled[i] /= float64(h * wd)
	}
	return refCrossEntropy(refDense(pooled, n, c, next(), next(), classes), labels, classes)
}

// refFedAvgCNN is the batch-mean loss of SPEC §12's FedAvg CNN.
func refFedAvgCNN(m Model, p []float64, b data.Batch) float64 {
	w := tensors(m, p)
	x, labels := refInputs(b)
	n, s, classes := b.Len(), b.Data.Shape, m.(*classifier).classes
	h, oh, ow := refConvSP(x, n, s[0], s[1], s[2], w[0], w[1], 32, 5, 1, 2)
	h, oh, ow = refMaxPool2(refRelu(h), n, 32, oh, ow)
	h, oh, ow = refConvSP(h, n, 32, oh, ow, w[2], w[3], 64, 5, 1, 2)
	h, oh, ow = refMaxPool2(refRelu(h), n, 64, oh, ow)
	h = refRelu(refDense(h, n, 64*oh*ow, w[4], w[5], 512))
	return refCrossEntropy(refDense(h, n, 512, w[6], w[7], classes), labels, classes)
}
