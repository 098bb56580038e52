package models

import (
	"fmt"
	"slices"
)

// NetSpec is a Net's description as data: the layer calls that made it, in
// order, so that a network can be stored (a model file records the
// networks imported from ONNX this way) and rebuilt by NetFromSpec without
// the code or the file that first described it. Tensors are numbered as
// the description makes them: 0 is the input, k the output of layer k−1.
type NetSpec struct {
	Name    string      `json:"name"`
	Shape   []int       `json:"shape"`
	Classes int         `json:"classes"`
	Layers  []LayerSpec `json:"layers"`
}

// LayerSpec is one layer call of a NetSpec. Op is conv, groupnorm, layernorm, channelnorm, relu,
// leakyrelu, tanh, sigmoid, silu, clamp, elu, softplus, hardsigmoid,
// hardswish, gelu, maxpool, avgpool, globalavgpool, add, channelscale,
// concat, channels, shuffle, addconst, subconst, mulconst, divconst,
// flatten, dense or dropout; In the tensors it reads (two or more for concat, in order).
// Name is the layer's, which
// names its parameters (conv, groupnorm, layernorm, channelnorm, dense; the others are named after
// their position), and a dropout's where it is not dropout#K at position K−1: the name dropout#K
// keys its masks (see Net.Dropout), which a network imported from an ONNX
// export keeps from the layer it exported. The other fields are the
// settings of its Op: a convolution's Out, Kernel, Stride, Pad, Bias,
// Init (uniform or kaiming-normal) and Groups (written where above 1), and
// its per-axis KernelW, StrideW, PadH, PadW, Dilation and DilationW (see
// Conv; {"op":"conv","name":"c","in":[0],"out":8,"kernel":3,"kernel_w":1,
// "stride":2,"stride_w":1,"pad_h":1,"init":"uniform"} is
// nn.Conv2d(C, 8, (3,1), stride=(2,1), padding=(1,0)); ExtraBottom and
// ExtraRight, "extra_bottom" and "extra_right", pad the bottom and the
// right unlike the top and the left),
// GroupNorm's Groups, a layernorm's Eps ({"op":"layernorm","name":"ln","in":[3],"eps":0.00001}
// is nn.LayerNorm of tensor 3's shape; a channelnorm's Eps likewise, always written), a shuffle's Groups, a channels layer's From and To
// ({"op":"channels","in":[3],"from":4,"to":8} is x[:, 4:8]), a pool's Kernel,
// Stride and Pad (and an avgpool's ExcludePad, count_include_pad=False;
// Ceil, ceil_mode=True), a
// dense layer's Units (and a prelu's, its slopes: 1, or one a channel), a dropout's Rate (its p;
// {"op":"dropout","in":[3],"rate":0.25} is nn.Dropout(0.25)), a leakyrelu's
// Alpha (its negative slope, written even where 0), an elu's Alpha
// (written always; absent, torch's default 1), a clamp's Lo and Hi
// ({"op":"clamp","in":[3],"lo":0,"hi":6} is nn.ReLU6), an l2normalize's
// Eps, an lrn's Kernel, Alpha, Beta and K
// ({"op":"lrn","in":[3],"kernel":9,"alpha":0.00011111111,"beta":0.75,"k":1}
// is nn.LocalResponseNorm(9, 0.001/9, 0.75, 1)), and the constants of
// addconst, subconst, mulconst and divconst, Const (one value, or one per
// channel; {"op":"subconst","in":[0],"const":[0.4914,0.4822,0.4465]} is
// x − mean of CIFAR-10's channel means).
type LayerSpec struct {
	Op     string  `json:"op"`
	Name   string  `json:"name,omitempty"`
	In     []int   `json:"in"`
	Out    int     `json:"out,omitempty"`
	Kernel int     `json:"kernel,omitempty"`
	Stride int     `json:"stride,omitempty"`
	Pad    int     `json:"pad,omitempty"`
	Bias   bool    `json:"bias,omitempty"`
	Init   string  `json:"init,omitempty"`
	Groups int     `json:"groups,omitempty"`
	Units  int     `json:"units,omitempty"`
	Rate   float32 `json:"rate,omitempty"`
	NoBias bool    `json:"nobias,omitempty"`
	// Alpha is a leakyrelu's negative slope; a pointer so that a slope
	// of 0 is written, and a leakyrelu without one is refused.
	Alpha *float32 `json:"alpha,omitempty"`
	// ExcludePad: an avgpool's divisor counts only the values inside the
	// map (PyTorch's count_include_pad=False).
	ExcludePad bool `json:"exclude_pad,omitempty"`
	// Ceil: a pool's output size is rounded up (PyTorch's ceil_mode=True).
	Ceil bool `json:"ceil,omitempty"`
	// Const holds the constants of addconst, subconst, mulconst and
	// divconst, which are no parameters.
	Const []float32 `json:"const,omitempty"`
	// Lo and Hi are a clamp's bounds; pointers so that a bound of 0 is
	// written, and a clamp without both is refused.
	Lo *float32 `json:"lo,omitempty"`
	Hi *float32 `json:"hi,omitempty"`
	// From and To are a channels layer's range [From,To) of channels.
	From int `json:"from,omitempty"`
	To   int `json:"to,omitempty"`
	// Eps is a layernorm's ε (written always; absent, torch's default
	// 1e-5).
	Eps *float32 `json:"eps,omitempty"`
	// Beta and K are an lrn's β and k (its Kernel the window's size, its
	// Alpha α); pointers, as Alpha is.
	Beta *float32 `json:"beta,omitempty"`
	K    *float32 `json:"k,omitempty"`
	// KernelW, StrideW, PadH, PadW, Dilation and DilationW are a
	// convolution's per-axis settings (Conv's), written only where its
	// axes differ or it is dilated.
	KernelW   int `json:"kernel_w,omitempty"`
	StrideW   int `json:"stride_w,omitempty"`
	PadH      int `json:"pad_h,omitempty"`
	PadW      int `json:"pad_w,omitempty"`
	Dilation  int `json:"dilation,omitempty"`
	DilationW int `json:"dilation_w,omitempty"`
	// ExtraBottom and ExtraRight are a convolution's padding of the
	// bottom and the right beyond the top's and the left's (Conv's),
	// written only where the sides differ.
	ExtraBottom int `json:"extra_bottom,omitempty"`
	ExtraRight  int `json:"extra_right,omitempty"`
	// Heads and Scale are an attention's heads and its scores' scale
	// (written always).
	Heads int      `json:"heads,omitempty"`
	Scale *float32 `json:"scale,omitempty"`
	// Index is the position a token layer takes, Count how many from there
	// (tokenrange).
	Index int `json:"index,omitempty"`
	Count int `json:"count,omitempty"`
	// Owner names the layer whose value a scale or shift uses again.
	Owner string `json:"owner,omitempty"`
	// PatchH and PatchW are a patches layer's patch height and width, and
	// ChannelMajor its order (see Net.Patches; absent, pixel-major).
	PatchH       int  `json:"patch_h,omitempty"`
	PatchW       int  `json:"patch_w,omitempty"`
	ChannelMajor bool `json:"channel_major,omitempty"`
}

