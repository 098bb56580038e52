package graphops

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// The layers of ResNet-like networks are checked through small networks of
// them, each written once against net: graphNet builds it from this
// package's layers, refNet computes it in float64 from the layers'
// definitions (ref_test.go). Values pass as any: *G.Node in one, *t64 in
// the other. Each layer declares its parameters on first use, by name, so
// that both see the same parameters in the same order.
type net interface {
	conv(x any, name string, out, k, stride, pad int) any // name.w [out,C,k,k]
	bias(x any, name string) any                          // ChannelBias, name.b [C]
	groupNorm(x any, name string, groups int) any         // name.g, name.b [C]
	relu(name string, x any) any
	leakyReLU(name string, x any, alpha float32) any
	tanh(name string, x any) any
	sigmoid(name string, x any) any
	silu(name string, x any) any
	add(name string, a, b any) any
	maxPool(name string, x any, k, stride int) any
	avgPool(name string, x any, k, stride int) any
	globalAvgPool(name string, x any) any
	dense(x any, name string, out int, relu bool) any // name.w [in,out], name.b [out]
	biasReLUPool(x any, name string) any              // BiasReLUMaxPool2x2, name.b [C]
	concat(name string, xs ...any) any                // Concat along axis 1
	chanConst(name string, x any, op ConstOp, c []float32) any
	groupConv(x any, name string, out, k, stride, pad, groups int) any // name.w [out,C/groups,k,k]
	clamp(name string, x any, lo, hi float32) any
	pointwise(name, kind string, x any, alpha float32) any // kind: elu (alpha), softplus, hardsigmoid, hardswish, gelu
}

// netSpec is a test network: input → ChannelBias "in" → body → logits
// [n,classes], then the softmax cross-entropy. The bias puts a computed
// node in front of the body's first layer, so that the layer forms its
// input gradient, and passes it on unchanged as the gradient with respect
// to the input.
type netSpec struct {
	name    string
	input   []int // [C,H,W]
	classes int
	body    func(b net, x any) any
}

// convHead is conv → bias → ReLU → global average pooling → dense, the
// head of the convolution checks.
func convHead(stride, pad, k int) func(b net, x any) any {
	return func(b net, x any) any {
		h := b.relu("r", b.bias(b.conv(x, "c1", 5, k, stride, pad), "c1"))
		return b.dense(b.globalAvgPool("gap", h), "fc", 3, false)
	}
}

// basicBlock is a ResNet basic block with GroupNorm (2 groups): conv 3×3
// (stride s, padding 1) → GN → ReLU → conv 3×3 → GN, plus the shortcut
// (conv 1×1 with stride s → GN when projected, else x itself), then ReLU.
func basicBlock(b net, x any, name string, out, stride int, project bool) any {
	h := b.relu(name+".r1", b.groupNorm(b.conv(x, name+".c1", out, 3, stride, 1), name+".n1", 2))
	h = b.groupNorm(b.conv(h, name+".c2", out, 3, 1, 1), name+".n2", 2)
	sc := x
	if project {
		sc = b.groupNorm(b.conv(x, name+".sc", out, 1, stride, 0), name+".nsc", 2)
	}
	return b.relu(name+".r2", b.add(name+".add", h, sc))
}

