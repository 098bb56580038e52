package models

import (
	"fmt"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// onnxGraph accumulates the nodes and initialisers of a network's ONNX
// export, one layer of its description at a time.
type onnxGraph struct {
	cm    *classifier
	names []string // the ONNX name of each tensor of the description
	nodes []onnx.Node
	inits []onnx.Tensor
	desc  []string // one line per layer, for the model's doc string
	// trainable lists the initialisers of Scale, Shift and ChannelShift
	// (trainableKey).
	trainable []string
}

// newONNXGraph returns a graph holding cm's parameters params as
// initialisers, in layout order, and naming the description's input and
// output tensors ONNXInput and ONNXOutput.
func newONNXGraph(cm *classifier, params []float32) *onnxGraph {
	g := &onnxGraph{cm: cm, names: make([]string, len(cm.net.shapes))}
	g.names[0] = ONNXInput
	for _, l := range cm.net.layers {
		g.names[l.out] = l.name
	}
	g.names[len(g.names)-1] = ONNXOutput
	overMaps := cm.perChannelOfMaps()
	for _, p := range cm.params {
		shape := p.Shape
		if overMaps[p.Name] {
			shape = []int{shape[0], 1, 1} // broadcast over the maps
		}
		g.inits = append(g.inits, onnx.FloatTensor(p.Name, append([]float32(nil), params[p.Offset:p.Offset+p.Size()]...), shape...))
	}
	return g
}

// perChannelOfMaps returns the names of the parameter tensors that hold
// one value a channel of an image and that the export writes [C,1,1], so
// that they broadcast over the maps: GroupNorm's and ChannelNorm's scales
// and shifts, ChannelShift's shifts, and PReLU's slopes where there is one
// a channel.
// (LayerScale's [C] scales multiply a channels-last tensor.)
func (cm *classifier) perChannelOfMaps() map[string]bool {
	names := map[string]bool{}
	for _, l := range cm.net.layers {
		switch {
		case l.kind == kindGroupNorm || l.kind == kindChannelNorm:
			names[l.name+".g"], names[l.name+".b"] = true, true
		case l.kind == kindChannelShift:
			names[l.name+".b"] = true
		case l.kind == kindPReLU && l.units > 1 && len(cm.net.shapes[l.in[0]]) == 3:
			names[l.name+".a"] = true
		}
	}
	return names
}

// node appends an ONNX node of the given type reading in and writing out.
func (g *onnxGraph) node(name, op string, in []string, out string, attrs ...onnx.Attr) {
	g.nodes = append(g.nodes, onnx.Node{Name: name, OpType: op, Inputs: in, Outputs: []string{out}, Attrs: attrs})
}

// addLayer appends the nodes that compute layer l.
func (g *onnxGraph) addLayer(l netLayer) {
	net := g.cm.net
	x, out := g.names[l.in[0]], g.names[l.out]
	in, shape := net.shapes[l.in[0]], net.shapes[l.out]
	switch l.kind {
	case kindConv:
		g.addConv(l, x, out, in, shape)
	case kindGroupNorm:
		g.addGroupNorm(l, x, out, in)
	case kindLayerNorm:
		g.addLayerNorm(l, x, out, in)
	case kindChannelNorm:
		g.addChannelNorm(l, x, out, in)
	case kindReLU:
		g.node(l.name, "Relu", []string{x}, out)
		g.describe("%s: Relu", l.name)
	case kindPReLU:
		g.addPReLU(l, x, out, in)
	case kindLayerScale:
		g.addLayerScale(l, x, out)
	case kindChannelShift:
		g.addChannelShift(l, x, out)
	case kindTokens:
		g.addTokens(l, x, out, shape)
	case kindAttention:
		g.addAttention(l, x, out, in, shape)
	case kindTokenLinear:
		g.addTokenLinear(l, x, out, in, shape)
	case kindClassToken:
		g.addClassToken(l, x, out, in, shape)
	case kindPositionEmbedding:
		g.addPositionEmbedding(l, x, out, in)
	case kindToken:
		g.addToken(l, x, out, in)
	case kindTokenRange:
		g.addTokenRange(l, x, out, in)
	case kindPatches:
		g.addPatches(l, x, out, in, shape)
	case kindLeakyReLU:
		g.node(l.name, "LeakyRelu", []string{x}, out, onnx.FloatAttr("alpha", l.alpha))
		g.describe("%s: LeakyRelu alpha %g", l.name, l.alpha)
	case kindTanh:
		g.node(l.name, "Tanh", []string{x}, out)
		g.describe("%s: Tanh", l.name)
	case kindSigmoid:
		g.node(l.name, "Sigmoid", []string{x}, out)
		g.describe("%s: Sigmoid", l.name)
	case kindClamp:
		g.addClip(l, x, out)
	case kindSiLU:
		// torch's opset-13 form of nn.SiLU: Sigmoid, then Mul of x and it.
		g.node(l.name+".sigmoid", "Sigmoid", []string{x}, l.name+".sigmoid")
		g.node(l.name, "Mul", []string{x, l.name + ".sigmoid"}, out)
		g.describe("%s: SiLU (Sigmoid, Mul)", l.name)
	case kindELU, kindSoftplus, kindHardsigmoid, kindHardswish, kindGELU:
		g.addPointwise(l, x, out)
	case kindMaxPool, kindAvgPool:
		op := map[layerKind]string{kindMaxPool: "MaxPool", kindAvgPool: "AveragePool"}[l.kind]
		p := int64(l.pad)
		attrs := []onnx.Attr{onnx.IntsAttr("kernel_shape", int64(l.k), int64(l.k)),
			onnx.IntsAttr("strides", int64(l.s), int64(l.s)),
			onnx.IntsAttr("pads", p, p, p, p)}
		if l.kind == kindAvgPool && l.pad > 0 {
			include := int64(1)
			if l.exPad {
				include = 0
			}
			attrs = append(attrs, onnx.IntAttr("count_include_pad", include))
		}
		if l.ceil {
			attrs = append(attrs, onnx.IntAttr("ceil_mode", 1))
		}
		g.node(l.name, op, []string{x}, out, attrs...)
		padding := ""
		if l.pad > 0 {
			padding = fmt.Sprintf(" padding %d", l.pad)
		}
		if l.exPad {
			padding += " (count_include_pad 0)"
		}
		if l.ceil {
			padding += " ceil_mode 1"
		}
		g.describe("%s: %s %d×%d stride %d%s → [N,%s]", l.name, op, l.k, l.k, l.s, padding, joinInts(shape))
	case kindDropout:
		// Opset 13's Dropout: the ratio an input, training_mode absent
		// (false), so that inference runs it as the identity.
		g.inits = append(g.inits, onnx.FloatTensor(l.name+".ratio", []float32{l.rate}))
		g.node(l.name, "Dropout", []string{x, l.name + ".ratio"}, out)
		g.describe("%s: Dropout p %g (the identity in inference)", l.name, l.rate)
	case kindGlobalMaxPool:
		g.node(l.name+".max", "GlobalMaxPool", []string{x}, l.name+".max")
		g.node(l.name, "Flatten", []string{l.name + ".max"}, out, onnx.IntAttr("axis", 1))
		g.describe("%s: GlobalMaxPool, Flatten → [N,%d]", l.name, shape[0])
	case kindGlobalAvgPool:
		g.node(l.name+".mean", "GlobalAveragePool", []string{x}, l.name+".mean")
		g.node(l.name, "Flatten", []string{l.name + ".mean"}, out, onnx.IntAttr("axis", 1))
		g.describe("%s: GlobalAveragePool, Flatten → [N,%d]", l.name, shape[0])
	case kindChannelScale:
		g.addChannelScale(l)
	case kindAdd:
		g.node(l.name, "Add", []string{x, g.names[l.in[1]]}, out)
		g.describe("%s: Add (residual)", l.name)
	case kindScale, kindShift:
		g.addScalar(l, x, out)
	case kindAttentionPool:
		g.addAttentionPool(l, x, out, in)
	case kindSub:
		g.node(l.name, "Sub", []string{x, g.names[l.in[1]]}, out)
		g.describe("%s: Sub", l.name)
	case kindMul:
		g.node(l.name, "Mul", []string{x, g.names[l.in[1]]}, out)
		g.describe("%s: Mul of two tensors", l.name)
	case kindL2Normalize:
		g.addL2Normalize(l, x, out)
	case kindLRN:
		g.addLRN(l, x, out)
	case kindChannels:
		g.addChannels(l, x, out, in)
	case kindShuffle:
		g.addShuffle(l, x, out, in)
	case kindConcat:
		ins := make([]string, len(l.in))
		for k, t := range l.in {
			ins[k] = g.names[t]
		}
		g.node(l.name, "Concat", ins, out, onnx.IntAttr("axis", 1))
		g.describe("%s: Concat of %d tensors along the channels (axis 1) → [N,%s]", l.name, len(l.in), joinInts(shape))
	case kindAddConst, kindSubConst, kindMulConst, kindDivConst:
		// The constants broadcast over the channels (axis 1): [C,1,…,1]
		// against [N,C,…], or one value, a scalar.
		dims := []int{}
		if len(l.consts) > 1 {
			dims = append([]int{len(l.consts)}, filledInts(len(in)-1, 1)...)
		}
		g.inits = append(g.inits, onnx.FloatTensor(l.name+".c", append([]float32(nil), l.consts...), dims...))
		g.node(l.name, constOps[l.kind], []string{x, l.name + ".c"}, out)
		g.describe("%s", describeConst(l, in))
	case kindFlatten:
		g.node(l.name, "Flatten", []string{x}, out, onnx.IntAttr("axis", 1))
		g.describe("%s: Flatten [N,%s] → [N,%d] (NCHW order)", l.name, joinInts(in), shape[0])
	case kindDense:
		if len(in) > 1 {
			flat := l.name + ".flatten"
			g.node(flat, "Flatten", []string{x}, flat, onnx.IntAttr("axis", 1))
			g.describe("%s: Flatten [N,%s] → [N,%d] (NCHW order)", flat, joinInts(in), product(in))
			x = flat
		}
		inputs := []string{x, l.name + ".w", l.name + ".b"}
		if l.noBias {
			inputs = inputs[:2]
		}
		g.node(l.name, "Gemm", inputs, out,
			onnx.FloatAttr("alpha", 1), onnx.FloatAttr("beta", 1), onnx.IntAttr("transA", 0), onnx.IntAttr("transB", 0))
		g.describe("%s: Gemm x·W+b, W [%d,%d] → [N,%d]", l.name, product(in), l.units, l.units)
	}
}

// addConv appends a convolution, with its bias where it has one.
func (g *onnxGraph) addConv(l netLayer, x, out string, in, shape []int) {
	c := l.conv
	inputs := []string{x, l.name + ".w"}
	bias := "no bias"
	if c.Bias {
		inputs, bias = append(inputs, l.name+".b"), "bias"
	}
	a := c.mustAxes()
	i64 := func(v int) int64 { return int64(v) }
	g.node(l.name, "Conv", inputs, out,
		onnx.IntsAttr("kernel_shape", i64(a.kh), i64(a.kw)),
		onnx.IntsAttr("strides", i64(a.sh), i64(a.sw)),
		onnx.IntsAttr("pads", i64(a.ph), i64(a.pw), i64(a.pb), i64(a.pr)),
		onnx.IntsAttr("dilations", i64(a.dh), i64(a.dw)),
		onnx.IntAttr("group", int64(max(c.Groups, 1))))
	if c.Groups > 1 {
		bias += fmt.Sprintf(", %d groups", c.Groups)
	}
	if !a.uniform() {
		g.describe("%s: Conv %d→%d %d×%d (%s, %s) → [N,%s]", l.name, in[0], c.Out, a.kh, a.kw, a, bias, joinInts(shape))
		return
	}
	g.describe("%s: Conv %d→%d %d×%d (stride %d, padding %d, %s) → [N,%s]", l.name, in[0], c.Out, c.Kernel, c.Kernel, c.Stride, c.Pad, bias, joinInts(shape))
}

// addGroupNorm appends GroupNorm as PyTorch's exporter writes it at opset
// 13: reshape [N,C,H,W] to [N,G,C/G·H·W], InstanceNormalization of the G
// "channels" with unit scale and zero shift, reshape back, then the
// per-channel scale (Mul) and shift (Add).
func (g *onnxGraph) addGroupNorm(l netLayer, x, out string, in []int) {
	grouped, back := l.name+".grouped", l.name+".shape"
	ones, zeros := make([]float32, l.groups), make([]float32, l.groups)
	for i := range ones {
		ones[i] = 1
	}
	g.inits = append(g.inits,
		onnx.Int64Tensor(grouped, []int64{0, int64(l.groups), -1}, 3),
		onnx.Int64Tensor(back, []int64{0, int64(in[0]), int64(in[1]), int64(in[2])}, 4),
		onnx.FloatTensor(l.name+".ones", ones, l.groups),
		onnx.FloatTensor(l.name+".zeros", zeros, l.groups))
	g.node(l.name+".group", "Reshape", []string{x, grouped}, l.name+".group")
	g.node(l.name+".norm", "InstanceNormalization", []string{l.name + ".group", l.name + ".ones", l.name + ".zeros"}, l.name+".norm",
		onnx.FloatAttr("epsilon", groupNormEps))
	g.node(l.name+".ungroup", "Reshape", []string{l.name + ".norm", back}, l.name+".ungroup")
	g.node(l.name+".scale", "Mul", []string{l.name + ".ungroup", l.name + ".g"}, l.name+".scale")
	g.node(l.name+".shift", "Add", []string{l.name + ".scale", l.name + ".b"}, out)
	g.describe("%s: GroupNorm %d groups of %d channels, ε %g (Reshape, InstanceNormalization, Reshape, Mul, Add)", l.name, l.groups, in[0]/l.groups, groupNormEps)
}

// groupNormEps is GroupNorm's ε, as PyTorch's default.
const groupNormEps = 1e-5

// describe adds a line to the model's doc string.
func (g *onnxGraph) describe(format string, args ...any) {
	g.desc = append(g.desc, fmt.Sprintf(format, args...))
}
