package models

import (
	"fmt"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// The learned tokens of a vision transformer: its position embedding (the
// Add of a constant [1,T,D]) and its class tokens (a constant [1,1,D]
// expanded or tiled to the batch and concatenated before the tokens), each
// trained from the file's values.

// positionEmbedding imports the Add n of channels-last tokens [T,D] and a
// constant [1,T,D] (or [T,D]; of sequence-first tokens, [T,1,D]) as
// PositionEmbedding, trained, its values x⁰ (ViT's x + pos_embed,
// pos_embed an nn.Parameter). It reports false for other Adds.
func (im *importer) positionEmbedding(n *onnx.Node) (bool, error) {
	if len(n.Inputs) != 2 {
		return false, nil
	}
	a, b := im.vals[n.Inputs[0]], im.vals[n.Inputs[1]]
	if a.kind == ivConst {
		a, b = b, a
	}
	if !im.lastTokens(a) || b.kind != ivConst || !b.c.float {
		return false, nil
	}
	dims := b.c.dims
	switch {
	case len(dims) == 3 && dims[0] == 1 && !a.seq:
		dims = dims[1:]
	case len(dims) == 3 && dims[1] == 1 && a.seq:
		dims = []int{dims[0], dims[2]}
	case a.seq:
		return false, nil
	}
	if !slices.Equal(dims, a.view) {
		return false, nil
	}
	t, _, err := im.fileLayer(n, b.c.name, ".p", "adds", b.c.f, func(name string) Tensor { return im.net.PositionEmbedding(name, a.t) })
	if err != nil {
		return true, err
	}
	return true, im.set(n, ival{kind: ivAct, t: t, view: slices.Clone(a.view), last: true, seq: a.seq})
}

// expandToken imports the Expand n of a constant [1,1,D] (or [D]) to
// [N,1,D] (or, sequence-first, [1,N,D]): a class token, which only a
// Concat before the tokens may read;
// and folds the Expand of a constant to a shape without the batch (the
// repeat(N, 1, 1) of lucidrains's ViT expands by ones first). It reports
// false for other Expands.
func (im *importer) expandToken(n *onnx.Node) (bool, error) {
	v, ok := im.vals[firstInput(n)]
	if !ok || v.kind != ivConst {
		return false, nil
	}
	to, err := im.ints(n, 1, "shape", false)
	if err != nil {
		return false, nil
	}
	if !slices.Contains(to, batchDim) {
		c, err := broadcastTo(v.c, to)
		if err == nil {
			c.name = v.c.name // a class token's name, which names its layer
		}
		return true, im.fold(n, c, err)
	}
	if !tokenConst(v.c) || len(to) != 3 || !(to[0] == batchDim && to[1] == 1 || to[0] == 1 && to[1] == batchDim) || (to[2] != 1 && to[2] != int64(v.c.size())) {
		return false, nil
	}
	return true, im.set(n, ival{kind: ivPending, p: &pending{kind: pClassToken, w: v.c, node: n, tok: &tokenPart{seq: to[0] == 1}}})
}

// tileToken imports the Tile n of a constant [1,1,D] by [N,1,1] (torch's
// cls_token.repeat(N, 1, 1)): a class token, as expandToken's. It reports
// false for other Tiles.
func (im *importer) tileToken(n *onnx.Node) (bool, error) {
	v, ok := im.vals[firstInput(n)]
	if !ok || v.kind != ivConst || !tokenConst(v.c) || len(v.c.dims) != 3 {
		return false, nil
	}
	reps, err := im.ints(n, 1, "repeats", false)
	if err != nil || !slices.Equal(reps, []int64{batchDim, 1, 1}) {
		return false, nil
	}
	return true, im.set(n, ival{kind: ivPending, p: &pending{kind: pClassToken, w: v.c, node: n, tok: &tokenPart{}}})
}

// tokenConst reports whether c holds one token: float values along its
// last axis only.
func tokenConst(c *iconst) bool {
	return c.float && len(c.dims) > 0 && c.size() == c.dims[len(c.dims)-1]
}

// broadcastTo returns c broadcast to the shape to, as ONNX's Expand: the
// shapes aligned at the end, each dimension of 1 of either repeated.
func broadcastTo(c *iconst, to []int64) (*iconst, error) {
	rank := max(len(c.dims), len(to))
	dims := make([]int, rank)
	for i := range dims {
		a, b := 1, int64(1)
		if k := i - (rank - len(c.dims)); k >= 0 {
			a = c.dims[k]
		}
		if k := i - (rank - len(to)); k >= 0 {
			b = to[k]
		}
		switch {
		case b < 0 || b > maxFolded:
			return nil, fmt.Errorf("expands a constant of shape %v to %s", c.dims, shapeText(to))
		case int64(a) == b || b == 1:
			dims[i] = a
		case a == 1:
			dims[i] = int(b)
		default:
			return nil, fmt.Errorf("expands a constant of shape %v to %s, which do not broadcast", c.dims, shapeText(to))
		}
	}
	if product(dims) > maxFolded {
		return nil, fmt.Errorf("expands a constant of shape %v to %v, more than %d values", c.dims, dims, maxFolded)
	}
	off := rank - len(c.dims)
	return remap(c, dims, func(idx []int) int {
		src := make([]int, len(c.dims))
		for k := range src {
			if c.dims[k] != 1 {
				src[k] = idx[k+off]
			}
		}
		return flatIndex(src, c.dims)
	}), nil
}

// classToken imports the Concat n, along the tokens' axis (1, or 0 of
// sequence-first tokens), of a class token (see expandToken) and
// channels-last tokens [T,D]: ClassToken.
func (im *importer) classToken(n *onnx.Node) error {
	x := im.vals[n.Inputs[len(n.Inputs)-1]]
	axisT := int64(1)
	if x.seq {
		axisT = 0
	}
	if a := attrInt(n, "axis", 0); len(n.Inputs) < 2 || a != axisT && a != axisT-3 {
		return fmt.Errorf("concatenates the tokens with %d tensors along axis %d; the import takes the Concat of class tokens and the tokens along their axis %d, torch.cat((cls_token.expand(N, -1, -1), x), dim=1)", len(n.Inputs)-1, a, axisT)
	}
	t := x.t
	// DeiT's torch.cat((cls, dist, x), dim=1): the last token prepended first.
	for k := len(n.Inputs) - 2; k >= 0; k-- {
		c := im.vals[n.Inputs[k]]
		if c.kind != ivPending || c.p.kind != pClassToken || !im.lastTokens(x) || c.p.tok.seq != x.seq {
			return fmt.Errorf("concatenates %q and %q along the tokens; the import takes class tokens (Expand of a constant [1,1,D]) first, then the tokens", n.Inputs[k], n.Inputs[len(n.Inputs)-1])
		}
		if c.p.w.size() != x.view[1] {
			return fmt.Errorf("prepends a class token of %d features to tokens of %d", c.p.w.size(), x.view[1])
		}
		var err error
		if t, _, err = im.fileLayer(c.p.node, c.p.w.name, ".c", "prepends", c.p.w.f, func(name string) Tensor { return im.net.ClassToken(name, t) }); err != nil {
			return err
		}
	}
	return im.set(n, ival{kind: ivAct, t: t, view: []int{x.view[0] + len(n.Inputs) - 1, x.view[1]}, last: true, seq: x.seq})
}
