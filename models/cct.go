package models

import (
	"fmt"
	"strconv"
	"strings"
)

// CCTPrefix starts the name of a Compact Convolutional Transformer:
// cct:L/KxN or cct:L,H,R,D/KxN (see ParseCCT).
const CCTPrefix = "cct:"

// CCTConfig is the shape of a Compact Convolutional Transformer (Hassani
// et al. 2021) as SHI-Labs/Compact-Transformers builds it.
type CCTConfig struct {
	Layers   int // encoder layers
	Heads    int // attention heads of a layer, dividing Dim
	MLPRatio int // a layer's MLP width over Dim
	Dim      int // the width of a token (embedding_dim)
	Kernel   int // the side of the tokenizer's convolutions
	Convs    int // the tokenizer's convolutions (n_conv_layers)
}

// cctSizes are the paper's CCT-L: heads, MLP ratio and width by layer
// count (CCT-2 and -4 of width 128, -6 and -7 of 256, -14 of 384).
var cctSizes = map[int][3]int{2: {2, 1, 128}, 4: {2, 1, 128}, 6: {4, 2, 256}, 7: {4, 2, 256}, 14: {6, 3, 384}}

// ParseCCT returns the configuration of the Compact Convolutional
// Transformer named cct:L/KxN, the paper's CCT-L/KxN (L one of 2, 4, 6, 7,
// 14: CCT-7/3x1 is cct:7/3x1), or cct:L,H,R,D/KxN (layers, heads, MLP
// ratio, width; N convolutions of K×K in the tokenizer): whole numbers
// from 1, the heads dividing the width.
func ParseCCT(name string) (CCTConfig, error) {
	want := fmt.Sprintf("%s: want cct:LAYERS/KxN (the paper's CCT-2, -4, -6, -7, -14: cct:7/3x1) or cct:LAYERS,HEADS,MLP_RATIO,DIM/KxN", name)
	spec, ok := strings.CutPrefix(name, CCTPrefix)
	encoder, tokenizer, slash := strings.Cut(spec, "/")
	kernel, convs, x := strings.Cut(tokenizer, "x")
	fields := strings.Split(encoder, ",")
	if !ok || !slash || !x || len(fields) != 1 && len(fields) != 4 {
		return CCTConfig{}, fmt.Errorf("%s", want)
	}
	var v []int
	for _, f := range append(fields, kernel, convs) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > maxViTField {
			return CCTConfig{}, fmt.Errorf("%s: %q is not a whole number from 1 to %d (%s)", name, f, maxViTField, strings.TrimPrefix(want, name+": "))
		}
		v = append(v, n)
	}
	if len(fields) == 1 {
		size, ok := cctSizes[v[0]]
		if !ok {
			return CCTConfig{}, fmt.Errorf("%s: the paper has no CCT-%d (2, 4, 6, 7 or 14 layers); give its size as cct:%d,HEADS,MLP_RATIO,DIM/%s", name, v[0], v[0], tokenizer)
		}
		v = []int{v[0], size[0], size[1], size[2], v[1], v[2]}
	}
	c := CCTConfig{Layers: v[0], Heads: v[1], MLPRatio: v[2], Dim: v[3], Kernel: v[4], Convs: v[5]}
	if c.Dim%c.Heads != 0 {
		return CCTConfig{}, fmt.Errorf("%s: %d heads do not divide the width %d", name, c.Heads, c.Dim)
	}
	return c, nil
}

// NewCCT returns SHI-Labs' Compact Convolutional Transformer of
// configuration c for images of the given shape [C,H,W] with classes
// classes. The tokenizer is c.Convs convolutions of c.Kernel×c.Kernel
// without bias (stride max(1, K/2−1), padding max(1, K/2); 64 channels
// but the last, of c.Dim), each followed by ReLU and a 3×3 max pool of
// stride 2 and padding 1; then a learned position embedding; c.Layers
// encoder layers, each src + attention(LayerNorm(src)) (qkv without bias),
// a LayerNorm of that sum, then src + Linear(GELU(Linear(src))) of
// c.MLPRatio·c.Dim units; a final LayerNorm (all ε 1e-5), sequence pooling
// (AttentionPool) and a Linear head. Its name is cct:L,H,R,D/KxN. Layers
// start as PyTorch's defaults, the position embedding as N(0, 0.02²);
// there is no dropout or stochastic depth.
func NewCCT(shape []int, classes int, c CCTConfig) (Model, error) {
	name := fmt.Sprintf("%s%d,%d,%d,%d/%dx%d", CCTPrefix, c.Layers, c.Heads, c.MLPRatio, c.Dim, c.Kernel, c.Convs)
	if err := imageFits(name, shape, 1); err != nil {
		return nil, err
	}
	n := NewNet(name, shape, classes)
	linear := func(name string, x Tensor, out int, bias bool) Tensor {
		return n.Conv2D(name, x, Conv{Out: out, Kernel: 1, Bias: bias})
	}
	x := n.Input()
	for i := range c.Convs {
		out := 64
		if i == c.Convs-1 {
			out = c.Dim
		}
		conv := Conv{Out: out, Kernel: c.Kernel, Stride: max(1, c.Kernel/2-1), Pad: max(1, c.Kernel/2)}
		x = n.ReLU(n.Conv2D(fmt.Sprintf("tokenizer.conv_layers.%d.0", i), x, conv))
		x = n.MaxPool2D(x, Pooling{Kernel: 3, Stride: 2, Pad: 1})
	}
	x = n.PositionEmbedding("positional_emb", x)
	for i := range c.Layers {
		b := fmt.Sprintf("blocks.%d.", i)
		qkv := linear(b+"self_attn.qkv", n.ChannelNorm(b+"pre_norm", x, 1e-5), 3*c.Dim, false)
		x = n.ChannelNorm(b+"norm1", n.Add(x, linear(b+"self_attn.proj", n.Attention(b+"self_attn", qkv, c.Heads, 0), c.Dim, true)), 1e-5)
		x = n.Add(x, linear(b+"linear2", n.GELU(linear(b+"linear1", x, c.MLPRatio*c.Dim, true)), c.Dim, true))
	}
	x = n.ChannelNorm("norm", x, 1e-5)
	scores := linear("attention_pool", x, 1, true)
	return n.Model(n.Dense("fc", n.AttentionPool(n.Tokens(x), n.Tokens(scores)), classes))
}
