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

// tokenConv1d imports the Conv n of channels-last tokens x [T,D] by a
// kernel of 1 (lucidrains' gMLP, nn.Conv1d(T, K, 1) on [N,T,D]: the tokens
// are its channels, the features its length): a Linear along the tokens,
// TokenLinear, whose output is channels-last [K,D].
func (im *importer) tokenConv1d(n *onnx.Node, x ival) error {
	t, d := x.view[0], x.view[1]
	w, err := im.konst(n, 1, "weights", false)
	if err != nil {
		return err
	}
	ones := func(name string) bool {
		a := attr(n, name)
		return a == nil || !slices.ContainsFunc(a.Ints, func(v int64) bool { return v != 1 })
	}
	pads := attr(n, "pads")
	if !w.float || len(w.dims) != 3 || w.dims[1] != t || w.dims[2] != 1 || attrInt(n, "group", 1) != 1 || !ones("strides") || !ones("dilations") ||
		pads != nil && slices.ContainsFunc(pads.Ints, func(v int64) bool { return v != 0 }) {
		return fmt.Errorf("Conv of the channels-last tokens [N,%s] by %q of shape %v; the import takes there nn.Conv1d(%d, K, 1) along the tokens: weights [K,%d,1], one group, stride 1, no padding", joinInts(x.view), w.name, w.dims, t, t)
	}
	k := w.dims[0]
	var bias []float32
	if len(n.Inputs) > 2 && n.Inputs[2] != "" {
		if bias, err = im.floats(n, 2, "bias", k, false); err != nil {
			return err
		}
	}
	name := im.layerName(n, w.name)
	out := im.net.TokenLinear(name, x.t, k, bias == nil)
	im.params[name+".w"] = transpose2(&iconst{dims: []int{k, t}, float: true, f: w.f}).f // [T,K]
	if bias != nil {
		im.params[name+".b"] = slices.Clone(bias)
	}
	return im.set(n, ival{kind: ivAct, t: out, view: []int{k, d}, last: true})
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
