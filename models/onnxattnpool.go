package models

import (
	"fmt"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// The import of a Compact Convolutional Transformer's sequence pooling
// (SeqPool, Hassani et al. 2021) as torch writes it of channels-last
// tokens x [N,T,D] and their scores s [N,T,1] (a Linear D → 1 of x):
// Softmax of s over the positions (axis 1), Transpose perm [0,2,1],
// MatMul by x, and Squeeze of axis 1 (or a Reshape or Flatten to [N,D]),
// each read only by the next: Net.AttentionPool.

// attnPoolWant is the chain, for refusals.
const attnPoolWant = "Softmax of the scores [N,T,1] over axis 1, Transpose perm [0,2,1], MatMul by the tokens [N,T,D], Squeeze of axis 1 (CCT's SeqPool)"

// poolScores imports the Softmax n of channels-last scores s [T,1] over
// the positions: a SeqPool's weights.
func (im *importer) poolScores(n *onnx.Node, s ival) error {
	if s.seq || s.view[1] != 1 {
		return fmt.Errorf("Softmax of the tokens [N,%s]; the import takes a Softmax of tokens only as an attention's, or of scores [N,T,1] as %s", joinInts(s.view), attnPoolWant)
	}
	if a := attrInt(n, "axis", -1); a != 1 && a != -2 {
		return fmt.Errorf("Softmax of the scores [N,%d,1] over axis %d; want axis 1, the positions (%s)", s.view[0], a, attnPoolWant)
	}
	return im.set(n, ival{kind: ivPending, p: &pending{kind: pPoolWeights, x: s, tok: &tokenPart{}}})
}

// poolNext imports n, a reader of the pending SeqPool value p.
func (im *importer) poolNext(n *onnx.Node, p *pending) error {
	switch {
	case p.kind == pPoolWeights && n.OpType == "Transpose" && permIs(n, 0, 2, 1):
		return im.set(n, ival{kind: ivPending, p: &pending{kind: pPoolWeightsT, x: p.x, tok: p.tok}})
	case p.kind == pPoolWeightsT && n.OpType == "MatMul" && len(n.Inputs) == 2 && im.vals[n.Inputs[0]].p == p:
		x := im.vals[n.Inputs[1]]
		if !im.lastTokens(x) || x.seq || x.view[0] != p.x.view[0] {
			return fmt.Errorf("MatMul of a SeqPool's weights [N,1,%d] by %q, not the tokens [N,%d,D]; want %s", p.x.view[0], n.Inputs[1], p.x.view[0], attnPoolWant)
		}
		y := im.net.AttentionPool(im.tokensOf(x.t), im.tokensOf(p.x.t)) // both as token images [·,T,1]
		return im.set(n, ival{kind: ivPending, p: &pending{kind: pPooled, x: ival{kind: ivAct, t: y, view: []int{x.view[1]}}, tok: p.tok}})
	case p.kind == pPooled && n.OpType == "Squeeze":
		axes, _, err := im.intsAttrOrInput(n, "axes", 1)
		if err != nil {
			return err
		}
		if !slices.Equal(axes, []int64{1}) && !slices.Equal(axes, []int64{-2}) {
			return fmt.Errorf("squeezes axes %v of a SeqPool's output [N,1,%d]; want axis 1", axes, p.x.view[0])
		}
		return im.set(n, p.x)
	case p.kind == pPooled && (n.OpType == "Flatten" && attrInt(n, "axis", 1) == 1):
		return im.set(n, p.x)
	case p.kind == pPooled && n.OpType == "Reshape":
		to, err := im.reshapeTarget(n, []int{1, p.x.view[0]})
		if err != nil {
			return err
		}
		if !slices.Equal(to, p.x.view) {
			return fmt.Errorf("reshapes a SeqPool's output [N,1,%d] to [N,%s]; want [N,%d]", p.x.view[0], joinInts(to), p.x.view[0])
		}
		return im.set(n, p.x)
	}
	return fmt.Errorf("reads %s as %s; the import takes %s", pendNames[p.kind], n.OpType, attnPoolWant)
}
