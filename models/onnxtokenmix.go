package models

import (
	"fmt"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// MLP-Mixer's token mixing: a Linear along the tokens, the MatMul of a
// token view [D,T] by a constant [T,K] and the Add of its bias, as
// TokenLinear.

// tokenMatMulNext imports n, a reader of the MatMul p of a token view by
// [T,K]: the Add of its bias makes TokenLinear; any other reader finds it
// made without one.
func (im *importer) tokenMatMulNext(n *onnx.Node, p *pending) error {
	k := p.w.dims[1]
	if n.OpType == "Add" && len(n.Inputs) == 2 {
		other := n.Inputs[1]
		if im.vals[other].kind == ivPending && im.vals[other].p == p {
			other = n.Inputs[0]
		}
		if b := im.vals[other]; b.kind == ivConst {
			if !b.c.float || len(b.c.dims) != 1 || b.c.dims[0] != k {
				return fmt.Errorf("adds %q of shape %v to a MatMul of the tokens by [%d,%d]; want its bias [%d]", b.c.name, b.c.dims, p.w.dims[0], k, k)
			}
			return im.tokenLinear(n, p, b.c.f)
		}
	}
	if err := im.tokenLinear(p.node, p, nil); err != nil {
		return err
	}
	return im.node(n)
}

// tokenLinear adds the TokenLinear of the MatMul p, with bias where it is
// not nil, as n's output, a token view [D,K].
func (im *importer) tokenLinear(n *onnx.Node, p *pending, bias []float32) error {
	name := im.layerName(p.node, p.w.name)
	k := p.w.dims[1]
	t := im.net.TokenLinear(name, p.x.t, k, bias == nil)
	im.params[name+".w"] = slices.Clone(p.w.f)
	if bias != nil {
		im.params[name+".b"] = slices.Clone(bias)
	}
	return im.set(n, ival{kind: ivAct, t: t, view: []int{p.x.view[0], k}})
}
