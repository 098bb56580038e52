package models

import (
	"math"
	"slices"
)

// The layers of transformers and MLP-Mixers. A sequence of T tokens of D
// features, torch's [N,T,D], is held as the image [D,T,1]: channel-major,
// so that a Linear along the features is a 1×1 Conv2D, nn.LayerNorm(D)
// ChannelNorm, and GELU and the residual Add what they are on images. The
// layers below read any image [C,H,W] as the H·W tokens of its positions
// in row-major order, as torch's x.flatten(2).transpose(1, 2) of a patch
// embedding does.

// Tokens views x [C,H,W] as the token sequence [C,H·W,1], the same values
// in the same order (torch's x.flatten(2) of a patch embedding).
func (n *Net) Tokens(x Tensor) Tensor {
	name := n.autoName("tokens")
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	s, ok := n.image(name, x)
	if !ok {
		return Tensor{-1}
	}
	return n.record(netLayer{kind: kindTokens, name: name}, []int{s[0], s[1] * s[2], 1}, x)
}

// Attention adds multi-head self-attention over the positions of qkv
// [3D,H,W], the output of a Linear D → 3D (a 1×1 Conv2D) of the tokens,
// as timm's ViT computes it between its qkv and proj Linears: channel
// part·D + h·(D/heads) + j holds feature j of head h of the queries (part
// 0), keys (1) and values (2); each head's scores (q·k)·scale are
// normalised by a softmax over the keys and weight the values. It writes
// [D,H,W]. A scale of 0 means 1/√(D/heads), torch's. The layer has no
// parameters.
func (n *Net) Attention(name string, qkv Tensor, heads int, scale float32) Tensor {
	if !n.reads(name, qkv) || !n.named(name) {
		return Tensor{-1}
	}
	s, ok := n.image(name, qkv)
	if !ok {
		return Tensor{-1}
	}
	switch {
	case s[0]%3 != 0:
		return n.fail(name, "reads %d channels, want 3·D: the queries, keys and values", s[0])
	case heads < 1 || (s[0]/3)%heads != 0:
		return n.fail(name, "%d heads do not divide the %d features", heads, s[0]/3)
	case scale == 0:
		scale = float32(1 / math.Sqrt(float64(s[0]/3/heads)))
	case !(scale > 0) || math.IsInf(float64(scale), 0):
		return n.fail(name, "scale %g, want a finite number above 0", scale)
	}
	return n.record(netLayer{kind: kindAttention, name: name, heads: heads, scale: scale}, []int{s[0] / 3, s[1], s[2]}, qkv)
}

// TokenLinear adds a Linear along the positions of x [C,H,W], MLP-Mixer's
// token mixing (torch's nn.Linear(H·W, units) of x.transpose(1, 2)):
// y[c,k] = Σ_p x[c,p]·name.w[p,k] + name.b[k], writing [C,units,1]. Its
// weights [H·W,units] and bias [units] (none where noBias) have fan-in H·W,
// as torch's.
func (n *Net) TokenLinear(name string, x Tensor, units int, noBias bool) Tensor {
	if !n.reads(name, x) || !n.named(name) {
		return Tensor{-1}
	}
	s, ok := n.image(name, x)
	if !ok {
		return Tensor{-1}
	}
	if units < 1 || units > maxLayerWidth {
		return n.fail(name, "%d units, want 1 to %d", units, maxLayerWidth)
	}
	p := s[1] * s[2]
	n.addInit(name+".w", p, InitUniform, p, units)
	if !noBias {
		n.addInit(name+".b", p, InitUniform, units)
	}
	return n.record(netLayer{kind: kindTokenLinear, name: name, units: units, noBias: noBias}, []int{s[0], units, 1}, x)
}