// layerOps names each layerKind in a spec.
var layerOps = map[layerKind]string{
	kindConv: "conv", kindGroupNorm: "groupnorm", kindReLU: "relu", kindMaxPool: "maxpool",
	kindAvgPool: "avgpool", kindGlobalAvgPool: "globalavgpool", kindAdd: "add", kindFlatten: "flatten",
	kindDense: "dense", kindDropout: "dropout", kindLeakyReLU: "leakyrelu", kindTanh: "tanh", kindSigmoid: "sigmoid", kindSiLU: "silu", kindClamp: "clamp",
	kindELU: "elu", kindSoftplus: "softplus", kindHardsigmoid: "hardsigmoid", kindHardswish: "hardswish", kindGELU: "gelu",
	kindConcat: "concat", kindAddConst: "addconst", kindSubConst: "subconst", kindMulConst: "mulconst", kindDivConst: "divconst",
	kindChannelScale: "channelscale", kindChannels: "channels", kindShuffle: "shuffle",
	kindLayerNorm: "layernorm", kindChannelNorm: "channelnorm", kindPReLU: "prelu", kindGlobalMaxPool: "globalmaxpool", kindLayerScale: "layerscale",
	kindTokens: "tokens", kindAttention: "attention", kindTokenLinear: "tokenlinear", kindClassToken: "classtoken",
	kindPositionEmbedding: "positionembedding", kindToken: "token", kindTokenRange: "tokenrange", kindSub: "sub", kindScale: "scale", kindShift: "shift", kindAttentionPool: "attentionpool", kindChannelShift: "channelshift", kindMul: "mul", kindL2Normalize: "l2normalize", kindLRN: "lrn", kindPatches: "patches",
}

