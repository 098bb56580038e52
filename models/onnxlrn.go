package models

import (
	"fmt"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// torch's nn.LocalResponseNorm at opset 13, its F.local_response_norm
// traced: div = x·x, Unsqueeze (axis 1), a Reshape to [N,1,C,H,W] (a
// view), Pad of the channel axis by size/2 before and (size−1)/2 after
// (and a Pad of nothing), AveragePool [size,1,1], Squeeze (axis 1, inside
// an If on the pooled shape, which the import folds), a Reshape back, Mul
// by α, Add k, Pow β, and Div of x by that: the Net's LocalResponseNorm. Each step
// is a pending pLRN whose lrnChain says how far the chain has come.

// lrnStage is how far torch's local response normalisation has come.
type lrnStage int

const (
	lrnSquare     lrnStage = iota // x·x, which only an Unsqueeze reads
	lrnUnsqueezed                 // … [N,1,C,H,W]
	lrnPadded                     // … its channel axis padded
	lrnPooled                     // … averaged over windows of channels
	lrnSqueezed                   // … [N,C,H,W] again
	lrnScaled                     // … times α
	lrnShifted                    // … plus k
	lrnPowered                    // … to the power β: the divisor of x
)

// lrnChain is a pending pLRN's progress.
type lrnChain struct {
	stage         lrnStage
	before, after int // lrnPadded: the channel axis's padding
	p             LRN
}

// lrnWant is what the import takes of torch's chain.
const lrnWant = "the import takes nn.LocalResponseNorm as torch writes it: x·x, Unsqueeze (axis 1), Pad of axis 2 by size/2 before and (size−1)/2 after, AveragePool [size,1,1], Squeeze (axis 1), Mul by α, Add k, Pow β, Div of x by it"

// lrnStep imports n where it starts or continues torch's local response
// normalisation, and reports false where it does neither.
func (im *importer) lrnStep(n *onnx.Node) (bool, error) {
	if n.OpType == "Mul" && len(n.Inputs) == 2 && n.Inputs[0] == n.Inputs[1] && im.soleReader(n, "Unsqueeze") != nil {
		x, ok := im.vals[n.Inputs[0]]
		if ok && x.kind == ivAct && !x.last && len(x.view) == 3 && slices.Equal(im.net.Shape(x.t), x.view) {
			return true, im.set(n, ival{kind: ivPending, p: &pending{kind: pLRN, x: x, lrn: &lrnChain{stage: lrnSquare}}})
		}
	}
	k := slices.IndexFunc(n.Inputs, func(in string) bool {
		v, ok := im.vals[in]
		return ok && v.kind == ivPending && v.p.kind == pLRN
	})
	if k < 0 {
		return false, nil
	}
	p := im.vals[n.Inputs[k]].p
	c := *p.lrn
	next := func(stage lrnStage) error {
		c.stage = stage
		q := *p
		q.lrn = &c
		return im.set(n, ival{kind: ivPending, p: &q})
	}
	refuse := func(what string) error {
		return fmt.Errorf("%s of nn.LocalResponseNorm's %s; %s", n.OpType, what, lrnWant)
	}
	xs := p.x.view // [C,H,W]
	switch {
	case n.OpType == "Shape":
		// torch's squeeze(1) asks whether axis 1 is 1.
		s := []int64{batchDim}
		if c.stage >= lrnUnsqueezed && c.stage <= lrnPooled {
			s = append(s, 1)
		}
		for i, d := range xs {
			if i == 0 && c.stage == lrnPadded {
				d += c.before + c.after
			}
			s = append(s, int64(d))
		}
		return true, im.fold(n, shapeSlice(n, s), nil)
	case n.OpType == "Unsqueeze" && c.stage == lrnSquare:
		if axes, _, err := im.intsAttrOrInput(n, "axes", 1); err != nil || !slices.Equal(axes, []int64{1}) {
			return true, refuse(fmt.Sprintf("x·x along axes %v", axes))
		}
		return true, next(lrnUnsqueezed)
	case n.OpType == "Reshape" && c.stage != lrnSquare && c.stage <= lrnSqueezed:
		// torch's views: [N,1,C,H,−1] of the unsqueezed squares and
		// [N,C,H,W] of the squeezed means change nothing here.
		target, err := im.ints(n, 1, "target shape", false)
		if err != nil {
			return true, err
		}
		view := xs
		if c.stage < lrnSqueezed {
			view = append([]int{1}, xs...)
		}
		to, err := im.perSample(target, view, attrInt(n, "allowzero", 0) != 0)
		if err != nil || !slices.Equal(to, view) {
			return true, refuse(fmt.Sprintf("[N,%s] reshaped by %s", joinInts(view), shapeText(target)))
		}
		return true, next(c.stage)
	case n.OpType == "Pad" && (c.stage == lrnUnsqueezed || c.stage == lrnPadded):
		// torch pads the channel axis, then pads nothing (avg_pool3d's
		// padding 0).
		pads, _, err := im.intsAttrOrInput(n, "pads", 1)
		if err != nil {
			return true, err
		}
		others := func() bool { // a pad of another axis than the channels'
			for i, v := range pads {
				if i%5 != 2 && v != 0 {
					return true
				}
			}
			return false
		}
		if v, ok, _ := im.arg(n, 2); ok && (v.kind != ivConst || !v.c.float || v.c.size() != 1 || v.c.f[0] != 0) || attrString(n, "mode", "constant") != "constant" ||
			len(pads) != 10 || others() || pads[2] < 0 || pads[7] < 0 {
			return true, refuse(fmt.Sprintf("squares [N,1,%s] padded by %v", joinInts(xs), pads))
		}
		c.before, c.after = c.before+int(pads[2]), c.after+int(pads[7])
		return true, next(lrnPadded)
	case n.OpType == "AveragePool" && c.stage == lrnPadded:
		kernel, strides, pads := attr(n, "kernel_shape"), attr(n, "strides"), attr(n, "pads")
		size := c.before + c.after + 1
		ok := kernel != nil && slices.Equal(kernel.Ints, []int64{int64(size), 1, 1}) && c.before == size/2 && c.after == (size-1)/2 &&
			(strides == nil || slices.Equal(strides.Ints, []int64{1, 1, 1})) && (pads == nil || !slices.ContainsFunc(pads.Ints, func(v int64) bool { return v != 0 })) &&
			attrInt(n, "ceil_mode", 0) == 0
		if !ok {
			var k []int64
			if kernel != nil {
				k = kernel.Ints
			}
			return true, refuse(fmt.Sprintf("squares padded by %d and %d, pooled by kernel %v", c.before, c.after, k))
		}
		c.p.Size = size
		return true, next(lrnPooled)
	case n.OpType == "Squeeze" && c.stage == lrnPooled:
		if axes, _, err := im.intsAttrOrInput(n, "axes", 1); err != nil || !slices.Equal(axes, []int64{1}) {
			return true, refuse(fmt.Sprintf("mean squares squeezed along axes %v", axes))
		}
		return true, next(lrnSqueezed)
	case (n.OpType == "Mul" && c.stage == lrnSqueezed || n.OpType == "Add" && c.stage == lrnScaled || n.OpType == "Pow" && c.stage == lrnShifted) && len(n.Inputs) == 2 && k == 0:
		v, err := im.konst(n, 1, "operand", false)
		if err != nil {
			return true, err
		}
		if !v.float || v.size() != 1 {
			return true, refuse(fmt.Sprintf("mean squares and %q of shape %v", v.name, v.dims))
		}
		switch n.OpType {
		case "Mul":
			c.p.Alpha = v.f[0]
			return true, next(lrnScaled)
		case "Add":
			c.p.K = v.f[0]
			return true, next(lrnShifted)
		}
		c.p.Beta = v.f[0]
		return true, next(lrnPowered)
	case n.OpType == "Div" && c.stage == lrnPowered && k == 1 && n.Inputs[0] != "":
		if x, ok := im.vals[n.Inputs[0]]; !ok || x.kind != ivAct || x.t != p.x.t {
			return true, refuse("divisor dividing another tensor than the one it normalises")
		}
		return true, im.act(n, im.net.LocalResponseNorm(p.x.t, c.p))
	}
	return true, refuse(fmt.Sprintf("chain at step %d of 8", c.stage+1))
}
