package models

import (
	G "gorgonia.org/gorgonia"

	"github.com/gtstorm/gtstorm/models/internal/graphops"
)

// forward adds the network to g: x is the input [B, shape...], p the
// parameter nodes by name; it returns the logits [B, classes].
//
// It fuses what the kernels compute in one pass, where the tensor between
// the layers is read by nothing else: a biased convolution followed by
// ReLU and a 2×2 max-pool of stride 2 becomes the convolution and
// BiasReLUMaxPool2x2 (the paper CNNs' blocks), and a dense layer followed
// by ReLU becomes DenseReLU, and a GroupNorm followed by ReLU
// GroupNormReLU. Flatten costs nothing: a dense layer reads its input flat.
//
// In a training graph each Dropout layer of rate p > 0 multiplies by a
// mask; forward returns the masks' buffers, which the caller fills for
// each batch (dropMask.fill). Elsewhere Dropout is the identity.
func (n *Net) forward(g *graphops.Graph, x *G.Node, p nodes) (*G.Node, []dropMask) {
	var masks []dropMask
	vals := make([]*G.Node, len(n.shapes))
	vals[0] = x
	for i := 0; i < len(n.layers); i++ {
		l := &n.layers[i]
		in := vals[l.in[0]]
		switch l.kind {
		case kindConv:
			c := l.conv
			z := g.Conv2DAxes(in, p[l.name+".w"], c.mustAxes().graph(), max(c.Groups, 1))
			switch {
			case c.Bias && n.fusesPool(i):
				vals[n.layers[i+2].out] = g.BiasReLUMaxPool2x2(z, p[l.name+".b"])
				i += 2
			case c.Bias:
				vals[l.out] = g.ChannelBias(z, p[l.name+".b"])
			default:
				vals[l.out] = z
			}
		case kindDense:
			b := p[l.name+".b"]
			if l.noBias {
				// A bias of zeros that is no parameter, in a buffer of
				// the graph's own that nothing writes.
				b = g.Input(l.name+".nobias", make([]float32, l.units), l.units)
			}
			if n.fusesReLU(i) {
				vals[n.layers[i+1].out] = g.DenseReLU(in, p[l.name+".w"], b)
				i++
			} else {
				vals[l.out] = g.Dense(in, p[l.name+".w"], b)
			}
		case kindGroupNorm:
			if n.fusesReLU(i) {
				vals[n.layers[i+1].out] = g.GroupNormReLU(in, p[l.name+".g"], p[l.name+".b"], l.groups)
				i++
			} else {
				vals[l.out] = g.GroupNorm(in, p[l.name+".g"], p[l.name+".b"], l.groups)
			}
		case kindLayerNorm:
			vals[l.out] = g.LayerNorm(l.name, in, p[l.name+".g"], p[l.name+".b"], l.eps)
		case kindChannelNorm:
			vals[l.out] = g.ChannelNorm(l.name, in, p[l.name+".g"], p[l.name+".b"], l.eps)
		case kindReLU:
			vals[l.out] = g.ReLU(l.name, in)
		case kindPReLU:
			vals[l.out] = g.PReLU(l.name, in, p[l.name+".a"])
		case kindLeakyReLU:
			vals[l.out] = g.LeakyReLU(l.name, in, l.alpha)
		case kindTanh:
			vals[l.out] = g.Tanh(l.name, in)
		case kindSigmoid:
			vals[l.out] = g.Sigmoid(l.name, in)
		case kindSiLU:
			vals[l.out] = g.SiLU(l.name, in)
		case kindELU:
			vals[l.out] = g.ELU(l.name, in, l.alpha)
		case kindSoftplus:
			vals[l.out] = g.Softplus(l.name, in)
		case kindHardsigmoid:
			vals[l.out] = g.Hardsigmoid(l.name, in)
		case kindHardswish:
			vals[l.out] = g.Hardswish(l.name, in)
		case kindGELU:
			vals[l.out] = g.GELU(l.name, in)
		case kindClamp:
			vals[l.out] = g.Clamp(l.name, in, l.lo, l.hi)
		case kindMaxPool:
			vals[l.out] = g.MaxPoolWindow(l.name, in, l.window())
		case kindAvgPool:
			vals[l.out] = g.AvgPoolWindow(l.name, in, l.window())
		case kindLayerScale:
			vals[l.out] = g.ChannelMul(l.name, in, p[l.name+".g"])
		case kindScale:
			vals[l.out] = g.ChannelMul(l.name, in, p[l.param()])
		case kindShift:
			vals[l.out] = g.Shift(l.name, in, p[l.param()])
		case kindChannelShift:
			vals[l.out] = g.Shift(l.name, in, p[l.name+".b"])
		case kindTokens:
			vals[l.out] = g.Reshape(l.name, in, n.shapes[l.out]...)
		case kindAttention:
			vals[l.out] = g.Attention(l.name, in, l.heads, l.scale)
		case kindTokenLinear:
			var b *G.Node
			if !l.noBias {
				b = p[l.name+".b"]
			}
			vals[l.out] = g.TokenLinear(l.name, in, p[l.name+".w"], b)
		case kindClassToken:
			vals[l.out] = g.ClassToken(l.name, in, p[l.name+".c"])
		case kindPositionEmbedding:
			vals[l.out] = g.PositionAdd(l.name, in, p[l.name+".p"])
		case kindToken:
			vals[l.out] = g.Token(l.name, in, l.index)
		case kindTokenRange:
			vals[l.out] = g.TokenRange(l.name, in, l.index, l.count)
		case kindPatches:
			vals[l.out] = g.Patches(l.name, in, l.patch[0], l.patch[1], l.order == PatchesChannelMajor)
		case kindGlobalMaxPool:
			vals[l.out] = g.GlobalMaxPool(l.name, in)
		case kindGlobalAvgPool:
			vals[l.out] = g.GlobalAvgPool(l.name, in)
		case kindAdd:
			vals[l.out] = g.Add(l.name, in, vals[l.in[1]])
		case kindSub:
			vals[l.out] = g.Sub(l.name, in, vals[l.in[1]])
		case kindMul:
			vals[l.out] = g.Mul(l.name, in, vals[l.in[1]])
		case kindL2Normalize:
			vals[l.out] = g.L2Normalize(l.name, in, float64(l.eps))
		case kindLRN:
			p := l.lrn
			vals[l.out] = g.LRN(l.name, in, p.Size, float64(p.Alpha), float64(p.Beta), float64(p.K))
		case kindChannelScale:
			vals[l.out] = g.ChannelScale(l.name, in, vals[l.in[1]])
		case kindAttentionPool:
			vals[l.out] = g.AttentionPool(l.name, in, vals[l.in[1]])
		case kindChannels:
			vals[l.out] = g.Channels(l.name, in, l.span[0], l.span[1])
		case kindShuffle:
			vals[l.out] = g.ShuffleChannels(l.name, in, l.groups)
		case kindConcat:
			xs := make([]*G.Node, len(l.in))
			for k, t := range l.in {
				xs[k] = vals[t]
			}
			vals[l.out] = g.Concat(l.name, xs...)
		case kindAddConst, kindSubConst, kindMulConst, kindDivConst:
			vals[l.out] = g.ChannelConst(l.name, in, graphConstOps[l.kind], l.consts)
		case kindFlatten:
			vals[l.out] = in
		case kindDropout:
			vals[l.out] = in
			if g.Training() && l.rate > 0 {
				var buf []float32
				vals[l.out], buf = g.Dropout(l.name, in)
				masks = append(masks, dropMask{buf: buf, layer: l.key, rate: l.rate})
			}
		}
	}
	return vals[len(vals)-1], masks
}

// graphConstOps is the arithmetic of each constant layer.
var graphConstOps = map[layerKind]graphops.ConstOp{kindAddConst: graphops.ConstAdd, kindSubConst: graphops.ConstSub,
	kindMulConst: graphops.ConstMul, kindDivConst: graphops.ConstDiv}

// fusesReLU reports whether layer i is followed by a ReLU that is the only
// reader of its output.
func (n *Net) fusesReLU(i int) bool {
	l := n.layers[i]
	return i+1 < len(n.layers) && n.uses[l.out] == 1 &&
		n.layers[i+1].kind == kindReLU && n.layers[i+1].in[0] == l.out
}

// fusesPool reports whether layer i is followed by a ReLU and a 2×2
// max-pool of stride 2, each the only reader of what precedes it.
func (n *Net) fusesPool(i int) bool {
	if !n.fusesReLU(i) || i+2 >= len(n.layers) {
		return false
	}
	relu, pool := n.layers[i+1], n.layers[i+2]
	return n.uses[relu.out] == 1 && pool.kind == kindMaxPool && pool.in[0] == relu.out && pool.k == 2 && pool.s == 2 && pool.pad == 0 && !pool.ceil
}
