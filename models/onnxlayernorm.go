package models

import (
	"fmt"
	"math"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// The importer's handling of torch's opset-13 form of nn.LayerNorm over a
// sample's whole shape (nn.LayerNorm(F) of features [N,F],
// nn.LayerNorm([C,H,W]) of images):
//
//	m = ReduceMean(x, axes [-1] or [-3,-2,-1], keepdims 1)
//	d = Sub(x, m)
//	v = ReduceMean(Pow(d, 2), the same axes)
//	y = Add(Mul(Div(d, Sqrt(Add(v, ε))), weight), bias)
//
// each value read only by the next node (d by the Pow and the Div), which
// is the Net's LayerNorm of x with ε, weight and bias. Each node of the
// chain records a pending value of its stage; a node that reads one
// (importer.node hands it to layerNormStep) must be the next of the chain.

// lnChain is what a LayerNorm's chain has read so far.
type lnChain struct {
	x      ival       // the data normalised
	xName  string     // its value's name, which the Sub reads too
	axes   []int64    // the first ReduceMean's axes, as the file writes them
	start  *onnx.Node // the first ReduceMean
	centre string     // the Sub's output, which the Div reads
	eps    float32
	gamma  []float32
	weight string // the weight's initialiser, which names the layer
	// channel marks a LayerNorm across the channels at each position,
	// which becomes the Net's ChannelNorm: ConvNeXt's channels_first
	// form (ReduceMean axes [1] of an image) or nn.LayerNorm(C) of a
	// channels-last value (axes [-1]; see onnxchanlast.go).
	channel bool
	affine  []int // the weight's and bias's shape, leading 1s aside
}

// lnAxes returns the ReduceMean n's axes, and whether they are all of the
// sample's axes for data of view (rank len(view)+1) with keepdims 1.
func (im *importer) lnAxes(n *onnx.Node, view []int) ([]int64, bool, error) {
	axes, _, err := im.intsAttrOrInput(n, "axes", 1)
	if err != nil {
		return nil, false, err
	}
	rank := int64(len(view) + 1)
	norm := make([]int64, len(axes))
	for i, a := range axes {
		norm[i] = a
		if a < 0 {
			norm[i] = a + rank
		}
	}
	slices.Sort(norm)
	want := make([]int64, len(view))
	for i := range want {
		want[i] = int64(i + 1)
	}
	return axes, slices.Equal(norm, want) && attrInt(n, "keepdims", 1) == 1, nil
}

// layerNormStart starts a LayerNorm at the ReduceMean n where it reduces
// features [N,F] over axis 1, or images [N,C,H,W] over axes (1, 2, 3), with
// keepdims: torch's nn.LayerNorm of the whole sample. It reports false,
// having recorded nothing, for other ReduceMeans.
func (im *importer) layerNormStart(n *onnx.Node) (bool, error) {
	x, err := im.data(n, 0)
	if err != nil || !slices.Equal(im.net.Shape(x.t), x.view) || (len(x.view) != 1 && len(x.view) != 3) {
		return false, nil
	}
	if len(x.view) == 3 && attrInt(n, "keepdims", 1) == 1 {
		// ConvNeXt's channels_first LayerNorm: x.mean(1, keepdim=True).
		if axes, _, err := im.intsAttrOrInput(n, "axes", 1); err == nil && len(axes) == 1 && (axes[0] == 1 || axes[0] == -3) {
			return true, im.lnStart(n, &lnChain{x: x, xName: n.Inputs[0], axes: axes, start: n, channel: true, affine: []int{x.view[0], 1, 1}})
		}
	}
	axes, whole, err := im.lnAxes(n, x.view)
	if err != nil || !whole {
		return false, err
	}
	return true, im.lnStart(n, &lnChain{x: x, xName: n.Inputs[0], axes: axes, start: n, affine: x.view})
}

// lnStart records n, the ReduceMean that starts the chain c.
func (im *importer) lnStart(n *onnx.Node, c *lnChain) error {
	return im.set(n, ival{kind: ivPending, p: &pending{kind: pLNMean, x: c.x, ln: c}})
}

// layerNormStep imports n where it reads a value of a LayerNorm's chain,
// reporting false for other nodes.
func (im *importer) layerNormStep(n *onnx.Node) (bool, error) {
	var p *pending
	for _, in := range n.Inputs {
		if v, ok := im.vals[in]; ok && v.kind == ivPending && v.p.kind >= pLNMean && v.p.kind <= pLNScaled {
			p = v.p
			break
		}
	}
	if p == nil {
		return false, nil
	}
	return true, im.lnNext(n, p)
}

// lnWant is the node that follows each stage of the chain.
var lnWant = map[pendKind]string{pLNMean: "Sub(x, mean)", pLNCentred: "Pow(x − mean, 2) or Div(x − mean, std)",
	pLNSquared: "ReduceMean over the first's axes", pLNVar: "Add(variance, ε)", pLNVarEps: "Sqrt", pLNStd: "Div(x − mean, std)",
	pLNNormed: "Mul by the weight (nn.LayerNorm(elementwise_affine=True))", pLNScaled: "Add of the bias"}

// lnNext imports n, a reader of the chain's value of stage p.kind.
func (im *importer) lnNext(n *onnx.Node, p *pending) error {
	c := p.ln
	in := func(k int) (ival, bool) {
		if k >= len(n.Inputs) {
			return ival{}, false
		}
		v, ok := im.vals[n.Inputs[k]]
		return v, ok
	}
	stage := func(k int, kind pendKind) bool {
		v, ok := in(k)
		return ok && v.kind == ivPending && v.p.kind == kind && v.p.ln == c
	}
	next := func(kind pendKind) error {
		return im.set(n, ival{kind: ivPending, p: &pending{kind: kind, x: c.x, ln: c}})
	}
	refuse := func() error {
		return fmt.Errorf("reads %s (torch's nn.LayerNorm: ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add, each read only by the next); want %s",
			pendNames[p.kind], lnWant[p.kind])
	}
	if len(n.Inputs) > 2 {
		return refuse()
	}
	switch {
	case n.OpType == "Sub" && stage(1, pLNMean) && n.Inputs[0] == c.xName:
		c.centre = n.Outputs[0]
		return next(pLNCentred)
	case n.OpType == "Pow" && stage(0, pLNCentred):
		e, err := im.scalar(n, 1, "exponent")
		if err != nil {
			return err
		}
		if e != 2 {
			return fmt.Errorf("raises x − mean of a LayerNorm to the power %g; want 2 (the variance)", e)
		}
		return next(pLNSquared)
	case n.OpType == "ReduceMean" && stage(0, pLNSquared):
		axes, _, err := im.intsAttrOrInput(n, "axes", 1)
		if err != nil {
			return err
		}
		if !slices.Equal(axes, c.axes) || attrInt(n, "keepdims", 1) != 1 {
			return fmt.Errorf("averages a LayerNorm's squares over axes %v (keepdims %d); want the mean's axes %v, keepdims 1", axes, attrInt(n, "keepdims", 1), c.axes)
		}
		return next(pLNVar)
	case n.OpType == "Add" && (stage(0, pLNVar) || stage(1, pLNVar)):
		k := 1
		if stage(1, pLNVar) {
			k = 0
		}
		e, err := im.scalar(n, k, "ε")
		if err != nil {
			return err
		}
		if !(e > 0) || math.IsInf(float64(e), 0) {
			return fmt.Errorf("adds ε %g to a LayerNorm's variance; want a finite number above 0", e)
		}
		c.eps = e
		return next(pLNVarEps)
	case n.OpType == "Sqrt" && stage(0, pLNVarEps):
		return next(pLNStd)
	case n.OpType == "Div" && stage(0, pLNCentred) && n.Inputs[0] == c.centre && stage(1, pLNStd):
		return next(pLNNormed)
	case n.OpType == "Mul" && (stage(0, pLNNormed) || stage(1, pLNNormed)):
		w, err := im.lnAffine(n, stage(0, pLNNormed), c, "weight")
		if err != nil {
			return err
		}
		c.gamma, c.weight = w.f, w.name
		return next(pLNScaled)
	case n.OpType == "Add" && (stage(0, pLNScaled) || stage(1, pLNScaled)):
		b, err := im.lnAffine(n, stage(0, pLNScaled), c, "bias")
		if err != nil {
			return err
		}
		name := im.layerName(c.start, c.weight)
		if c.channel && len(im.net.Shape(c.x.t)) == 3 {
			t := im.net.ChannelNorm(name, c.x.t, c.eps)
			im.params[name+".g"], im.params[name+".b"] = c.gamma, b.f
			return im.set(n, ival{kind: ivAct, t: t, view: slices.Clone(c.x.view), last: c.x.last, seq: c.x.seq})
		}
		// A sample's whole shape, or the channels of a global pool's output
		// [C] held channels-last: its features.
		t := im.net.LayerNorm(name, c.x.t, c.eps)
		im.params[name+".g"], im.params[name+".b"] = c.gamma, b.f
		return im.set(n, ival{kind: ivAct, t: t, view: slices.Clone(c.x.view), last: c.x.last, seq: c.x.seq})
	}
	return refuse()
}

// scalar returns input k of n, a constant of one float value.
func (im *importer) scalar(n *onnx.Node, k int, what string) (float32, error) {
	v, ok, err := im.arg(n, k)
	switch {
	case err != nil:
		return 0, err
	case !ok || v.kind != ivConst || !v.c.float || v.c.size() != 1:
		return 0, fmt.Errorf("the %s of a LayerNorm is not a constant of one value (input %d)", what, k)
	}
	return v.c.f[0], nil
}

// lnAffine returns the LayerNorm's weight or bias, the constant input of
// the Mul or Add n (the other, where first reads the chain's value first),
// of the normalised shape (leading 1s aside).
func (im *importer) lnAffine(n *onnx.Node, first bool, c *lnChain, what string) (*iconst, error) {
	k := 0
	if first {
		k = 1
	}
	v, ok, err := im.arg(n, k)
	if err != nil {
		return nil, err
	}
	dims := []int(nil)
	if ok && v.kind == ivConst {
		dims = v.c.dims
		for len(dims) > len(c.affine) && dims[0] == 1 {
			dims = dims[1:]
		}
	}
	if !ok || v.kind != ivConst || !v.c.float || !slices.Equal(dims, c.affine) {
		got := "not a constant"
		if ok && v.kind == ivConst {
			got = fmt.Sprintf("%q of shape %v", v.c.name, v.c.dims)
		}
		return nil, fmt.Errorf("the %s of a LayerNorm over [N,%s] is %s; want a float constant of shape [%s]", what, joinInts(c.x.view), got, joinInts(c.affine))
	}
	return v.c, nil
}
