package models

import (
	"fmt"
	"strconv"
	"strings"
)

// ViTPrefix starts the name of a vision transformer: vit:P,D,L,H or
// vit:P,D,L,H,R (see ParseViT).
const ViTPrefix = "vit:"

// ViTConfig is the shape of a vision transformer as timm's
// VisionTransformer takes it.
type ViTConfig struct {
	Patch    int // the side of a square patch (patch_size)
	Dim      int // the width of a token (embed_dim)
	Depth    int // the blocks
	Heads    int // the attention heads of a block, dividing Dim
	MLPRatio int // a block's MLP width over Dim (mlp_ratio); 0 means 4
}

// maxViTField bounds each number of a ViT's name, far below what the
// memory check refuses anyway.
const maxViTField = 1 << 16

// ParseViT returns the configuration of the vision transformer named
// vit:P,D,L,H (patch side, width, depth, heads) or vit:P,D,L,H,R (and MLP
// ratio): whole numbers from 1, the heads dividing the width.
func ParseViT(name string) (ViTConfig, error) {
	list, ok := strings.CutPrefix(name, ViTPrefix)
	fields := strings.Split(list, ",")
	want := fmt.Sprintf("%s: want vit:PATCH,DIM,DEPTH,HEADS[,MLP_RATIO], e.g. vit:4,192,12,3", name)
	if !ok || len(fields) < 4 || len(fields) > 5 {
		return ViTConfig{}, fmt.Errorf("%s", want)
	}
	v := make([]int, 5)
	v[4] = 4
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > maxViTField {
			return ViTConfig{}, fmt.Errorf("%s: %q is not a whole number from 1 to %d (%s)", name, f, maxViTField, strings.TrimPrefix(want, name+": "))
		}
		v[i] = n
	}
	c := ViTConfig{Patch: v[0], Dim: v[1], Depth: v[2], Heads: v[3], MLPRatio: v[4]}
	if c.Dim%c.Heads != 0 {
		return ViTConfig{}, fmt.Errorf("%s: %d heads do not divide the width %d", name, c.Heads, c.Dim)
	}
	return c, nil
}

// NewViT returns timm's VisionTransformer of configuration c for images
// of the given shape [C,H,W] (H and W multiples of c.Patch) with classes
// classes: a patch embedding (a c.Patch×c.Patch convolution moved by
// c.Patch), a class token and a position embedding; c.Depth pre-norm
// blocks of multi-head self-attention and a GELU MLP of c.MLPRatio·c.Dim
// units, each LayerNorm of ε 1e-6 and each with its residual join; a
// final LayerNorm, and a Linear head on the class token. Its name is
// vit:P,D,L,H,R. Layers start as PyTorch's defaults, the tokens as timm's
// (N(0, 0.02²)).
func NewViT(shape []int, classes int, c ViTConfig) (Model, error) {
	if c.MLPRatio == 0 {
		c.MLPRatio = 4
	}
	name := fmt.Sprintf("%s%d,%d,%d,%d,%d", ViTPrefix, c.Patch, c.Dim, c.Depth, c.Heads, c.MLPRatio)
	if len(shape) != 3 || shape[0] < 1 || shape[1] < c.Patch || shape[2] < c.Patch || shape[1]%c.Patch != 0 || shape[2]%c.Patch != 0 {
		return nil, fmt.Errorf("%s needs images [C,H,W] whose sides are multiples of its patch side %d; the data's samples have shape %v", name, c.Patch, shape)
	}
	n := NewNet(name, shape, classes)
	linear := func(name string, x Tensor, out int) Tensor {
		return n.Conv2D(name, x, Conv{Out: out, Kernel: 1, Bias: true})
	}
	x := n.Conv2D("patch_embed", n.Input(), Conv{Out: c.Dim, Kernel: c.Patch, Stride: c.Patch, Bias: true})
	x = n.PositionEmbedding("pos_embed", n.ClassToken("cls_token", n.Tokens(x)))
	for i := range c.Depth {
		b := fmt.Sprintf("blocks.%d.", i)
		qkv := linear(b+"attn.qkv", n.ChannelNorm(b+"norm1", x, 1e-6), 3*c.Dim)
		x = n.Add(x, linear(b+"attn.proj", n.Attention(b+"attn", qkv, c.Heads, 0), c.Dim))
		h := n.GELU(linear(b+"mlp.fc1", n.ChannelNorm(b+"norm2", x, 1e-6), c.MLPRatio*c.Dim))
		x = n.Add(x, linear(b+"mlp.fc2", h, c.Dim))
	}
	return n.Model(n.Dense("head", n.Token(n.ChannelNorm("norm", x, 1e-6), 0), classes))
}