var netSpecs = []netSpec{
	{"conv3x3-s1-p1", []int{3, 6, 6}, 3, convHead(1, 1, 3)},
	{"conv3x3-s2-p1", []int{3, 8, 8}, 3, convHead(2, 1, 3)},
	{"conv3x3-s2-p1-odd", []int{2, 7, 9}, 3, convHead(2, 1, 3)},
	{"conv1x1-s2", []int{3, 8, 8}, 3, convHead(2, 0, 1)},
	{"conv5x5-p2", []int{2, 8, 8}, 3, convHead(1, 2, 5)},
	{"conv3x3-valid", []int{2, 8, 8}, 3, convHead(1, 0, 3)},
	{"groupnorm", []int{4, 5, 5}, 3, func(b net, x any) any {
		h := b.conv(x, "c1", 6, 3, 1, 1)
		h = b.groupNorm(h, "n2", 2) // two groups of three channels
		h = b.groupNorm(h, "n1", 1)
		h = b.groupNorm(h, "n6", 6) // instance norm
		return b.dense(b.relu("r", h), "fc", 3, false)
	}},
	{"add", []int{3, 6, 6}, 3, func(b net, x any) any { // x read by three ops
		h := b.add("sum", b.conv(x, "a", 3, 3, 1, 1), b.conv(x, "b", 3, 1, 1, 0))
		h = b.add("sum2", b.relu("r1", h), x)
		return b.dense(b.relu("r2", h), "fc", 3, false)
	}},
	{"maxpool", []int{3, 9, 9}, 3, func(b net, x any) any {
		h := b.maxPool("p1", b.conv(x, "c1", 4, 3, 1, 1), 2, 2) // 9 → 4: the last row and column drop
		h = b.maxPool("p2", h, 3, 1)                            // overlapping windows
		return b.dense(h, "fc", 3, false)
	}},
	{"avgpool", []int{3, 9, 9}, 3, func(b net, x any) any {
		h := b.avgPool("p1", b.conv(x, "c1", 4, 3, 1, 1), 2, 2)
		h = b.avgPool("p2", h, 3, 1)
		return b.dense(h, "fc", 3, false)
	}},
	{"residual-projection", []int{4, 8, 8}, 3, func(b net, x any) any {
		h := basicBlock(b, x, "b1", 8, 2, true)
		return b.dense(b.globalAvgPool("gap", h), "fc", 3, false)
	}},
	{"residual-identity", []int{3, 6, 6}, 3, func(b net, x any) any {
		h := b.relu("r0", b.groupNorm(b.conv(x, "c0", 4, 3, 1, 1), "n0", 2))
		h = basicBlock(b, h, "b1", 4, 1, false)
		h = basicBlock(b, h, "b2", 4, 1, false)
		return b.dense(b.globalAvgPool("gap", h), "fc", 3, false)
	}},
	{"fedavg-like", []int{1, 12, 12}, 4, func(b net, x any) any {
		h := b.biasReLUPool(b.conv(x, "c1", 4, 5, 1, 2), "c1")                             // 12 → 6
		h = b.maxPool("p2", b.relu("r2", b.bias(b.conv(h, "c2", 6, 5, 1, 2), "c2")), 2, 2) // 6 → 3
		return b.dense(b.dense(h, "fc1", 8, true), "fc2", 4, false)
	}},
}

// params holds a network's parameters by name, in the order the layers
// declared them; x, the input, is one of them (the last).
type params struct {
	names  []string
	shapes map[string][]int
	vals   map[string][]float32
}

// declare adds the named parameter, drawn from rng by its kind (the
// suffix: scales near 1, shifts and biases near 0, weights scaled by
// their fan-in), unless it exists already.
func (ps *params) declare(rng *rand.Rand, name string, shape ...int) []float32 {
	if v, ok := ps.vals[name]; ok {
		return v
	}
	n := tensor.Shape(shape).TotalSize()
	var v []float32
	switch {
	case strings.HasSuffix(name, ".g"):
		v = uniform(rng, n, 0.5)
		for i := range v {
			v[i]++
		}
	case strings.HasSuffix(name, ".b"):
		v = uniform(rng, n, 0.3)
	case len(shape) == 4:
		v = uniform(rng, n, 1.5/math.Sqrt(float64(shape[1]*shape[2]*shape[3])))
	case len(shape) == 2:
		v = uniform(rng, n, 1.5/math.Sqrt(float64(shape[0])))
	default:
		v = uniform(rng, n, 1)
	}
	ps.names = append(ps.names, name)
	ps.shapes[name] = shape
	ps.vals[name] = v
	return v
}

// graphNet builds a netSpec from this package's layers.
type graphNet struct {
	g     *Graph
	ps    *params
	rng   *rand.Rand
	nodes map[string]*G.Node // the parameters' input nodes
}

func (b *graphNet) param(name string, shape ...int) *G.Node {
	if n, ok := b.nodes[name]; ok {
		return n
	}
	n := b.g.Input(name, b.ps.declare(b.rng, name, shape...), shape...)
	b.nodes[name] = n
	return n
}

func node(x any) *G.Node { return x.(*G.Node) }

// channels returns x's C, or 1 for a nil node (an earlier error).
func channels(x any) int {
	if n := node(x); n != nil && n.Dims() > 1 {
		return n.Shape()[1]
	}
	return 1
}

