package models

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// The importer's handling of nn.MultiheadAttention (batch_first, as
// nn.TransformerEncoderLayer calls it), which torch 1.13 writes at opset
// 13 sequence-first and with the batch folded into the heads:
//
//	x [N,T,D] → Transpose perm [1,0,2] → [T,N,D]
//	→ MatMul by in_proj [D,3D], Add of its bias
//	→ three Slices of the last axis (q, k, v), each Reshape to [T,N·h,D/h]
//	→ q: Transpose perm [1,0,2], Div by √(D/h); k: Transpose perm [1,2,0];
//	  v: Transpose perm [1,0,2]
//	→ MatMul(q, k), Softmax, MatMul by v → [N·h,T,D/h]
//	→ Transpose perm [1,0,2], Reshape to [T·N,D], Gemm (out_proj)
//	→ Reshape to [T,N,D], Transpose perm [1,0,2] → [N,T,D].
//
// The Linears are 1×1 Conv2Ds of the tokens and the rest one Attention
// layer, as timm's (onnxattention.go). Each sequence-first value is a
// pending one of a tokenPart marked seq, whose Shape is known (the batch
// as batchDim), and N·h and T·N fold as batchMul.

// seqWant is the chain, for refusals.
const seqWant = "nn.MultiheadAttention's: Transpose of the tokens perm [1,0,2], MatMul by in_proj [D,3D] and Add of its bias, Slices of q, k, v " +
	"each reshaped to [T,N·h,D/h], Transpose perm [1,0,2] (k: [1,2,0]), Div by a scale, MatMul, Softmax, MatMul, Transpose perm [1,0,2], " +
	"Reshape to [T·N,D], Gemm (out_proj), Reshape to [T,N,D] and Transpose perm [1,0,2]"

// seqFirst returns the pending sequence-first view [T,N,C] of the
// channels-last tokens x [T,C].
func seqFirst(x ival) ival {
	return ival{kind: ivPending, p: &pending{kind: pSeqFirst, x: x, tok: &tokenPart{qkv: x, seq: true}}}
}

// seqNext imports n, a reader of the sequence-first value p: see the file
// comment.
func (im *importer) seqNext(n *onnx.Node, p *pending) error {
	x := p.tok.qkv // the tokens [T,C] the value holds
	t, c := x.view[0], x.view[1]
	refuse := func() error {
		return fmt.Errorf("reads %s as %s; the import takes an attention written as %s", pendNames[p.kind], n.OpType, seqWant)
	}
	switch {
	case n.OpType == "Shape" && p.kind == pSeqFlat:
		return im.fold(n, shapeSlice(n, []int64{batchMul(int64(t)), int64(c)}), nil)
	case n.OpType == "Shape":
		return im.fold(n, shapeSlice(n, []int64{int64(t), batchDim, int64(c)}), nil)
	case p.kind == pSeqFirst && n.OpType == "Transpose" && permIs(n, 1, 0, 2):
		return im.set(n, x)
	case p.kind == pSeqFirst && n.OpType == "MatMul" && im.vals[n.Inputs[0]].p == p: // the tokens first
		w, err := im.konst(n, 1, "weights", false)
		if err != nil {
			return err
		}
		if !w.float || len(w.dims) != 2 || w.dims[0] != c {
			return fmt.Errorf("MatMul of the sequence-first tokens [%d,N,%d] by %q of shape %v; want a float constant [%d,K] (in_proj)", t, c, w.name, w.dims, c)
		}
		return im.set(n, ival{kind: ivPending, p: &pending{kind: pSeqMatMul, x: x, w: w, node: n, tok: p.tok}})
	case p.kind == pSeqMatMul:
		return im.seqLinearNext(n, p)
	case p.kind == pSeqFirst && (n.OpType == "Slice" || n.OpType == "Split"):
		return im.qkvChunk(n, x, true)
	case p.kind == pSeqFlat && n.OpType == "Gemm":
		return im.seqGemm(n, p)
	case p.kind == pSeqFlat && n.OpType == "Reshape":
		to, err := im.ints(n, 1, "target shape", false)
		if err != nil {
			return err
		}
		if !slices.Equal(to, []int64{int64(t), batchDim, int64(c)}) && !slices.Equal(to, []int64{int64(t), -1, int64(c)}) {
			return fmt.Errorf("reshapes an attention's output [T·N,%d] to %s; want [%d,N,%d]", c, shapeText(to), t, c)
		}
		return im.set(n, seqFirst(x))
	}
	return refuse()
}

