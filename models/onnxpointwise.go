package models

import (
	"fmt"
	"math"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// The import of the pointwise activations: Elu, Softplus, HardSigmoid
// (torch's nn.Hardsigmoid), HardSigmoid then Mul of x and it (torch's
// opset-13 nn.Hardswish), HardSwish, and torch's opset-13 form of the
// exact nn.GELU: Div(x, √2), Erf, Add 1, Mul by x, Mul by 0.5.

// elu imports Elu as Net.ELU, its alpha (default 1).
func (im *importer) elu(n *onnx.Node) error {
	alpha := float32(1)
	if a := attr(n, "alpha"); a != nil {
		alpha = a.F
	}
	return im.elementwise(n, func(x Tensor) Tensor { return im.net.ELU(x, alpha) })
}

// softplus imports Softplus as Net.Softplus: torch's nn.Softplus() (beta
// 1; its threshold 20, which the file does not hold, changes no float32
// value). torch writes nn.Softplus(beta) as Mul by beta, Softplus, Div by
// beta, which import as MulConst, Softplus and DivConst: torch's function,
// whose threshold also applies to beta·x (a threshold other than 20 is not
// in the file, and is not honoured).
func (im *importer) softplus(n *onnx.Node) error { return im.elementwise(n, im.net.Softplus) }

// hardSwish imports opset 14's HardSwish as Net.Hardswish.
func (im *importer) hardSwish(n *onnx.Node) error { return im.elementwise(n, im.net.Hardswish) }

// hardSigmoid imports HardSigmoid with torch's alpha 1/6 and beta 0.5 as
// Net.Hardsigmoid or, where only a Mul of it and its input x reads it
// (torch's opset-13 nn.Hardswish), as a pending value from which the Mul
// makes one Hardswish layer. Other slopes are refused.
func (im *importer) hardSigmoid(n *onnx.Node) error {
	alpha, beta := float32(0.2), float32(0.5) // ONNX's defaults
	if a := attr(n, "alpha"); a != nil {
		alpha = a.F
	}
	if a := attr(n, "beta"); a != nil {
		beta = a.F
	}
	if !(math.Abs(float64(alpha)-1.0/6) <= 1e-7) || beta != 0.5 { // NaN too
		return fmt.Errorf("HardSigmoid with alpha %g and beta %g; the import takes torch's nn.Hardsigmoid, and nn.Hardswish (HardSigmoid, then Mul of x and it), whose alpha is 1/6 and beta 0.5", alpha, beta)
	}
	if !im.ownMul(n) {
		return im.elementwise(n, im.net.Hardsigmoid)
	}
	x, err := im.data(n, 0)
	if err != nil {
		return err
	}
	return im.set(n, ival{kind: ivPending, p: &pending{kind: pHardswish, x: x}})
}

// ownMul reports whether n, a node of one input x, is read only by a Mul
// of x and n's output, in either order, and is no graph output.
func (im *importer) ownMul(n *onnx.Node) bool {
	if len(n.Inputs) != 1 || n.Inputs[0] == "" {
		return false
	}
	m := im.soleReader(n, "Mul")
	if m == nil || len(m.Inputs) != 2 {
		return false
	}
	x, s := n.Inputs[0], n.Outputs[0]
	return (m.Inputs[0] == x && m.Inputs[1] == s) || (m.Inputs[0] == s && m.Inputs[1] == x)
}

// soleReader returns the node of type op that alone reads n's output, or
// nil where another node, or the graph's output, reads it too.
func (im *importer) soleReader(n *onnx.Node, op string) *onnx.Node {
	rs := im.readers[n.Outputs[0]]
	if len(rs) != 1 || rs[0] == nil || rs[0].OpType != op || (rs[0].Domain != "" && rs[0].Domain != "ai.onnx") || len(rs[0].Outputs) == 0 {
		return nil
	}
	return rs[0]
}

// geluNodes returns the Erf, Add, Mul and Mul that follow the Div n in
// torch's opset-13 form of nn.GELU, each the only reader of the one
// before, the first Mul reading n's input x; nil where they do not.
func (im *importer) geluNodes(n *onnx.Node) []*onnx.Node {
	if len(n.Inputs) != 2 {
		return nil
	}
	erf := im.soleReader(n, "Erf")
	if erf == nil {
		return nil
	}
	add := im.soleReader(erf, "Add")
	if add == nil {
		return nil
	}
	mul := im.soleReader(add, "Mul")
	if mul == nil || len(mul.Inputs) != 2 || (mul.Inputs[0] != n.Inputs[0] && mul.Inputs[1] != n.Inputs[0]) {
		return nil
	}
	half := im.soleReader(mul, "Mul")
	if half == nil {
		return nil
	}
	return []*onnx.Node{erf, add, mul, half}
}

// geluDiv takes the Div n that starts torch's form of nn.GELU (see
// geluNodes) — x divided by √2 — as a pending value, and reports whether
// it did; a Div that starts that form by another constant is refused.
func (im *importer) geluDiv(n *onnx.Node) (bool, error) {
	if im.geluNodes(n) == nil {
		return false, nil
	}
	x, err := im.data(n, 0)
	if err != nil {
		return true, err
	}
	c, err := im.konst(n, 1, "divisor", false)
	if err != nil {
		return true, err
	}
	if !c.float || c.size() != 1 || !(math.Abs(float64(c.f[0])-math.Sqrt2) <= 1e-6) { // NaN too
		return true, fmt.Errorf("divides by %q of shape %v before Erf, Add, Mul and Mul, torch's form of nn.GELU; want one value, √2 (the exact GELU)", n.Inputs[1], c.dims)
	}
	return true, im.set(n, ival{kind: ivPending, p: &pending{kind: pGELUDiv, x: x}})
}

// erf takes the Erf of a GELU's Div (see geluDiv); any other Erf is
// refused.
func (im *importer) erf(n *onnx.Node) error {
	v, ok, err := im.arg(n, 0)
	if err != nil {
		return err
	}
	if !ok || v.kind != ivPending || v.p.kind != pGELUDiv {
		return fmt.Errorf("an Erf outside torch's form of nn.GELU (Div of x by √2, Erf, Add 1, Mul by x, Mul by 0.5, each read only by the next) is not supported: probably an nn.GELU the import did not recognise (approximate='tanh' is not supported either)")
	}
	p := *v.p
	p.kind = pGELUErf
	return im.set(n, ival{kind: ivPending, p: &p})
}

// geluAdd takes the Add of 1 to a GELU's Erf.
func (im *importer) geluAdd(n *onnx.Node, a, b ival) error {
	if !b.c.float || b.c.size() != 1 || b.c.f[0] != 1 {
		return fmt.Errorf("adds a constant of shape %v other than 1 to the Erf of torch's form of nn.GELU; want 1 + erf(x/√2)", b.c.dims)
	}
	p := *a.p
	p.kind = pGELUAdd
	return im.set(n, ival{kind: ivPending, p: &p})
}

// pointwiseMul takes the Mul that finishes a Hardswish (x·HardSigmoid(x)),
// the Mul by x of a GELU's 1 + erf(x/√2), and the Mul by 0.5 that
// finishes the GELU, and reports whether n was one of them. It refuses
// x·x read only by a Mul of x, the start of torch's form of
// nn.GELU(approximate='tanh'), naming that module.
func (im *importer) pointwiseMul(n *onnx.Node, a, b ival) (bool, error) {
	if len(n.Inputs) == 2 && n.Inputs[0] == n.Inputs[1] && a.kind != ivConst {
		if r := im.soleReader(n, "Mul"); r != nil && slices.Contains(r.Inputs, n.Inputs[0]) {
			return true, fmt.Errorf("Mul of two tensors of the network's data, x·x·x: probably torch's nn.GELU(approximate='tanh'), which the import does not support; use nn.GELU() (the exact, erf form)")
		}
	}
	for _, v := range []ival{a, b} {
		if v.kind != ivPending {
			continue
		}
		switch v.p.kind {
		case pHardswish: // the HardSigmoid's ownMul: x·HardSigmoid(x)
			return true, im.set(n, ival{kind: ivAct, t: im.net.Hardswish(v.p.x.t), view: v.p.x.view})
		case pGELUAdd: // geluNodes checked that the other operand is x
			p := *v.p
			p.kind = pGELUMul
			return true, im.set(n, ival{kind: ivPending, p: &p})
		case pGELUMul:
			if b.kind != ivConst || !b.c.float || b.c.size() != 1 || b.c.f[0] != 0.5 {
				return true, fmt.Errorf("multiplies x·(1 + erf(x/√2)) by something other than the one value 0.5; want torch's form of nn.GELU")
			}
			return true, im.set(n, ival{kind: ivAct, t: im.net.GELU(v.p.x.t), view: v.p.x.view})
		}
	}
	return false, nil
}

// softmax refuses Softmax: as the network's last node with the advice to
// remove it (gtstorm's loss is the cross-entropy of the logits, which
// applies log_softmax itself), elsewhere as unsupported.
func (im *importer) softmax(n *onnx.Node) error {
	if slices.Contains(im.readers[n.Outputs[0]], nil) {
		return fmt.Errorf("operator Softmax is not supported as the network's last node: the loss takes the logits (the cross-entropy applies log_softmax itself), so remove the final nn.Softmax from the module (apply it only when you read probabilities) and export again")
	}
	return fmt.Errorf("operator Softmax is not supported inside the network (LogSoftmax is taken over the classes as the last node only); the import reads %s", ONNXSupported)
}

// layerNormMean refuses a ReduceMean of features [N,F] that does not
// start torch's opset-13 form of nn.LayerNorm (see layerNormStart).
func (im *importer) layerNormMean(n *onnx.Node) error {
	if v, err := im.data(n, 0); err == nil && len(v.view) == 1 {
		axes, _, _ := im.intsAttrOrInput(n, "axes", 1)
		return fmt.Errorf("ReduceMean of features [N,%d] over axes %v (keepdims %d): the import takes a ReduceMean of features only as the first node of torch's nn.LayerNorm (axes [-1], keepdims 1, then Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add), and ReduceMean of images over the maps, axes (2, 3)",
			v.view[0], axes, attrInt(n, "keepdims", 1))
	}
	return nil
}
