package models

import (
	"math"

	"github.com/gtstorm/gtstorm/data"
)

// A float64 reference implementation of the three models, written
// independently of Gorgonia: the graphs' losses must match it, and central
// finite differences of it (exact enough in float64 with a tiny step) check
// the graphs' gradients.

// refConv is a valid stride-1 cross-correlation of x [n,c,h,w] with
// w [k,c,kh,kw] plus bias [k].
func refConv(x []float64, n, c, h, wd int, w, bias []float64, k, kh, kw int) ([]float64, int, int) {
	oh, ow := h-kh+1, wd-kw+1
	out := make([]float64, n*k*oh*ow)
	for b := 0; b < n; b++ {
		for o := 0; o < k; o++ {
			for i := 0; i < oh; i++ {
				for j := 0; j < ow; j++ {
					s := bias[o]
					for ci := 0; ci < c; ci++ {
						for u := 0; u < kh; u++ {
							for v := 0; v < kw; v++ {
								s += x[((b*c+ci)*h+i+u)*wd+j+v] * w[((o*c+ci)*kh+u)*kw+v]
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

func refRelu(x []float64) []float64 {
	for i, v := range x {
		x[i] = math.Max(v, 0)
	}
	return x
}

// refPool is a 2×2 stride-2 max-pool of x [n,c,h,w] (h, w even).
func refPool(x []float64, n, c, h, w int) ([]float64, int, int) {
	oh, ow := h/2, w/2
	out := make([]float64, n*c*oh*ow)
	for p := 0; p < n*c; p++ {
		for i := 0; i < oh; i++ {
			for j := 0; j < ow; j++ {
				m := math.Inf(-1)
				for u := 0; u < 2; u++ {
					for v := 0; v < 2; v++ {
						m = math.Max(m, x[(p*h+2*i+u)*w+2*j+v])
					}
				}
				out[(p*oh+i)*ow+j] = m
			}
		}
	}
	return out, oh, ow
}

// refDense is x·w + bias for x [n,in], w [in,out].
func refDense(x []float64, n, in int, w, bias []float64, out int) []float64 {
	y := make([]float64, n*out)
	for b := 0; b < n; b++ {
		for o := 0; o < out; o++ {
			s := bias[o]
			for i := 0; i < in; i++ {
				s += x[b*in+i] * w[i*out+o]
			}
			y[b*out+o] = s
		}
	}
	return y
}

// refCrossEntropy is the mean softmax cross-entropy of logits [n,classes].
func refCrossEntropy(z []float64, labels []int, classes int) float64 {
	var loss float64
	for b, l := range labels {
		row := z[b*classes : (b+1)*classes]
		hi := math.Inf(-1)
		for _, v := range row {
			hi = math.Max(hi, v)
		}
		var s float64
		for _, v := range row {
			s += math.Exp(v - hi)
		}
		loss += hi + math.Log(s) - row[l]
	}
	return loss / float64(len(labels))
}

// refInputs returns the batch's dense features in float64 and its labels.
func refInputs(b data.Batch) ([]float64, []int) {
	dim := b.Data.Dim()
	x := make([]float64, b.Len()*dim)
	buf := make([]float32, dim)
	labels := make([]int, b.Len())
	for k, i := range b.Index {
		b.Data.Dense(i, buf)
		for j, v := range buf {
			x[k*dim+j] = float64(v)
		}
		labels[k] = int(b.Data.Labels[i])
	}
	return x, labels
}

// tensors splits a flat float64 vector by the model's parameter layout.
func tensors(m Model, p []float64) [][]float64 {
	var out [][]float64
	for _, t := range m.Params() {
		out = append(out, p[t.Offset:t.Offset+t.Size()])
	}
	return out
}

// refMNIST is the MNIST CNN's batch-mean loss.
func refMNIST(m Model, p []float64, b data.Batch) float64 {
	w := tensors(m, p)
	x, labels := refInputs(b)
	n := b.Len()
	h, oh, ow := refConv(x, n, 1, 28, 28, w[0], w[1], 16, 5, 5)
	h, oh, ow = refPool(refRelu(h), n, 16, oh, ow)
	h, oh, ow = refConv(h, n, 16, oh, ow, w[2], w[3], 32, 5, 5)
	h, _, _ = refPool(refRelu(h), n, 32, oh, ow)
	return refCrossEntropy(refDense(h, n, 512, w[4], w[5], 10), labels, 10)
}

// refCIFAR is the CIFAR CNN's batch-mean loss.
func refCIFAR(m Model, p []float64, b data.Batch) float64 {
	w := tensors(m, p)
	x, labels := refInputs(b)
	n := b.Len()
	h, oh, ow := refConv(x, n, 3, 32, 32, w[0], w[1], 6, 5, 5)
	h, oh, ow = refPool(refRelu(h), n, 6, oh, ow)
	h, oh, ow = refConv(h, n, 6, oh, ow, w[2], w[3], 16, 5, 5)
	h, _, _ = refPool(refRelu(h), n, 16, oh, ow)
	h = refRelu(refDense(h, n, 400, w[4], w[5], 120))
	h = refRelu(refDense(h, n, 120, w[6], w[7], 84))
	return refCrossEntropy(refDense(h, n, 84, w[8], w[9], 10), labels, 10)
}

// refLogReg is the non-convex logistic regression's batch-mean loss:
// mean BCE of σ(xᵀζ) plus α Σ ζ²/(1+ζ²).
func refLogReg(alpha float64) func(m Model, p []float64, b data.Batch) float64 {
	return func(m Model, p []float64, b data.Batch) float64 {
		x, labels := refInputs(b)
		d := len(p)
		var loss float64
		for k, l := range labels {
			var z float64
			for j := 0; j < d; j++ {
				z += x[k*d+j] * p[j]
			}
			// −[y log σ(z) + (1−y) log(1−σ(z))] = log(1+e^z) − y z
			loss += math.Log1p(math.Exp(-math.Abs(z))) + math.Max(z, 0) - float64(l)*z
		}
		loss /= float64(len(labels))
		for _, v := range p {
			loss += alpha * v * v / (1 + v*v)
		}
		return loss
	}
}
