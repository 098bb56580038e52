package graphops

import (
	"math"
	"runtime"
	"slices"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
)

// joinSpecs check Concat, ChannelConst, Sub, Mul, L2Normalize and LRN through small networks of them,
// run by TestLayersMatchFiniteDifferences and
// TestLayersProgramMatchesTapeMachine; their bits are joinDigest's, not
// layersDigest's.
var joinSpecs = []netSpec{
	{"concat-maps", []int{3, 6, 6}, 3, func(b net, x any) any { // x read by three ops, one of them the concat
		a := b.relu("ra", b.conv(x, "a", 4, 3, 1, 1))
		c := b.conv(x, "c", 2, 1, 1, 0)
		h := b.concat("cat", a, c, x) // 4 + 2 + 3 channels
		h = b.relu("r", b.groupNorm(h, "n", 3))
		h = b.concat("cat2", h, b.conv(h, "d", 5, 3, 2, 1)) // 9 maps of 6×6 and 5 of 3×3: read flat
		return b.dense(h, "fc", 3, false)
	}},
	{"concat-flat", []int{2, 4, 4}, 4, func(b net, x any) any {
		d1 := b.dense(x, "d1", 5, true)
		d2 := b.dense(x, "d2", 3, false)
		h := b.concat("cat", d1, d2, d1) // [n,5], [n,3] and [n,5] again: d1 read twice
		return b.dense(b.tanh("t", h), "fc", 4, false)
	}},
	{"channel-constants", []int{3, 5, 5}, 3, func(b net, x any) any {
		h := b.chanConst("sub", x, ConstSub, []float32{0.4914, 0.4822, 0.4465})
		h = b.chanConst("div", h, ConstDiv, []float32{0.2470, 0.2435, 0.2616})
		h = b.conv(h, "c", 4, 3, 1, 1)
		h = b.chanConst("mul", h, ConstMul, []float32{-1.5})
		h = b.chanConst("add", h, ConstAdd, []float32{0.25, -0.5, 1, 0})
		h = b.dense(b.relu("r", h), "d", 6, false)
		h = b.chanConst("div2", h, ConstDiv, []float32{2, -0.5, 3, 1.25, 0.75, 4}) // per feature of [n,6]
		h = b.chanConst("mul2", h, ConstMul, []float32{0.5, 1, 2, -1, 1.5, 3})
		return b.dense(b.chanConst("sub2", h, ConstSub, []float32{0.125}), "fc", 3, false)
	}},
	{"sub-branches", []int{2, 4, 4}, 3, func(b net, x any) any { // PoolFormer's pool(y) − y, y read by both
		y := b.conv(x, "c", 3, 3, 1, 1)
		h := b.(subber).sub("mix", b.relu("r", b.conv(y, "d", 3, 1, 1, 0)), y)
		h = b.(subber).sub("mix2", x, b.conv(h, "e", 2, 3, 1, 1)) // the graph's input minus a branch
		return b.dense(h, "fc", 3, false)
	}},
	{"mul-branches", []int{2, 4, 4}, 3, func(b net, x any) any { // gMLP's u ⊙ v, a GLU, a square
		u := b.conv(x, "u", 3, 3, 1, 1)
		h := b.(subber).mul("gate", b.tanh("t", u), b.conv(x, "v", 3, 1, 1, 0))
		h = b.(subber).mul("sq", h, h)                                       // one tensor, both factors
		h = b.(subber).mul("in", x, b.conv(b.relu("r", h), "w", 2, 3, 1, 1)) // the graph's input times a branch
		return b.dense(h, "fc", 3, false)
	}},
	{"l2-normalize", []int{2, 3, 3}, 3, func(b net, x any) any { // a cosine classifier: F.normalize of the features, then a Linear
		h := b.(subber).l2Normalize("n", b.dense(x, "d", 5, true), 1e-12)
		h = b.(subber).l2Normalize("n2", b.dense(h, "e", 4, true), 1e-6)
		h = b.(subber).l2Normalize("n3", b.dense(h, "g", 4, true), 1) // ε above the norms: clipped
		return b.dense(h, "fc", 3, false)
	}},
	{"lrn", []int{2, 4, 4}, 3, func(b net, x any) any { // the TensorFlow tutorial's CNN: LRN after ReLU, windows odd and even
		h := b.(subber).lrn("n1", b.relu("r", b.conv(x, "c", 5, 3, 1, 1)), 3, 0.5, 0.75, 1)
		h = b.(subber).lrn("n2", b.conv(h, "d", 6, 3, 1, 1), 4, 0.8, 0.6, 2)
		return b.dense(h, "fc", 3, false)
	}},
}

// subber is the test networks' Sub, outside net so that the interface
// other tests extend stays as it is.
type subber interface {
	sub(name string, a, b any) any
	mul(name string, a, b any) any
	l2Normalize(name string, x any, eps float64) any
	lrn(name string, x any, size int, alpha, beta, k float64) any
}

func (b *graphNet) lrn(name string, x any, size int, alpha, beta, k float64) any {
	return b.g.LRN(name, node(x), size, alpha, beta, k)
}

