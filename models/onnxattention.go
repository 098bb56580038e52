package models

import (
	"fmt"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// The importer's handling of timm's ViT attention (see onnxtokens.go):
// the chain from the qkv Linear's output to the Reshape that joins the
// heads again becomes one Attention layer, each node of the chain a
// pending value that only the next may read.

// attentionWant is the chain, for refusals.
const attentionWant = "Reshape of qkv [N,T,3D] to [N,T,3,h,D/h], Transpose perm [2,0,3,1,4], Split (and Squeeze) or Gather of q, k, v along axis 0 " +
	"(or qkv.chunk(3, dim=-1), each reshaped to [N,T,h,D/h] and transposed, perm [0,2,1,3]), " +
	"Transpose of k perm [0,1,3,2], MatMul(q, kᵀ), Mul by a scale (of the scores or of q), Softmax over the last axis, MatMul by v, " +
	"Transpose perm [0,2,1,3], Reshape to [N,T,D]"

// reshapeTarget returns the per-sample shape the Reshape n asks of data of
// per-sample shape view.
func (im *importer) reshapeTarget(n *onnx.Node, view []int) ([]int, error) {
	target, err := im.ints(n, 1, "target shape", false)
	if err != nil {
		return nil, err
	}
	return im.perSample(target, view, attrInt(n, "allowzero", 0) != 0)
}

// qkvReshape imports the Reshape n of channels-last tokens x [T,3D] to
// [T,3,h,D/h], the start of an attention.
func (im *importer) qkvReshape(n *onnx.Node, x ival) error {
	to, err := im.reshapeTarget(n, x.view)
	if err != nil {
		return err
	}
	t, c := x.view[0], x.view[1]
	if len(to) == 3 && to[0] == t && to[1] >= 1 && to[1]*to[2] == c {
		// q, k or v of a Linear of its own split into heads (HF's
		// transpose_for_scores); which of them, its readers tell.
		return im.set(n, ival{kind: ivPending, p: &pending{kind: pQKVChunkHeads, x: x, tok: &tokenPart{qkv: x, heads: to[1], part: -1, sep: true}}})
	}
	if len(to) != 4 || to[0] != t || to[1] != 3 || to[2] < 1 || to[2]*to[3] != c/3 || c%3 != 0 {
		return fmt.Errorf("reshapes the tokens [N,%d,%d] to [N,%s]; the import takes there only an attention's qkv reshaped to [N,%d,3,heads,%d/heads] (%s)", t, c, joinInts(to), t, c/3, attentionWant)
	}
	return im.set(n, ival{kind: ivPending, p: &pending{kind: pQKV, x: x, tok: &tokenPart{qkv: x, heads: to[2]}}})
}

// tokenPending imports n, a reader of the pending value p of a token
// pattern.
func (im *importer) tokenPending(n *onnx.Node, p *pending) error {
	switch p.kind {
	case pTokenMatMul:
		return im.tokenMatMulNext(n, p)
	case pPoolWeights, pPoolWeightsT, pPooled:
		return im.poolNext(n, p)
	case pClassToken:
		if n.OpType != "Concat" {
			return fmt.Errorf("reads %q, a class token expanded to [N,1,D]; the import takes it only as the first input of a Concat before the tokens", firstInput(n))
		}
		return im.classToken(n)
	}
	tp := p.tok
	if p.kind == pSeqFlat {
		return im.seqNext(n, p)
	}
	next := func(kind pendKind, t tokenPart) error {
		return im.set(n, ival{kind: ivPending, p: &pending{kind: kind, x: tp.qkv, tok: &t}})
	}
	refuse := func() error {
		return fmt.Errorf("reads %s as %s; the import takes an attention written as timm's: %s", pendNames[p.kind], n.OpType, attentionWant)
	}
	switch {
	case p.kind == pQKV && n.OpType == "Transpose" && permIs(n, 2, 0, 3, 1, 4):
		return next(pQKVPerm, *tp)
	case p.kind == pQKVPerm && n.OpType == "Split":
		return im.qkvSplit(n, tp)
	case p.kind == pQKVPerm && n.OpType == "Gather":
		index, err := im.ints(n, 1, "indices", false)
		if err != nil {
			return err
		}
		ic, _ := im.konst(n, 1, "indices", false)
		if attrInt(n, "axis", 0) != 0 || len(index) != 1 || len(ic.dims) != 0 || index[0] < 0 || index[0] > 2 {
			return fmt.Errorf("gathers %v along axis %d of an attention's permuted qkv; want q, k or v: one scalar index 0, 1 or 2 along axis 0", index, attrInt(n, "axis", 0))
		}
		t := *tp
		t.part = int(index[0])
		return next(pQKVPart, t)
	case p.kind == pQKVPart && tp.packed && n.OpType == "Squeeze":
		axes, _, err := im.intsAttrOrInput(n, "axes", 1)
		if err != nil {
			return err
		}
		if !slices.Equal(axes, []int64{0}) {
			return fmt.Errorf("squeezes axes %v of an attention's q, k or v [1,N,h,T,D/h]; want axis 0", axes)
		}
		t := *tp
		t.packed = false
		return next(pQKVPart, t)
	case p.kind == pQKVPart && !tp.packed && (tp.part == 1 || tp.part == -1) && n.OpType == "Transpose" && permIs(n, 0, 1, 3, 2):
		return next(pKeysT, tp.as(1))
	case (p.kind == pQKVChunk || p.kind == pQKVChunkHeads) && tp.seq && n.OpType == "Shape":
		_, di := tp.dims()
		d := int64(di)
		s := []int64{int64(tp.qkv.view[0]), batchDim, d}
		if p.kind == pQKVChunkHeads {
			s = []int64{int64(tp.qkv.view[0]), batchMul(int64(tp.heads)), d / int64(tp.heads)}
		}
		return im.fold(n, shapeSlice(n, s), nil)
	case (p.kind == pContext || p.kind == pContextT) && !tp.seq && n.OpType == "Shape":
		// HF's context.view(context.size()[:-2] + (D,)).
		t, d := tp.dims()
		s := []int64{batchDim, int64(tp.heads), int64(t), int64(d / tp.heads)}
		if p.kind == pContextT {
			s[1], s[2] = s[2], s[1]
		}
		return im.fold(n, shapeSlice(n, s), nil)
	case p.kind == pQKVChunk && n.OpType == "Reshape" && tp.seq:
		return im.seqChunkHeads(n, tp)
	case p.kind == pQKVChunk && n.OpType == "Reshape":
		return im.chunkHeads(n, tp)
	case p.kind == pQKVChunkHeads && n.OpType == "Transpose" && (permIs(n, 0, 2, 1, 3) && !tp.seq || permIs(n, 1, 0, 2) && tp.seq):
		return next(pQKVPart, *tp)
	case p.kind == pQKVChunkHeads && (tp.part == 1 || tp.part == -1) && n.OpType == "Transpose" && (permIs(n, 0, 2, 3, 1) && !tp.seq || permIs(n, 1, 2, 0) && tp.seq):
		return next(pKeysT, tp.as(1))
	case (p.kind == pQKVPart && !tp.packed && (tp.part == 0 || tp.part == -1) || p.kind == pScores) && (n.OpType == "Mul" || n.OpType == "Div"):
		return im.attentionScale(n, p)
	case n.OpType == "MatMul" || n.OpType == "Einsum":
		return im.attentionMatMul(n)
	case p.kind == pScores && n.OpType == "Softmax":
		if a := attrInt(n, "axis", -1); a != -1 && a != 3 {
			return fmt.Errorf("Softmax of an attention's scores over axis %d; want the keys, axis -1", a)
		}
		return next(pProbs, *tp)
	case p.kind == pContext && n.OpType == "Transpose" && (permIs(n, 0, 2, 1, 3) && !tp.seq || permIs(n, 1, 0, 2) && tp.seq):
		return im.set(n, ival{kind: ivPending, p: &pending{kind: pContextT, x: p.x, tok: tp}})
	case p.kind == pContextT && n.OpType == "Reshape" && tp.seq:
		t, d := tp.dims()
		to, err := im.ints(n, 1, "target shape", false)
		if err != nil {
			return err
		}
		if !slices.Equal(to, []int64{batchMul(int64(t)), int64(d)}) && !slices.Equal(to, []int64{-1, int64(d)}) {
			return fmt.Errorf("reshapes an attention's output [%d,N·h,%d/h] to %s; want [%d·N,%d]", t, d, shapeText(to), t, d)
		}
		return im.set(n, seqFlat(ival{kind: ivAct, t: p.x.t, view: []int{t, d}, last: true, seq: true}))
	case p.kind == pContextT && n.OpType == "Reshape":
		t, d := tp.dims()
		to, err := im.reshapeTarget(n, []int{t, d})
		if err != nil {
			return err
		}
		if !slices.Equal(to, []int{t, d}) {
			return fmt.Errorf("reshapes an attention's output to [N,%s]; want the tokens [N,%d,%d]", joinInts(to), t, d)
		}
		return im.set(n, ival{kind: ivAct, t: p.x.t, view: []int{t, d}, last: true})
	}
	return refuse()
}

// qkvChunk imports the Slice or Split n of channels-last tokens x [T,C]
// along the last axis: into thirds (qkv.chunk(3, dim=-1)), an attention's
// q, k or v; into other parts (gMLP's u, v = x.chunk(2, dim=-1)), ranges
// of the features (Channels).
func (im *importer) qkvChunk(n *onnx.Node, x ival, seq bool) error {
	c := x.view[1]
	d := c / 3
	if n.OpType == "Split" {
		sizes, has, err := im.intsAttrOrInput(n, "split", 1)
		if err != nil {
			return err
		}
		k := len(n.Outputs)
		if a := attrInt(n, "axis", 0); a != -1 && a != 2 || !has && c%k != 0 || has && (len(sizes) != k || sum64(sizes) != int64(c) || slices.Min(sizes) < 1) {
			return fmt.Errorf("splits the tokens [N,%s] along axis %d into %d parts (sizes %v); the import takes parts of the last axis that cover it", joinInts(x.view), a, k, sizes)
		}
		if !has {
			sizes = slices.Repeat([]int64{int64(c / k)}, k)
		}
		if c%3 == 0 && slices.Equal(sizes, []int64{int64(d), int64(d), int64(d)}) {
			for i, out := range n.Outputs {
				im.vals[out] = ival{kind: ivPending, p: &pending{kind: pQKVChunk, x: x, tok: &tokenPart{qkv: x, part: i, seq: seq}}}
			}
			return im.net.Err()
		}
		from := 0
		for i, out := range n.Outputs {
			to := from + int(sizes[i])
			im.vals[out] = ival{kind: ivAct, t: im.net.Channels(x.t, from, to), view: []int{x.view[0], to - from}, last: true, seq: seq}
			from = to
		}
		return im.net.Err()
	}
	starts, ends, axes, steps, hasAxes, err := im.sliceArgs(n)
	if err != nil {
		return err
	}
	if !hasAxes || len(axes) != 1 || (axes[0] != -1 && axes[0] != 2) || len(starts) != 1 || len(ends) != 1 || steps != nil && (len(steps) != 1 || steps[0] != 1) {
		return fmt.Errorf("slices the tokens [N,%s] along axes %v with steps %v; the import takes there one range of the last axis, step 1", joinInts(x.view), axes, steps)
	}
	from, count := sliceRange(starts[0], ends[0], 1, c)
	if count == 0 {
		return fmt.Errorf("slices no feature of the tokens [N,%s] (starts %v, ends %v)", joinInts(x.view), starts, ends)
	}
	if c%3 == 0 && count == d && from%d == 0 {
		return im.set(n, ival{kind: ivPending, p: &pending{kind: pQKVChunk, x: x, tok: &tokenPart{qkv: x, part: from / d, seq: seq}}})
	}
	return im.set(n, ival{kind: ivAct, t: im.net.Channels(x.t, from, from+count), view: []int{x.view[0], count}, last: true, seq: seq})
}

// sum64 returns the sum of v.
func sum64(v []int64) int64 {
	var s int64
	for _, x := range v {
		s += x
	}
	return s
}

// chunkHeads imports the Reshape n of a third of an attention's qkv
// [T,D] to [T,h,D/h].
func (im *importer) chunkHeads(n *onnx.Node, tp *tokenPart) error {
	t, d := tp.dims()
	to, err := im.reshapeTarget(n, []int{t, d})
	if err != nil {
		return err
	}
	if len(to) != 3 || to[0] != t || to[1] < 1 || to[1]*to[2] != d {
		return fmt.Errorf("reshapes an attention's q, k or v [N,%d,%d] to [N,%s]; want its heads, [N,%d,heads,%d/heads]", t, d, joinInts(to), t, d)
	}
	part := *tp
	part.heads = to[1]
	return im.set(n, ival{kind: ivPending, p: &pending{kind: pQKVChunkHeads, x: tp.qkv, tok: &part}})
}

// qkvSplit imports the Split n of an attention's permuted qkv into q, k
// and v along axis 0.
func (im *importer) qkvSplit(n *onnx.Node, tp *tokenPart) error {
	sizes, has, err := im.intsAttrOrInput(n, "split", 1)
	if err != nil {
		return err
	}
	if attrInt(n, "axis", 0) != 0 || len(n.Outputs) != 3 || has && !slices.Equal(sizes, []int64{1, 1, 1}) {
		return fmt.Errorf("splits an attention's permuted qkv along axis %d into %d parts (sizes %v); want q, k and v along axis 0", attrInt(n, "axis", 0), len(n.Outputs), sizes)
	}
	for i, out := range n.Outputs {
		t := *tp
		t.part, t.packed = i, true
		im.vals[out] = ival{kind: ivPending, p: &pending{kind: pQKVPart, x: tp.qkv, tok: &t}}
	}
	return im.net.Err()
}

// attentionScale imports the Mul or Div n of q or of the scores by one
// value: the attention's scale.
func (im *importer) attentionScale(n *onnx.Node, p *pending) error {
	k := 1
	if v := im.vals[n.Inputs[0]]; v.kind == ivConst {
		k = 0
	}
	c, err := im.konst(n, k, "scale", false)
	if err != nil {
		return err
	}
	if len(n.Inputs) != 2 || !c.float || c.size() != 1 || n.OpType == "Div" && k == 0 || !(c.f[0] > 0) {
		return fmt.Errorf("%s of %s by %q of shape %v; want the scale, one value above 0 (Div: the divisor)", n.OpType, pendNames[p.kind], c.name, c.dims)
	}
	if p.tok.scale != 0 {
		return fmt.Errorf("scales an attention twice (q and its scores); the import takes one scale")
	}
	t := *p.tok
	if p.kind == pQKVPart {
		t = t.as(0)
	}
	t.scale = c.f[0]
	if n.OpType == "Div" {
		t.scale = 1 / c.f[0]
	}
	return im.set(n, ival{kind: ivPending, p: &pending{kind: p.kind, x: p.x, tok: &t}})
}

// attentionMatMul imports the MatMul or Einsum n of an attention's
// parts: MatMul(q, kᵀ) or Einsum "bhid,bhjd->bhij" of q and k, the scores,
// and MatMul(softmax, v) or Einsum "bhij,bhjd->bhid", where the Attention
// layer is added.
func (im *importer) attentionMatMul(n *onnx.Node) error {
	if len(n.Inputs) != 2 {
		return fmt.Errorf("%s of %d inputs; want 2", n.OpType, len(n.Inputs))
	}
	a, b := im.vals[n.Inputs[0]], im.vals[n.Inputs[1]]
	if a.kind != ivPending || b.kind != ivPending || a.p.tok == nil || b.p.tok == nil || !a.p.tok.sameAttention(b.p.tok) {
		return fmt.Errorf("%s of %q and %q, not two parts of one attention's qkv; the import takes an attention written as timm's: %s", n.OpType, n.Inputs[0], n.Inputs[1], attentionWant)
	}
	ta, tb := a.p.tok, b.p.tok
	keys := b.p.kind == pKeysT // MatMul(q, kᵀ)
	product := true            // a·b, as MatMul
	eq := attrString(n, "equation", "")
	if n.OpType == "Einsum" {
		switch einsumForm(eq) {
		case einsumScores:
			keys, product = tb.isPart(b.p.kind, 1), false
		case einsumOther:
			return fmt.Errorf("Einsum %q of %s and %s; the import takes an attention's scores, \"bhid,bhjd->bhij\" of q and k, and products as MatMul's, \"bhij,bhjd->bhid\" (%s)",
				eq, pendNames[a.p.kind], pendNames[b.p.kind], attentionWant)
		}
	}
	switch {
	case keys && ta.isPart(a.p.kind, 0):
		t := ta.as(0)
		if t.sep {
			t.src = [2]Tensor{ta.qkv.t, tb.qkv.t}
		}
		return im.set(n, ival{kind: ivPending, p: &pending{kind: pScores, x: ta.qkv, tok: &t}})
	case product && a.p.kind == pProbs && tb.isPart(b.p.kind, 2):
		scale := ta.scale
		if scale == 0 {
			scale = 1 // q @ kᵀ unscaled
		}
		qkv := ta.qkv.t
		if ta.sep {
			qkv = im.net.Concat(ta.src[0], ta.src[1], tb.qkv.t)
		}
		name := im.layerName(n, "")
		out := im.net.Attention(name, qkv, ta.heads, scale)
		return im.set(n, ival{kind: ivPending, p: &pending{kind: pContext, x: ival{kind: ivAct, t: out}, tok: ta}})
	}
	return fmt.Errorf("%s of %s and %s; the import takes an attention written as timm's: %s", n.OpType, pendNames[a.p.kind], pendNames[b.p.kind], attentionWant)
}

// as returns tp as part k (0 q, 1 k, 2 v) of its attention.
func (tp *tokenPart) as(k int) tokenPart {
	t := *tp
	t.part = k
	return t
}

// isPart reports whether tp, a pending value of kind kind, is q (k 0),
// k (1, not transposed) or v (2) of its attention, or a separate Linear's
// part not yet known.
func (tp *tokenPart) isPart(kind pendKind, k int) bool {
	return kind == pQKVPart && !tp.packed && (tp.part == k || tp.part == -1 && tp.sep)
}

// sameAttention reports whether tp and u are parts of one attention: of
// one qkv Linear, or of separate Linears of the same tokens and heads.
func (tp *tokenPart) sameAttention(u *tokenPart) bool {
	if tp.heads != u.heads || tp.sep != u.sep {
		return false
	}
	if tp.sep {
		return slices.Equal(tp.qkv.view, u.qkv.view)
	}
	return tp.qkv.t == u.qkv.t
}

// equal folds Equal of two integer constants (shape arithmetic; the batch
// size equals only itself).
func (im *importer) equal(n *onnx.Node) error {
	a, err := im.konst(n, 0, "first operand", false)
	if err != nil {
		return err
	}
	b, err := im.konst(n, 1, "second operand", false)
	if err != nil {
		return err
	}
	if a.float || b.float {
		return fmt.Errorf("Equal of float constants is not supported; the import folds it on shapes")
	}
	if a.size() == 1 && b.size() != 1 {
		a, b = b, a
	}
	if !slices.Equal(a.dims, b.dims) && b.size() != 1 {
		return fmt.Errorf("compares constants of shapes %v and %v", a.dims, b.dims)
	}
	out := &iconst{dims: a.dims}
	for k, x := range a.i {
		out.i = append(out.i, map[bool]int64{false: 0, true: 1}[x == b.i[k%len(b.i)]])
	}
	return im.fold(n, out, nil)
}

// where folds Where of constants of one shape (or of one value), the
// shape arithmetic of torch's expand(N, -1, -1).
func (im *importer) where(n *onnx.Node) error {
	var c [3]*iconst
	for k, what := range []string{"condition", "first choice", "second choice"} {
		var err error
		if c[k], err = im.konst(n, k, what, false); err != nil {
			return err
		}
	}
	dims := c[0].dims
	for _, v := range c[1:] {
		if v.size() != 1 && (c[0].size() == 1 || !slices.Equal(v.dims, dims)) {
			if c[0].size() != 1 {
				return fmt.Errorf("Where of constants of shapes %v, %v and %v; want one shape or single values", c[0].dims, c[1].dims, c[2].dims)
			}
			dims = v.dims
		}
	}
	if c[1].float != c[2].float || c[0].float {
		return fmt.Errorf("Where of a float condition or of a float and an integer choice")
	}
	out := &iconst{dims: dims, float: c[1].float}
	for k := range product(dims) {
		pick := c[2]
		if c[0].i[k%len(c[0].i)] != 0 {
			pick = c[1]
		}
		if pick.float {
			out.f = append(out.f, pick.f[k%len(pick.f)])
		} else {
			out.i = append(out.i, pick.i[k%len(pick.i)])
		}
	}
	return im.fold(n, out, nil)
}
