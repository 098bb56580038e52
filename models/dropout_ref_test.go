package models

import (
	"math"
	"testing"

	"github.com/gtstorm/gtstorm/data"
)

// A float64 reference of dropNet, with the masks of fillDropMask (the
// derivation under test is the bits; the products and the rest of the
// network are computed here independently of the graph).

// dropNet is a network of every layer this file's tests need: a padded
// convolution, ReLU, Dropout, padded max and average pooling, a dense
// layer with its ReLU, a second Dropout and a dense layer without bias.
func dropNet(p1, p2 float32) (Model, error) {
	n := NewNet("dropnet", []int{1, 6, 6}, 4)
	h := n.ReLU(n.Conv2D("c", n.Input(), Conv{Out: 3, Kernel: 3, Pad: 1, Bias: true}))
	h = n.Dropout(h, p1)             // layer 2
	h = n.MaxPoolPadded(h, 3, 2, 1)  // [3,3,3]
	h = n.AvgPoolPadded(h, 3, 1, 1)  // [3,3,3]
	h = n.ReLU(n.Dense("fc1", h, 6)) // layers 5, 6
	h = n.Dropout(h, p2)             // layer 7
	return n.Model(n.DenseNoBias("fc2", h, 4))
}

func mustDropNet(t testing.TB) Model {
	m, err := dropNet(0.4, 0.5)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// refDropNet is dropNet's batch-mean loss, with the masks of draw (none
// where draw is 0: evaluation).
func refDropNet(p1, p2 float32, draw uint64) refLoss {
	return func(m Model, p []float64, b data.Batch) float64 {
		ts := tensors(m, p) // c.w, c.b, fc1.w, fc1.b, fc2.w
		x, labels := refInputs(b)
		n := b.Len()
		h, _, _ := refConvSP(x, n, 1, 6, 6, ts[0], ts[1], 3, 3, 1, 1)
		h = refDrop(refRelu(h), draw, 2, p1)
		h = refPoolPad(h, n*3, 6, 3, 2, 1, true)
		h = refPoolPad(h, n*3, 3, 3, 1, 1, false)
		h = refDrop(refRelu(refDense(h, n, 27, ts[2], ts[3], 6)), draw, 7, p2)
		z := refDense(h, n, 6, ts[4], make([]float64, 4), 4)
		return refCrossEntropy(z, labels, 4)
	}
}

// refDrop multiplies x by layer's mask on the batch keyed draw.
func refDrop(x []float64, draw uint64, layer int, p float32) []float64 {
	if draw == 0 {
		return x
	}
	mask := make([]float32, len(x))
	fillDropMask(mask, draw, layer, p)
	for i := range x {
		x[i] *= float64(mask[i])
	}
	return x
}

// refPoolPad pools planes of side×side over k×k windows of the given
// stride and padding: the maximum of the in-plane values (max), or their
// sum over k² (the padding's zeros counted).
func refPoolPad(x []float64, planes, side, k, stride, pad int, max bool) []float64 {
	o := (side+2*pad-k)/stride + 1
	out := make([]float64, planes*o*o)
	for p := range planes {
		for i := range o {
			for j := range o {
				best, sum := math.Inf(-1), 0.0
				for u := range k {
					for v := range k {
						y, z := i*stride+u-pad, j*stride+v-pad
						if y < 0 || y >= side || z < 0 || z >= side {
							continue
						}
						best = math.Max(best, x[(p*side+y)*side+z])
						sum += x[(p*side+y)*side+z]
					}
				}
				if max {
					out[(p*o+i)*o+j] = best
				} else {
					out[(p*o+i)*o+j] = sum / float64(k*k)
				}
			}
		}
	}
	return out
}
