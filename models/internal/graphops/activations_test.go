package graphops

import "math"

// activationSpecs check LeakyReLU, Tanh and Sigmoid through small networks
// of them, run by TestLayersMatchFiniteDifferences and
// TestLayersProgramMatchesTapeMachine; they are not among netSpecs, whose
// bits layersDigest records.
var activationSpecs = []netSpec{
	{"leakyrelu", []int{3, 5, 5}, 3, func(b net, x any) any {
		h := b.leakyReLU("l1", b.conv(x, "c1", 4, 3, 1, 1), 0.1)
		h = b.leakyReLU("l2", b.bias(h, "c2"), -0.5) // a negative slope: the gradient reads x, not y
		return b.dense(b.globalAvgPool("gap", h), "fc", 3, false)
	}},
	{"tanh", []int{2, 6, 6}, 3, func(b net, x any) any {
		h := b.tanh("t1", b.conv(x, "c1", 4, 3, 1, 1))
		return b.dense(b.tanh("t2", b.dense(h, "fc1", 6, false)), "fc2", 3, false)
	}},
	{"sigmoid", []int{2, 6, 6}, 3, func(b net, x any) any {
		h := b.sigmoid("s1", b.conv(x, "c1", 4, 3, 1, 1))
		return b.dense(b.sigmoid("s2", b.dense(h, "fc1", 6, false)), "fc2", 3, false)
	}},
	{"mixed", []int{3, 6, 6}, 4, func(b net, x any) any { // x read by three activations
		h := b.add("sum", b.tanh("t", x), b.sigmoid("s", x))
		h = b.add("sum2", h, b.leakyReLU("l", x, 0.01))
		return b.dense(b.leakyReLU("l2", h, 0.2), "fc", 4, false)
	}},
}

func (b *graphNet) leakyReLU(name string, x any, alpha float32) any {
	return b.g.LeakyReLU(name, node(x), alpha)
}
func (b *graphNet) tanh(name string, x any) any    { return b.g.Tanh(name, node(x)) }
func (b *graphNet) sigmoid(name string, x any) any { return b.g.Sigmoid(name, node(x)) }

// elementwise returns f of each value of x.
func elementwise(x *t64, f func(float64) float64) *t64 {
	y := newT64(x.shape...)
	for i, v := range x.v {
		y.v[i] = f(v)
	}
	return y
}

func (r *refNet) leakyReLU(_ string, x any, alpha float32) any {
	return elementwise(t(x), func(v float64) float64 {
		if v > 0 {
			return v
		}
		return float64(alpha) * v
	})
}

func (r *refNet) tanh(_ string, x any) any { return elementwise(t(x), math.Tanh) }

func (r *refNet) sigmoid(_ string, x any) any {
	return elementwise(t(x), func(v float64) float64 { return 1 / (1 + math.Exp(-v)) })
}