func (r *refNet) lrn(_ string, xa any, size int, alpha, beta, k float64) any {
	x := t(xa)
	y := newT64(x.shape...)
	c := x.shape[1]
	plane := len(x.v) / x.shape[0] / c
	for i, v := range x.v {
		ch, base := i/plane%c, i-(i/plane%c)*plane
		var sq float64
		for w := max(ch-size/2, 0); w <= min(ch+(size-1)/2, c-1); w++ {
			sq += x.v[base+w*plane] * x.v[base+w*plane]
		}
		y.v[i] = v / math.Pow(k+alpha*sq/float64(size), beta)
	}
	return y
}

func (b *graphNet) l2Normalize(name string, x any, eps float64) any {
	return b.g.L2Normalize(name, node(x), eps)
}

func (r *refNet) l2Normalize(_ string, xa any, eps float64) any {
	x := t(xa)
	y := newT64(x.shape...)
	f := len(x.v) / x.shape[0]
	for s := range x.shape[0] {
		var sq float64
		for _, v := range x.v[s*f : (s+1)*f] {
			sq += v * v
		}
		m := math.Max(math.Sqrt(sq), eps)
		for i := s * f; i < (s+1)*f; i++ {
			y.v[i] = x.v[i] / m
		}
	}
	return y
}

func (b *graphNet) sub(name string, x, y any) any { return b.g.Sub(name, node(x), node(y)) }

func (b *graphNet) mul(name string, x, y any) any { return b.g.Mul(name, node(x), node(y)) }

func (r *refNet) mul(_ string, a, b any) any {
	y := newT64(t(a).shape...)
	for i := range y.v {
		y.v[i] = t(a).v[i] * t(b).v[i]
	}
	return y
}

func (r *refNet) sub(_ string, a, b any) any {
	y := newT64(t(a).shape...)
	for i := range y.v {
		y.v[i] = t(a).v[i] - t(b).v[i]
	}
	return y
}

func (b *graphNet) concat(name string, xs ...any) any {
	nodes := make([]*G.Node, len(xs))
	for i, x := range xs {
		nodes[i] = node(x)
	}
	return b.g.Concat(name, nodes...)
}

func (b *graphNet) chanConst(name string, x any, op ConstOp, c []float32) any {
	return b.g.ChannelConst(name, node(x), op, c)
}

func (r *refNet) concat(_ string, xs ...any) any {
	first := t(xs[0])
	n, same := first.shape[0], true
	per := make([]int, len(xs))
	total := 0
	for k, xa := range xs {
		x := t(xa)
		if len(x.shape) != len(first.shape) || !slices.Equal(x.shape[2:], first.shape[2:]) {
			same = false
		}
		per[k] = len(x.v) / n
		total += per[k]
	}
	y := newT64(n, total)
	if same {
		y.shape = slices.Clone(first.shape)
		y.shape[1] = 0
		for _, xa := range xs {
			y.shape[1] += t(xa).shape[1]
		}
	}
	for i := range n {
		off := i * total
		for k, xa := range xs {
			off += copy(y.v[off:], t(xa).v[i*per[k]:(i+1)*per[k]])
		}
	}
	return y
}

func (r *refNet) chanConst(_ string, xa any, op ConstOp, c []float32) any {
	x := t(xa)
	y := newT64(x.shape...)
	block := len(x.v) / x.shape[0] / len(c)
	for i, v := range x.v {
		k := float64(c[i/block%len(c)])
		switch op {
		case ConstAdd:
			y.v[i] = v + k
		case ConstSub:
			y.v[i] = v - k
		case ConstMul:
			y.v[i] = v * k
		case ConstDiv:
			y.v[i] = v / k
		}
	}
	return y
}

// envJoinChild makes the test binary print joinSpecs' digest and exit (see
// TestJoinLayersSameBitsOnEveryKernelSet).
const envJoinChild = "GTSTORM_TEST_JOIN_DIGEST"

// TestJoinLayersSameBitsOnEveryKernelSet runs the networks of joinSpecs
// (Concat and ChannelConst between convolutions, GroupNorm and dense
// layers) in a child process per kernel set this CPU runs and checks that
// every set gives the recorded bits, wantJoinDigest: the new layers are
// copies and single float32 operations, the same bits on every set and
// architecture.
func TestJoinLayersSameBitsOnEveryKernelSet(t *testing.T) {
	digests, parent := kernelstest.Digests(t, "TestJoinLayersSameBitsOnEveryKernelSet", envJoinChild,
		func(t testing.TB) string { return specsDigest(t, joinSpecs) })
	if !parent {
		return
	}
	for set, d := range digests {
		if d != wantJoinDigest {
			t.Errorf("kernel set %s on %s: digest %s, want %s (pure Go: %s)", set, runtime.GOARCH, d, wantJoinDigest, digests["go"])
		}
	}
}

// wantJoinDigest is specsDigest(joinSpecs) on every kernel set and
// architecture, recorded with the pure-Go set on amd64.
const wantJoinDigest = "26535b36b0b8c842fa92d2787ad4d3fb5070a8d7a37cfc06fd32bdf1278023a7"