func (b *graphNet) conv(x any, name string, out, k, stride, pad int) any {
	return b.g.Conv2DStrided(node(x), b.param(name+".w", out, channels(x), k, k), stride, pad)
}

func (b *graphNet) bias(x any, name string) any {
	return b.g.ChannelBias(node(x), b.param(name+".b", channels(x)))
}

func (b *graphNet) groupNorm(x any, name string, groups int) any {
	c := channels(x)
	return b.g.GroupNorm(node(x), b.param(name+".g", c), b.param(name+".b", c), groups)
}

func (b *graphNet) relu(name string, x any) any       { return b.g.ReLU(name, node(x)) }
func (b *graphNet) add(name string, x, y any) any     { return b.g.Add(name, node(x), node(y)) }
func (b *graphNet) globalAvgPool(n string, x any) any { return b.g.GlobalAvgPool(n, node(x)) }

func (b *graphNet) maxPool(name string, x any, k, stride int) any {
	return b.g.MaxPool(name, node(x), k, stride)
}

func (b *graphNet) avgPool(name string, x any, k, stride int) any {
	return b.g.AvgPool(name, node(x), k, stride)
}

func (b *graphNet) dense(x any, name string, out int, relu bool) any {
	in := 1
	if n := node(x); n != nil {
		in = n.Shape().TotalSize() / n.Shape()[0]
	}
	w, bias := b.param(name+".w", in, out), b.param(name+".b", out)
	if relu {
		return b.g.DenseReLU(node(x), w, bias)
	}
	return b.g.Dense(node(x), w, bias)
}

func (b *graphNet) biasReLUPool(x any, name string) any {
	return b.g.BiasReLUMaxPool2x2(node(x), b.param(name+".b", channels(x)))
}

// builtNet is a compiled instance of a netSpec for one batch size.
type builtNet struct {
	spec         netSpec
	prog         *Program
	ps           *params
	labels       []uint8
	logits, loss int
	grads        []int // of ps.names, in order
}

// build compiles s for a batch of n on ws, with gradients (of every
// parameter and of the input) if train. The parameters are drawn from
// seed; a forward graph built with the training graph's ps shares its
// parameters' buffers.
func (s netSpec) build(ws *Workspace, n int, train bool, seed uint64, ps *params) (*builtNet, error) {
	if ps == nil {
		ps = &params{shapes: map[string][]int{}, vals: map[string][]float32{}}
	}
	bn := &builtNet{spec: s, ps: ps, labels: make([]uint8, n)}
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	for i := range bn.labels {
		bn.labels[i] = uint8(rng.IntN(s.classes))
	}
	err := Build(func() error {
		b := &graphNet{g: New(ws, train), ps: ps, rng: rng, nodes: map[string]*G.Node{}}
		for _, name := range ps.names { // a forward graph: the training graph's parameters
			b.param(name, ps.shapes[name]...)
		}
		x := b.param("x", append([]int{n}, s.input...)...)
		logits := node(s.body(b, b.bias(x, "in")))
		outs := []*G.Node{logits}
		if train {
			loss := b.g.SoftmaxCrossEntropy(logits, bn.labels)
			wrt := make([]*G.Node, len(ps.names))
			for i, name := range ps.names {
				wrt[i] = b.nodes[name]
			}
			outs = append(outs, loss)
			outs = append(outs, b.g.Gradients(loss, wrt...)...)
		}
		prog, slots, err := b.g.Compile(outs...)
		if err != nil {
			return err
		}
		bn.prog, bn.logits = prog, slots[0]
		if train {
			bn.loss, bn.grads = slots[1], slots[2:]
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	return bn, nil
}

// run runs the program and returns copies of the loss and the gradients
// (training) or of the logits (forward).
func (bn *builtNet) run() (loss float32, grads [][]float32, logits []float32, err error) {
	if err = bn.prog.Run(); err != nil {
		return
	}
	if bn.grads == nil {
		logits, err = bn.prog.Float32s(bn.logits)
		return 0, nil, append([]float32(nil), logits...), err
	}
	if loss, err = bn.prog.Scalar(bn.loss); err != nil {
		return
	}
	for _, s := range bn.grads {
		g, err := bn.prog.Float32s(s)
		if err != nil {
			return 0, nil, nil, err
		}
		grads = append(grads, append([]float32(nil), g...))
	}
	return loss, grads, nil, nil
}