// ClassToken prepends a learned token name.c [D] to the positions of x
// [D,H,W], writing [D,H·W+1,1] (ViT's torch.cat((cls_token.expand(N, -1,
// -1), x), dim=1)). The token starts as timm's, N(0, 0.02²).
func (n *Net) ClassToken(name string, x Tensor) Tensor {
	if !n.reads(name, x) || !n.named(name) {
		return Tensor{-1}
	}
	s, ok := n.image(name, x)
	if !ok {
		return Tensor{-1}
	}
	n.addInit(name+".c", s[0], initTokenNormal, s[0])
	return n.record(netLayer{kind: kindClassToken, name: name}, []int{s[0], s[1]*s[2] + 1, 1}, x)
}

// PositionEmbedding adds a learned value a position and channel to x
// [D,H,W]: y[d,t] = x[d,t] + name.p[t,d], name.p [H·W,D] (ViT's x +
// pos_embed, pos_embed [1,T,D]). It starts as timm's, N(0, 0.02²).
func (n *Net) PositionEmbedding(name string, x Tensor) Tensor {
	if !n.reads(name, x) || !n.named(name) {
		return Tensor{-1}
	}
	s, ok := n.image(name, x)
	if !ok {
		return Tensor{-1}
	}
	n.addInit(name+".p", s[0], initTokenNormal, s[1]*s[2], s[0])
	return n.record(netLayer{kind: kindPositionEmbedding, name: name}, s, x)
}

// Token takes the features of position index of x [D,H,W] (row-major),
// writing [D] (ViT's x[:, 0], the class token, for its head).
func (n *Net) Token(x Tensor, index int) Tensor {
	name := n.autoName("token")
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	s, ok := n.image(name, x)
	if !ok {
		return Tensor{-1}
	}
	if index < 0 || index >= s[1]*s[2] {
		return n.fail(name, "position %d of %d", index, s[1]*s[2])
	}
	return n.record(netLayer{kind: kindToken, name: name, index: index}, []int{s[0]}, x)
}

// TokenRange takes positions from … from+count-1 of x [D,H,W] (row-major),
// writing [D,count,1] (torch's x[:, from:from+count]; timm's x[:, 1:] of
// the tokens after the class token, for global_pool="avg").
func (n *Net) TokenRange(x Tensor, from, count int) Tensor {
	name := n.autoName("tokenrange")
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	s, ok := n.image(name, x)
	if !ok {
		return Tensor{-1}
	}
	if from < 0 || count < 1 || from+count > s[1]*s[2] {
		return n.fail(name, "positions [%d,%d) of %d", from, from+count, s[1]*s[2])
	}
	return n.record(netLayer{kind: kindTokenRange, name: name, index: from, count: count}, []int{s[0], count, 1}, x)
}

// AttentionPool pools the positions of x [D,H,W] by the softmax of their
// scores s [1,H,W] (a Linear D → 1 of the tokens, a 1×1 Conv2D): y[d] =
// Σ_t softmax(s)[t]·x[d,t], writing [D]: a Compact Convolutional
// Transformer's SeqPool, torch's softmax(s, dim=1).transpose(-1, -2) @ x.
// The layer has no parameters of its own.
func (n *Net) AttentionPool(x, s Tensor) Tensor {
	name := n.autoName("attentionpool")
	if !n.reads(name, x, s) {
		return Tensor{-1}
	}
	sx, ok := n.image(name, x)
	if !ok {
		return Tensor{-1}
	}
	if ss := n.shapes[s.id]; !slices.Equal(ss, []int{1, sx[1], sx[2]}) {
		return n.fail(name, "scores of shape %v for tokens %v, want [1,%d,%d]", ss, sx, sx[1], sx[2])
	}
	return n.record(netLayer{kind: kindAttentionPool, name: name}, []int{sx[0]}, x, s)
}

// tokenInitStd is the deviation of a class token's and a position
// embedding's initial values (timm's trunc_normal_(std=.02), whose
// truncation at ±2 is 100 deviations out).
const tokenInitStd = 0.02
