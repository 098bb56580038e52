package models

import (
	"fmt"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// The importer's handling of token sequences, as torch writes timm's ViT
// and MLP-Mixer at opset 13. A patch embedding's image [N,D,H,W] flattened
// to [N,D,T] (Reshape, T = H·W) is a token view: the same Net tensor, its
// view [D,T]. Transpose perm [0,2,1] makes it the channels-last [N,T,D]
// (ival.last, view [T,D]), which onnxchanlast.go's operators read as they
// read ConvNeXt's (LayerNorm, Linear, GELU, residual Add). Beyond those:
//
//   - Expand of a constant [1,1,D] then Concat before the tokens (axis 1):
//     ClassToken, its values x⁰;
//   - Add of a constant [1,T,D]: PositionEmbedding;
//   - Reshape of a Linear's [N,T,3D] to [N,T,3,h,D/h], Transpose perm
//     [2,0,3,1,4], Split (and Squeeze) or Gather of the three parts,
//     q @ kᵀ (Transpose perm [0,1,3,2], MatMul), Mul by a scale (of the
//     scores, or of q), Softmax over the last axis, MatMul by v, Transpose
//     perm [0,2,1,3] and Reshape to [N,T,D]: Attention;
//   - Gather of position i (axis 1): Token; ReduceMean over the tokens
//     (axes [1], keepdims 0): GlobalAvgPool;
//   - on the token view [N,D,T], MatMul by a constant [T,K] and the Add
//     of its bias [K]: TokenLinear (MLP-Mixer's token mixing).
//
// Layers read a Net image [C,H,W] as its H·W tokens, so a token view keeps
// its image until two must be added: Tokens then makes the image [C,T,1].

// tokenPart is what an attention's pending values have read.
type tokenPart struct {
	qkv    ival      // the Linear's output, channels-last [T,3D] ([T,D] where sep)
	heads  int       // h
	part   int       // 0 q, 1 k, 2 v: a part taken out of the permuted qkv; -1 a sep part not yet known
	sep    bool      // q, k and v from Linears of their own (HF's ViTSelfAttention)
	src    [2]Tensor // sep: the Linears' outputs read as q and k (the scores')
	scale  float32   // the scale of q or of the scores; 0 where none yet
	packed bool      // a Split's output, not yet squeezed
	seq    bool      // nn.MultiheadAttention's sequence-first chain (onnxmha.go)
}

// dims returns the positions T and features D of the attention that tp
// is part of.
func (tp *tokenPart) dims() (t, d int) {
	if tp.sep {
		return tp.qkv.view[0], tp.qkv.view[1]
	}
	return tp.qkv.view[0], tp.qkv.view[1] / 3
}

// tokenView reports whether v is a token view [D,T] of a Net image.
func (im *importer) tokenView(v ival) bool {
	return v.kind == ivAct && !v.last && len(v.view) == 2 && len(im.net.Shape(v.t)) == 3
}

// lastTokens reports whether v is a channels-last token sequence [T,D].
func (im *importer) lastTokens(v ival) bool {
	return v.kind == ivAct && v.last && len(v.view) == 2 && len(im.net.Shape(v.t)) == 3
}

// tokens imports n where it reads a token value or an attention's pending
// value, reporting false for other nodes.
func (im *importer) tokens(n *onnx.Node) (bool, error) {
	var p *pending
	var x ival
	k := -1
	for i, in := range n.Inputs {
		v, ok := im.vals[in]
		switch {
		case !ok:
		case v.kind == ivPending && (v.p.tok != nil || v.p.kind == pTokenMatMul):
			if p == nil {
				p = v.p
			}
		case k < 0 && (im.tokenView(v) || im.lastTokens(v)):
			x, k = v, i
		case v.kind == ivPending && (v.p.kind >= pGELUDiv && v.p.kind <= pGELUMul || v.p.kind == pSiLU || v.p.kind == pHardswish) && im.tokenView(v.p.x):
			// An activation of a token view, which keeps its view.
			if err := importOps[n.OpType](im, n); err != nil {
				return true, err
			}
			im.keepView(n, v.p.x)
			return true, nil
		}
	}
	switch {
	case p != nil:
		return true, im.tokenPending(n, p)
	case n.OpType == "Reshape" && k < 0:
		return im.tokenReshape(n)
	case n.OpType == "Expand" && k < 0:
		return im.expandToken(n)
	case n.OpType == "Tile" && k < 0:
		return im.tileToken(n)
	case k < 0:
		return false, nil
	}
	if im.tokenView(x) {
		return im.tokenViewNode(n, x, k)
	}
	return im.lastTokenNode(n, x, k)
}

// tokenReshape imports the Reshape n of an image [C,H,W] to [C,H·W] (or
// [C,H·W,1]): a token view. It reports false for other Reshapes.
func (im *importer) tokenReshape(n *onnx.Node) (bool, error) {
	if done, err := im.patchReshape(n); done {
		return true, err
	}
	v, ok := im.vals[firstInput(n)]
	if !ok || v.kind != ivAct || v.last || len(v.view) != 3 || !slices.Equal(im.net.Shape(v.t), v.view) {
		return false, nil
	}
	to, err := im.reshapeTarget(n, v.view)
	if err != nil || to[0] != v.view[0] || !(len(to) == 2 || len(to) == 3 && to[2] == 1 && v.view[2] != 1) {
		return false, nil
	}
	if len(to) == 3 { // gtstorm's export of Tokens: [N,C,T,1]
		return true, im.act(n, im.net.Tokens(v.t))
	}
	return true, im.set(n, ival{kind: ivAct, t: v.t, view: to})
}

// tokenViewNode imports n, which reads the token view x [D,T] as input k.
func (im *importer) tokenViewNode(n *onnx.Node, x ival, k int) (bool, error) {
	switch {
	case n.OpType == "Transpose" && permIs(n, 0, 2, 1):
		return true, im.set(n, ival{kind: ivAct, t: x.t, view: []int{x.view[1], x.view[0]}, last: true})
	case n.OpType == "Transpose" && permIs(n, 2, 0, 1):
		// transpose(1, 2) then nn.MultiheadAttention's transpose(0, 1),
		// which torch's export joins: sequence-first [T,N,D].
		return true, im.set(n, ival{kind: ivAct, t: x.t, view: []int{x.view[1], x.view[0]}, last: true, seq: true})
	case n.OpType == "Reshape":
		to, err := im.reshapeTarget(n, x.view)
		if err != nil {
			return true, err
		}
		s := im.net.Shape(x.t)
		if len(to) == 3 && to[0] == x.view[0] && (slices.Equal(to, s) || to[1] == x.view[1] && to[2] == 1) {
			t := x.t
			if !slices.Equal(to, s) {
				t = im.tokensOf(x.t)
			}
			return true, im.set(n, ival{kind: ivAct, t: t, view: to})
		}
		return true, fmt.Errorf("reshapes the tokens [N,%s] to [N,%s]; the import takes there only their image [N,%s] (or [N,%d,%d,1])", joinInts(x.view), joinInts(to), joinInts(s), x.view[0], x.view[1])
	case n.OpType == "InstanceNormalization" && k == 0 && im.net.Shape(x.t)[0] == x.view[0]:
		// nn.GroupNorm(C, C): its Reshape [N,C,−1] of the image is
		// flatten(2)'s, and this reads it as GroupNorm's groups.
		image := ival{kind: ivAct, t: x.t, view: slices.Clone(im.net.Shape(x.t))}
		return true, im.normGroups(n, pending{kind: pGrouped, x: image, groups: x.view[0], name: im.layerName(n, "")})
	case n.OpType == "Add" && len(n.Inputs) == 2:
		// A residual join of two token views, one of them maybe still
		// its patch embedding's image: both as the token image.
		a, b := im.vals[n.Inputs[0]], im.vals[n.Inputs[1]]
		if im.tokenView(a) && im.tokenView(b) && slices.Equal(a.view, b.view) && !slices.Equal(im.net.Shape(a.t), im.net.Shape(b.t)) {
			return true, im.set(n, ival{kind: ivAct, t: im.net.Add(im.tokensOf(a.t), im.tokensOf(b.t)), view: slices.Clone(a.view)})
		}
	case n.OpType == "MatMul" && k == 0:
		w, err := im.konst(n, 1, "weights", false)
		if err != nil {
			return true, err
		}
		if !w.float || len(w.dims) != 2 || w.dims[0] != x.view[1] {
			return true, fmt.Errorf("MatMul of the tokens [N,%s] by %q of shape %v; want a float constant [%d,K] (nn.Linear along the tokens, MLP-Mixer's token mixing)", joinInts(x.view), w.name, w.dims, x.view[1])
		}
		return true, im.set(n, ival{kind: ivPending, p: &pending{kind: pTokenMatMul, x: x, w: w, node: n}})
	}
	// Pointwise operators (GELU's, the activations) keep the view.
	h, ok := importOps[n.OpType]
	if !ok || !tokenPointwise[n.OpType] {
		return true, fmt.Errorf("reads %q, the tokens [N,%s] (a patch embedding flattened); the import takes there Transpose perm [0,2,1], MatMul by a constant [%d,K], Reshape back and elementwise activations", n.Inputs[k], joinInts(x.view), x.view[1])
	}
	if err := h(im, n); err != nil {
		return true, err
	}
	im.keepView(n, x)
	return true, nil
}

// tokenPointwise lists the operators that keep a token view's shape.
var tokenPointwise = map[string]bool{"Relu": true, "LeakyRelu": true, "Tanh": true, "Sigmoid": true, "Elu": true, "Softplus": true,
	"HardSigmoid": true, "HardSwish": true, "Clip": true, "Div": true, "Mul": true, "Add": true, "Sub": true, "Erf": true,
	"Dropout": true, "Identity": true}

// keepView gives n's output, an activation of x's size, x's view.
func (im *importer) keepView(n *onnx.Node, x ival) {
	if v := im.vals[n.Outputs[0]]; v.kind == ivAct && product(im.net.Shape(v.t)) == product(x.view) {
		v.view = slices.Clone(x.view)
		im.vals[n.Outputs[0]] = v
	}
}

// tokensOf returns t as the token image [C,H·W,1], adding Tokens once per
// tensor.
func (im *importer) tokensOf(t Tensor) Tensor {
	if s := im.net.Shape(t); len(s) != 3 || s[2] == 1 {
		return t
	}
	if u, ok := im.tokenImages[t.id]; ok {
		return u
	}
	u := im.net.Tokens(t)
	im.tokenImages[t.id] = u
	return u
}

// lastTokenNode imports n, which reads the channels-last tokens x [T,D]
// as input k, where it is an operator of this file's; other readers go to
// channelsLast.
func (im *importer) lastTokenNode(n *onnx.Node, x ival, k int) (bool, error) {
	t, d := x.view[0], x.view[1]
	// The tokens' axis: 1 of [N,T,D], 0 of the sequence-first [T,N,D].
	axisT, form := int64(1), fmt.Sprintf("[N,%d,%d]", t, d)
	if x.seq {
		axisT, form = 0, fmt.Sprintf("[%d,N,%d]", t, d)
	}
	switch n.OpType {
	case "Shape":
		if x.seq {
			return true, im.fold(n, shapeSlice(n, []int64{int64(t), batchDim, int64(d)}), nil)
		}
		return true, im.shape(n)
	case "Transpose":
		switch {
		case permIs(n, 0, 2, 1) && !x.seq:
			return true, im.set(n, ival{kind: ivAct, t: x.t, view: []int{d, t}})
		case permIs(n, 1, 0, 2): // batch-first ↔ sequence-first
			return true, im.set(n, ival{kind: ivAct, t: x.t, view: slices.Clone(x.view), last: true, seq: !x.seq})
		}
	case "Reshape":
		if x.seq {
			return true, fmt.Errorf("reshapes the sequence-first tokens %s; the import takes there an attention written as %s", form, seqWant)
		}
		return true, im.qkvReshape(n, x)
	case "Softmax":
		return true, im.poolScores(n, x)
	case "Slice":
		if done, err := im.tokenSlice(n, x, axisT, form); done {
			return true, err
		}
		return true, im.qkvChunk(n, x, x.seq)
	case "Split":
		return true, im.qkvChunk(n, x, x.seq)

	case "Concat":
		return true, im.classToken(n)
	case "Gather":
		index, err := im.ints(n, 1, "indices", false)
		if err != nil {
			return true, err
		}
		ic, _ := im.konst(n, 1, "indices", false)
		a := attrInt(n, "axis", 0)
		if k != 0 || (a != axisT && a != axisT-3) || len(index) != 1 || len(ic.dims) != 0 || index[0] < int64(-t) || index[0] >= int64(t) {
			return true, fmt.Errorf("gathers %v along axis %d of the tokens %s; the import takes one position (a scalar index) along the tokens' axis %d, x[:, i]", index, a, form, axisT)
		}
		i := int(index[0])
		if i < 0 {
			i += t
		}
		return true, im.set(n, ival{kind: ivAct, t: im.net.Token(x.t, i), view: []int{d}})
	case "ReduceMean":
		axes, _, err := im.intsAttrOrInput(n, "axes", 1)
		if err != nil {
			return true, err
		}
		if len(axes) == 1 && (axes[0] == axisT || axes[0] == axisT-3) {
			if attrInt(n, "keepdims", 1) != 0 {
				return true, fmt.Errorf("averages the tokens %s keeping the axis; the import takes x.mean(%d), keepdims 0", form, axisT)
			}
			return true, im.set(n, ival{kind: ivAct, t: im.net.GlobalAvgPool(x.t), view: []int{d}})
		}
	case "Add":
		if done, err := im.positionEmbedding(n); done {
			return true, err
		}
		a, b := im.vals[n.Inputs[0]], im.vals[n.Inputs[1%len(n.Inputs)]]
		if len(n.Inputs) == 2 && im.lastTokens(a) && im.lastTokens(b) && slices.Equal(a.view, b.view) &&
			!slices.Equal(im.net.Shape(a.t), im.net.Shape(b.t)) {
			return true, im.set(n, ival{kind: ivAct, t: im.net.Add(im.tokensOf(a.t), im.tokensOf(b.t)), view: slices.Clone(a.view), last: true, seq: a.seq})
		}
	}
	return false, nil
}

// tokenSlice imports the Slice n of the channels-last tokens x (form
// [N,T,D] or [T,N,D]) along their axis axisT, x[:, from:to] (timm's x[:,
// 1:] before global_pool="avg"), as TokenRange. It reports false for a
// Slice along another axis.
func (im *importer) tokenSlice(n *onnx.Node, x ival, axisT int64, form string) (bool, error) {
	starts, ends, axes, steps, hasAxes, err := im.sliceArgs(n)
	if err != nil {
		return true, err
	}
	if !hasAxes || len(axes) != 1 || axes[0] != axisT && axes[0] != axisT-3 {
		return false, nil
	}
	if len(starts) != 1 || len(ends) != 1 || steps != nil && (len(steps) != 1 || steps[0] != 1) {
		return true, fmt.Errorf("slices the tokens %s along their axis with starts %v, ends %v and steps %v; the import takes one range, step 1, x[:, i:j]", form, starts, ends, steps)
	}
	from, count := sliceRange(starts[0], ends[0], 1, x.view[0])
	if count < 1 {
		return true, fmt.Errorf("slices no tokens of %s (starts %v, ends %v)", form, starts, ends)
	}
	return true, im.set(n, ival{kind: ivAct, t: im.net.TokenRange(x.t, from, count), view: []int{count, x.view[1]}, last: true, seq: x.seq})
}