var initNames = map[Init]string{InitUniform: "uniform", InitKaimingNormal: "kaiming-normal"}

// maxSpecLayers bounds the layers NetFromSpec replays.
const maxSpecLayers = 1 << 16

// Spec returns the description of m, a network a Net made (every image
// classifier New builds, and those ImportONNX makes), as data.
func Spec(m Model) (NetSpec, error) {
	cm, ok := m.(*classifier)
	if !ok {
		return NetSpec{}, fmt.Errorf("%s is not a network of layers (a Net)", m.Name())
	}
	n := cm.net
	s := NetSpec{Name: n.name, Shape: slices.Clone(n.shapes[0]), Classes: n.classes}
	for i, l := range n.layers {
		ls := LayerSpec{Op: layerOps[l.kind], In: slices.Clone(l.in)}
		switch l.kind {
		case kindConv:
			c := l.conv
			ls.Name, ls.Out, ls.Kernel, ls.Stride, ls.Pad, ls.Bias, ls.Init = l.name, c.Out, c.Kernel, c.Stride, c.Pad, c.Bias, initNames[c.Init]
			if c.Groups > 1 {
				ls.Groups = c.Groups
			}
			ls.KernelW, ls.StrideW, ls.PadH, ls.PadW, ls.Dilation, ls.DilationW = c.KernelW, c.StrideW, c.PadH, c.PadW, c.Dilation, c.DilationW
			ls.ExtraBottom, ls.ExtraRight = c.ExtraBottom, c.ExtraRight
		case kindGroupNorm:
			ls.Name, ls.Groups = l.name, l.groups
		case kindLayerNorm, kindChannelNorm:
			eps := l.eps
			ls.Name, ls.Eps = l.name, &eps
		case kindL2Normalize:
			eps := l.eps
			ls.Eps = &eps
		case kindLRN:
			alpha, beta, k := l.lrn.Alpha, l.lrn.Beta, l.lrn.K
			ls.Kernel, ls.Alpha, ls.Beta, ls.K = l.lrn.Size, &alpha, &beta, &k
		case kindShuffle:
			ls.Groups = l.groups
		case kindChannels:
			ls.From, ls.To = l.span[0], l.span[1]
		case kindDense:
			ls.Name, ls.Units, ls.NoBias = l.name, l.units, l.noBias
		case kindMaxPool, kindAvgPool:
			ls.Kernel, ls.Stride, ls.Pad, ls.ExcludePad, ls.Ceil = l.k, l.s, l.pad, l.exPad, l.ceil
		case kindPReLU:
			ls.Name, ls.Units = l.name, l.units
		case kindLayerScale, kindChannelShift, kindClassToken, kindPositionEmbedding:
			ls.Name = l.name
		case kindScale, kindShift:
			ls.Name, ls.Owner = l.name, l.owner
		case kindAttention:
			scale := l.scale
			ls.Name, ls.Heads, ls.Scale = l.name, l.heads, &scale
		case kindTokenLinear:
			ls.Name, ls.Units, ls.NoBias = l.name, l.units, l.noBias
		case kindToken:
			ls.Index = l.index
		case kindTokenRange:
			ls.Index, ls.Count = l.index, l.count
		case kindPatches:
			ls.PatchH, ls.PatchW, ls.ChannelMajor = l.patch[0], l.patch[1], l.order == PatchesChannelMajor
		case kindLeakyReLU, kindELU:
			alpha := l.alpha
			ls.Alpha = &alpha
		case kindClamp:
			lo, hi := l.lo, l.hi
			ls.Lo, ls.Hi = &lo, &hi
		case kindAddConst, kindSubConst, kindMulConst, kindDivConst:
			ls.Const = slices.Clone(l.consts)
		case kindDropout:
			ls.Rate = l.rate
			if l.name != dropoutName(i) {
				ls.Name = l.name
			}
		}
		s.Layers = append(s.Layers, ls)
	}
	return s, nil
}