// shapeSlice applies Shape n's start and end to the shape s.
func shapeSlice(n *onnx.Node, s []int64) *iconst {
	start, end := int(attrInt(n, "start", 0)), int(attrInt(n, "end", int64(len(s))))
	start, end = clampIndex(start, len(s)), clampIndex(end, len(s))
	s = s[start:max(start, end)]
	return &iconst{dims: []int{len(s)}, i: s}
}

// seqLinearNext imports n, a reader of the MatMul p of sequence-first
// tokens: the Add of its bias makes the 1×1 Conv of the tokens; any other
// reader finds it made without one.
func (im *importer) seqLinearNext(n *onnx.Node, p *pending) error {
	if n.OpType == "Add" && len(n.Inputs) == 2 {
		other := n.Inputs[0]
		if v := im.vals[other]; v.kind == ivPending && v.p == p {
			other = n.Inputs[1]
		}
		if b := im.vals[other]; b.kind == ivConst {
			if !b.c.float || b.c.size() != p.w.dims[1] || len(b.c.dims) != 1 {
				return fmt.Errorf("adds %q of shape %v to in_proj [%d,%d]; want its bias [%d]", b.c.name, b.c.dims, p.w.dims[0], p.w.dims[1], p.w.dims[1])
			}
			w := p.w
			if base, ok := strings.CutSuffix(b.c.name, "_bias"); ok {
				// nn.MultiheadAttention's in_proj_bias: the layer is
				// its in_proj, the attention's own name left to it.
				w = &iconst{dims: w.dims, f: w.f, float: true, name: base + ".weight"}
			}
			return im.seqLinear(n, p.x, w, b.c.f, pSeqFirst)
		}
	}
	if err := im.seqLinear(p.node, p.x, p.w, nil, pSeqFirst); err != nil {
		return err
	}
	return im.node(n)
}

// seqLinear adds the 1×1 Conv of the tokens x [T,C] by w [C,K] (and bias,
// where not nil) and records it as n's output, a pending value of kind
// (sequence-first, or flattened to [T·N,K]).
func (im *importer) seqLinear(n *onnx.Node, x ival, w *iconst, bias []float32, kind pendKind) error {
	if err := im.lastConv(n, &pending{kind: pMatMul, x: x, w: w, node: n}, bias); err != nil {
		return err
	}
	y := im.vals[n.Outputs[0]]
	return im.set(n, ival{kind: ivPending, p: &pending{kind: kind, x: y, tok: &tokenPart{qkv: y, seq: true}}})
}

// seqGemm imports the Gemm n of an attention's output flattened to
// [T·N,D] (out_proj): the 1×1 Conv of the tokens.
func (im *importer) seqGemm(n *onnx.Node, p *pending) error {
	if attrFloat(n, "alpha", 1) != 1 || attrFloat(n, "beta", 1) != 1 || attrInt(n, "transA", 0) != 0 {
		return fmt.Errorf("alpha %g, beta %g, transA %d: want 1, 1, 0 (a linear layer)", attrFloat(n, "alpha", 1), attrFloat(n, "beta", 1), attrInt(n, "transA", 0))
	}
	w, err := im.konst(n, 1, "weights", false)
	if err != nil {
		return err
	}
	if attrInt(n, "transB", 0) != 0 && w.float && len(w.dims) == 2 {
		w = transpose2(w)
	}
	c := p.tok.qkv.view[1]
	if !w.float || len(w.dims) != 2 || w.dims[0] != c {
		return fmt.Errorf("Gemm of an attention's output [T·N,%d] by %q of shape %v; want out_proj's weights of %d inputs", c, w.name, w.dims, c)
	}
	bias, err := im.floats(n, 2, "bias", w.dims[1], true)
	if err != nil {
		return err
	}
	return im.seqLinear(n, p.tok.qkv, w, bias, pSeqFlat)
}

// seqChunkHeads imports the Reshape n of a sequence-first third of qkv
// [T,N,D] to [T,N·h,D/h].
func (im *importer) seqChunkHeads(n *onnx.Node, tp *tokenPart) error {
	to, err := im.ints(n, 1, "target shape", false)
	if err != nil {
		return err
	}
	t, d := tp.qkv.view[0], tp.qkv.view[1]/3
	h := int(batchFactor(to[min(1, len(to)-1)]))
	if len(to) != 3 || to[0] != int64(t) && to[0] != 0 || h < 1 || d%h != 0 || to[2] != int64(d/h) && to[2] != -1 {
		return fmt.Errorf("reshapes an attention's q, k or v [%d,N,%d] to %s; want its heads, [%d,N·heads,%d/heads]", t, d, shapeText(to), t, d)
	}
	part := *tp
	part.heads = h
	return im.set(n, ival{kind: ivPending, p: &pending{kind: pQKVChunkHeads, x: tp.qkv, tok: &part}})
}
