package models

import (
	"fmt"
	"slices"

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
// Tokens held sequence-first are channels-last values marked seq: the
// operators along their features (LayerNorm, Linear, activations, Add)
// import as on batch-first tokens, as does nn.TransformerEncoderLayer's
// batch_first=False. The Linears are 1×1 Conv2Ds of the tokens and the
// rest one Attention layer, as timm's (onnxattention.go); the values of
// the chain are pending ones of a tokenPart marked seq, whose Shape is
// known (the batch as batchDim), and N·h and T·N fold as batchMul.

// seqWant is the chain, for refusals.
const seqWant = "nn.MultiheadAttention's: Transpose of the tokens perm [1,0,2], MatMul by in_proj [D,3D] and Add of its bias, Slices of q, k, v " +
	"each reshaped to [T,N·h,D/h], Transpose perm [1,0,2] (k: [1,2,0]), Div by a scale, MatMul, Softmax, MatMul, Transpose perm [1,0,2], " +
	"Reshape to [T·N,D], Gemm (out_proj), Reshape to [T,N,D] and Transpose perm [1,0,2]"

// seqNext imports n, a reader of p, an attention's output flattened to
// [T·N,C]: its Shape, out_proj's Gemm, and the Reshape back to [T,N,C].
func (im *importer) seqNext(n *onnx.Node, p *pending) error {
	x := p.tok.qkv // the tokens [T,C] the value holds
	t, c := x.view[0], x.view[1]
	switch n.OpType {
	case "Shape":
		return im.fold(n, shapeSlice(n, []int64{batchMul(int64(t)), int64(c)}), nil)
	case "Gemm":
		return im.seqGemm(n, p)
	case "Reshape":
		to, err := im.ints(n, 1, "target shape", false)
		if err != nil {
			return err
		}
		if !slices.Equal(to, []int64{int64(t), batchDim, int64(c)}) && !slices.Equal(to, []int64{int64(t), -1, int64(c)}) {
			return fmt.Errorf("reshapes an attention's output [T·N,%d] to %s; want [%d,N,%d]", c, shapeText(to), t, c)
		}
		return im.set(n, x)
	}
	return fmt.Errorf("reads %s as %s; the import takes an attention written as %s", pendNames[p.kind], n.OpType, seqWant)
}

// seqGemm imports the Gemm n of an attention's output flattened to
// [T·N,D] (out_proj): the 1×1 Conv of the tokens, flattened still.
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
	x := p.tok.qkv
	if c := x.view[1]; !w.float || len(w.dims) != 2 || w.dims[0] != c {
		return fmt.Errorf("Gemm of an attention's output [T·N,%d] by %q of shape %v; want out_proj's weights of %d inputs", c, w.name, w.dims, c)
	}
	bias, err := im.floats(n, 2, "bias", w.dims[1], true)
	if err != nil {
		return err
	}
	if err := im.lastConv(n, &pending{kind: pMatMul, x: x, w: w, node: n}, bias); err != nil {
		return err
	}
	return im.set(n, seqFlat(im.vals[n.Outputs[0]]))
}

// seqFlat returns the pending [T·N,C] form of the sequence-first tokens y.
func seqFlat(y ival) ival {
	return ival{kind: ivPending, p: &pending{kind: pSeqFlat, x: y, tok: &tokenPart{qkv: y, seq: true}}}
}

// seqChunkHeads imports the Reshape n of a sequence-first third of qkv
// [T,N,D] to [T,N·h,D/h].
func (im *importer) seqChunkHeads(n *onnx.Node, tp *tokenPart) error {
	to, err := im.ints(n, 1, "target shape", false)
	if err != nil {
		return err
	}
	t, d := tp.dims()
	h := int(batchFactor(to[min(1, len(to)-1)]))
	if len(to) != 3 || to[0] != int64(t) && to[0] != 0 || h < 1 || d%h != 0 || to[2] != int64(d/h) && to[2] != -1 {
		return fmt.Errorf("reshapes an attention's q, k or v [%d,N,%d] to %s; want its heads, [%d,N·heads,%d/heads]", t, d, shapeText(to), t, d)
	}
	part := *tp
	part.heads = h
	return im.set(n, ival{kind: ivPending, p: &pending{kind: pQKVChunkHeads, x: tp.qkv, tok: &part}})
}