// NetFromSpec rebuilds the network s describes, with the checks of every
// layer call: a spec that does not describe a network (an unknown op, a
// tensor read before it is made, shapes that do not fit) is one error.
func NetFromSpec(s NetSpec) (Model, error) {
	if len(s.Layers) == 0 || len(s.Layers) > maxSpecLayers {
		return nil, fmt.Errorf("network %q of %d layers, want 1 to %d", s.Name, len(s.Layers), maxSpecLayers)
	}
	n := NewNet(s.Name, s.Shape, s.Classes)
	var last Tensor
	for i, l := range s.Layers {
		in := make([]Tensor, len(l.In))
		for k, id := range l.In {
			if id < 0 || id > i {
				return nil, fmt.Errorf("%s: layer %d (%s) reads tensor %d, which is not made before it", s.Name, i, l.Op, id)
			}
			in[k] = Tensor{id}
		}
		var err error
		if last, err = n.replay(i, l, in); err != nil {
			return nil, err
		}
	}
	return n.Model(last)
}

// replay adds layer i of a spec, reading in.
func (n *Net) replay(i int, l LayerSpec, in []Tensor) (Tensor, error) {
	arity := 1
	switch l.Op {
	case "add", "sub", "mul", "channelscale", "attentionpool":
		arity = 2
	case "concat":
		if len(in) < 2 {
			return Tensor{-1}, fmt.Errorf("%s: layer %d (concat) reads %d tensors, want 2 or more", n.name, i, len(in))
		}
		arity = len(in)
	}
	if len(in) != arity {
		return Tensor{-1}, fmt.Errorf("%s: layer %d (%s) reads %d tensors, want %d", n.name, i, l.Op, len(in), arity)
	}
	var t Tensor
	switch l.Op {
	case "conv":
		init, ok := map[string]Init{"uniform": InitUniform, "kaiming-normal": InitKaimingNormal}[l.Init]
		if !ok {
			return Tensor{-1}, fmt.Errorf("%s: layer %d (conv %s): initialisation %q, want uniform or kaiming-normal", n.name, i, l.Name, l.Init)
		}
		t = n.Conv2D(l.Name, in[0], Conv{Out: l.Out, Kernel: l.Kernel, Stride: l.Stride, Pad: l.Pad, Bias: l.Bias, Init: init, Groups: l.Groups,
			KernelW: l.KernelW, StrideW: l.StrideW, PadH: l.PadH, PadW: l.PadW, Dilation: l.Dilation, DilationW: l.DilationW,
			ExtraBottom: l.ExtraBottom, ExtraRight: l.ExtraRight})
	case "groupnorm":
		t = n.GroupNorm(l.Name, in[0], l.Groups)
	case "layernorm":
		eps := float32(layerNormEps) // torch's default
		if l.Eps != nil {
			eps = *l.Eps
		}
		t = n.LayerNorm(l.Name, in[0], eps)
	case "channelnorm":
		if l.Eps == nil {
			return Tensor{-1}, fmt.Errorf("%s: layer %d (channelnorm %s): no eps", n.name, i, l.Name)
		}
		t = n.ChannelNorm(l.Name, in[0], *l.Eps)
	case "lrn":
		if l.Alpha == nil || l.Beta == nil || l.K == nil {
			return Tensor{-1}, fmt.Errorf("%s: layer %d (lrn): want its alpha, beta and k", n.name, i)
		}
		t = n.LocalResponseNorm(in[0], LRN{Size: l.Kernel, Alpha: *l.Alpha, Beta: *l.Beta, K: *l.K})
	case "l2normalize":
		if l.Eps == nil {
			return Tensor{-1}, fmt.Errorf("%s: layer %d (l2normalize): no eps", n.name, i)
		}
		t = n.L2Normalize(in[0], *l.Eps)
	case "relu":
		t = n.ReLU(in[0])
	case "prelu":
		t = n.PReLU(l.Name, in[0], l.Units)
	case "leakyrelu":
		if l.Alpha == nil {
			return Tensor{-1}, fmt.Errorf("%s: layer %d (leakyrelu): no alpha, the negative slope", n.name, i)
		}
		t = n.LeakyReLU(in[0], *l.Alpha)
	case "tanh":
		t = n.Tanh(in[0])
	case "sigmoid":
		t = n.Sigmoid(in[0])
	case "silu":
		t = n.SiLU(in[0])
	case "elu":
		alpha := float32(1) // torch's default
		if l.Alpha != nil {
			alpha = *l.Alpha
		}
		t = n.ELU(in[0], alpha)
	case "softplus":
		t = n.Softplus(in[0])
	case "hardsigmoid":
		t = n.Hardsigmoid(in[0])
	case "hardswish":
		t = n.Hardswish(in[0])
	case "gelu":
		t = n.GELU(in[0])
	case "clamp":
		if l.Lo == nil || l.Hi == nil {
			return Tensor{-1}, fmt.Errorf("%s: layer %d (clamp): want both bounds, lo and hi", n.name, i)
		}
		t = n.Clamp(in[0], *l.Lo, *l.Hi)
	case "maxpool":
		t = n.pool(kindMaxPool, "maxpool", in[0], Pooling{Kernel: l.Kernel, Stride: l.Stride, Pad: l.Pad, Ceil: l.Ceil})
	case "avgpool":
		t = n.pool(kindAvgPool, "avgpool", in[0], Pooling{Kernel: l.Kernel, Stride: l.Stride, Pad: l.Pad, ExcludePad: l.ExcludePad, Ceil: l.Ceil})
	case "globalavgpool":
		t = n.GlobalAvgPool(in[0])
	case "globalmaxpool":
		t = n.GlobalMaxPool(in[0])
	case "layerscale":
		t = n.LayerScale(l.Name, in[0])
	case "channelshift":
		t = n.ChannelShift(l.Name, in[0])
	case "attentionpool":
		t = n.AttentionPool(in[0], in[1])
	case "scale", "shift":
		switch {
		case l.Owner != "" && l.Op == "scale":
			t = n.ScaleLike(l.Owner, in[0])
		case l.Owner != "":
			t = n.ShiftLike(l.Owner, in[0])
		case l.Op == "scale":
			t = n.Scale(l.Name, in[0])
		default:
			t = n.Shift(l.Name, in[0])
		}
	case "tokens":
		t = n.Tokens(in[0])
	case "attention":
		if l.Scale == nil {
			return Tensor{-1}, fmt.Errorf("%s: layer %d (attention %s): no scale", n.name, i, l.Name)
		}
		t = n.Attention(l.Name, in[0], l.Heads, *l.Scale)
	case "tokenlinear":
		t = n.TokenLinear(l.Name, in[0], l.Units, l.NoBias)
	case "classtoken":
		t = n.ClassToken(l.Name, in[0])
	case "positionembedding":
		t = n.PositionEmbedding(l.Name, in[0])
	case "token":
		t = n.Token(in[0], l.Index)
	case "tokenrange":
		t = n.TokenRange(in[0], l.Index, l.Count)
	case "patches":
		order := PatchesPixelMajor
		if l.ChannelMajor {
			order = PatchesChannelMajor
		}
		t = n.Patches(in[0], l.PatchH, l.PatchW, order)
	case "add":
		t = n.Add(in[0], in[1])
	case "sub":
		t = n.Sub(in[0], in[1])
	case "mul":
		t = n.Mul(in[0], in[1])
	case "channelscale":
		t = n.ChannelScale(in[0], in[1])
	case "concat":
		t = n.Concat(in...)
	case "channels":
		t = n.Channels(in[0], l.From, l.To)
	case "shuffle":
		t = n.ShuffleChannels(in[0], l.Groups)
	case "addconst":
		t = n.AddConst(in[0], l.Const)
	case "subconst":
		t = n.SubConst(in[0], l.Const)
	case "mulconst":
		t = n.MulConst(in[0], l.Const)
	case "divconst":
		t = n.DivConst(in[0], l.Const)
	case "flatten":
		t = n.Flatten(in[0])
	case "dense":
		if l.NoBias {
			t = n.DenseNoBias(l.Name, in[0], l.Units)
		} else {
			t = n.Dense(l.Name, in[0], l.Units)
		}
	case "dropout":
		key := i
		if l.Name != "" {
			k, ok := dropoutKey(l.Name)
			if !ok || n.hasLayer(l.Name) {
				return Tensor{-1}, fmt.Errorf("%s: layer %d (dropout %q): want the name dropout#K of a positive K that no other layer has", n.name, i, l.Name)
			}
			key = k
		}
		t = n.dropout(in[0], l.Rate, key)
	default:
		return Tensor{-1}, fmt.Errorf("%s: layer %d: unknown op %q", n.name, i, l.Op)
	}
	return t, n.err
}
