package models

import (
	"fmt"
	"math"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// torch's F.normalize(x, dim=1) of features at opset 13: ReduceL2 over
// axis 1 (keepdims), Clip with min ε, Expand to x's shape, Div of x by it;
// the Net's L2Normalize.

// reduceL2 imports the ReduceL2 n of a vector over its features, keeping
// the axis: the norm of F.normalize, which only its Clip reads.
func (im *importer) reduceL2(n *onnx.Node) error {
	x, err := im.data(n, 0)
	if err != nil {
		return err
	}
	axes, _, err := im.intsAttrOrInput(n, "axes", 1)
	if err != nil {
		return err
	}
	if len(im.net.Shape(x.t)) != 1 || len(x.view) != 1 || !(slices.Equal(axes, []int64{1}) || slices.Equal(axes, []int64{-1})) || attrInt(n, "keepdims", 1) != 1 {
		return fmt.Errorf("ReduceL2 of [N,%s] over axes %v (keepdims %d); the import takes the norm of features [N,F] over axis 1, keepdims 1, as the start of F.normalize(x, dim=1)", joinInts(x.view), axes, attrInt(n, "keepdims", 1))
	}
	return im.set(n, ival{kind: ivPending, p: &pending{kind: pL2Norm, x: x}})
}

// l2Clip imports the Clip n of F.normalize's norm p with min ε and no max.
func (im *importer) l2Clip(n *onnx.Node, p *pending) error {
	eps, hi, err := im.clipBounds(n)
	if err != nil {
		return err
	}
	if !(eps > 0) || math.IsInf(float64(eps), 0) || hi < math.MaxFloat32 {
		return fmt.Errorf("Clip of a norm (F.normalize) to [%g, %g]; want a min ε above 0 and no max (torch's clamp_min(eps))", eps, hi)
	}
	q := *p
	q.kind, q.eps = pL2Clipped, eps
	return im.set(n, ival{kind: ivPending, p: &q})
}

// l2Div imports the Div n of x by its clipped norm p: F.normalize(x, dim=1),
// L2Normalize. It reports false where n's divisor is no such norm.
func (im *importer) l2Div(n *onnx.Node) (bool, error) {
	if len(n.Inputs) != 2 {
		return false, nil
	}
	d, ok := im.vals[n.Inputs[1]]
	if !ok || d.kind != ivPending || d.p.kind != pL2Clipped {
		return false, nil
	}
	x, ok := im.vals[n.Inputs[0]]
	if !ok || x.kind != ivAct || x.t != d.p.x.t {
		return true, fmt.Errorf("divides %q by the clipped norm of another tensor; the import takes F.normalize: x divided by its own norm", n.Inputs[0])
	}
	return true, im.set(n, ival{kind: ivAct, t: im.net.L2Normalize(x.t, d.p.eps), view: slices.Clone(x.view)})
}
