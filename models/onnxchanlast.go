package models

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// The importer's handling of channels-last values: ConvNeXt's block
// permutes an image [N,C,H,W] to [N,H,W,C] (Transpose perm [0,2,3,1]),
// applies nn.LayerNorm(C), nn.Linear layers, GELU and a per-channel scale
// along the last axis, and permutes back (perm [0,3,1,2]). The Net keeps
// such a value as the image it is (ival.last): the operators along the
// channels become the image's layers — LayerNorm over the last axis is
// ChannelNorm, MatMul by a constant [C,K] (and the Add of a [K] bias) a
// 1×1 Conv, Mul by a [C] constant (the layer scale) LayerScale, Mul by one
// value and Add of a [C] constant or one value MulConst and AddConst — and
// every other reader of a channels-last value is refused, so that nothing
// reads it in the wrong layout.

// lastSupported is what the import takes on a channels-last value.
const lastSupported = "ReduceMean over the last axis starting nn.LayerNorm(C), MatMul by a constant [C,K] (with or without the Add of a bias [K]), " +
	"torch's GELU (Div by √2, Erf, Add 1, Mul by x, Mul by 0.5), elementwise activations (ReLU, SiLU, Tanh, …; PRelu of one slope), Mul by a constant [C] (a layer scale, trained), Mul and Add of one value, Add of a constant [C], " +
	"Add and Mul of two channels-last tensors (and for tokens [N,T,D], Slice and Split along the last axis) and Transpose perm [0,3,1,2] back to an image"

// lastRefusal is the refusal of a reader of the channels-last value name
// that does not take it.
func lastRefusal(name string) error {
	return fmt.Errorf("reads %q, a channels-last tensor (an image after Transpose perm [0,2,3,1]); the import takes there only %s", name, lastSupported)
}

// channelsLast imports n where it starts a channels-last value (Transpose
// perm [0,2,3,1] of an image) or reads one, reporting false for other
// nodes.
func (im *importer) channelsLast(n *onnx.Node) (bool, error) {
	if n.OpType == "Transpose" && len(n.Inputs) == 1 {
		// An image, or a global pool's output [C] (view [C,1,1]: the
		// LayerNorm2d of torchvision's ConvNeXt head).
		if v, ok := im.vals[n.Inputs[0]]; ok && v.kind == ivAct && !v.last && len(v.view) == 3 && (slices.Equal(im.net.Shape(v.t), v.view) || im.onPoint(v)) && permIs(n, 0, 2, 3, 1) {
			return true, im.set(n, ival{kind: ivAct, t: v.t, view: []int{v.view[1], v.view[2], v.view[0]}, last: true})
		}
	}
	k := -1 // the first pattern started on a channels-last value, else the first such value
	for i, in := range n.Inputs {
		if v, ok := im.vals[in]; ok && v.kind == ivPending && v.p.x.last {
			k = i
			break
		}
		if v, ok := im.vals[in]; ok && v.last && k < 0 {
			k = i
		}
	}
	if k < 0 {
		return false, nil
	}
	v := im.vals[n.Inputs[k]]
	if v.kind == ivPending && v.p.kind == pMatMul && !(n.OpType == "Add" && len(n.Inputs) == 2) {
		// A MatMul that no Add of a bias follows: a 1×1 Conv without one.
		if err := im.lastConv(v.p.node, v.p, nil); err != nil {
			return true, err
		}
		return true, im.node(n)
	}
	switch {
	case v.kind == ivPending && v.p.kind >= pGELUDiv && v.p.kind <= pGELUMul:
		return true, im.lastGELU(n, v.p.x)
	case v.kind == ivPending && (v.p.kind == pSiLU || v.p.kind == pHardswish):
		return true, im.lastActivation(n, v.p.x)
	case v.kind == ivPending && v.p.kind != pMatMul:
		return true, fmt.Errorf("reads %q, which is %s of a channels-last tensor; the import takes there only %s", n.Inputs[k], pendNames[v.p.kind], lastSupported)
	}
	switch n.OpType {
	case "Transpose":
		if !permIs(n, 0, 3, 1, 2) {
			break
		}
		if s := im.net.Shape(v.t); len(s) == 1 {
			return true, im.set(n, ival{kind: ivAct, t: v.t, view: []int{s[0], 1, 1}}) // a global pool's output again
		}
		return true, im.set(n, ival{kind: ivAct, t: v.t, view: im.net.Shape(v.t), unpermuted: true})
	case "ReduceMean":
		axes, _, err := im.intsAttrOrInput(n, "axes", 1)
		if err != nil {
			return true, err
		}
		if len(axes) != 1 || (axes[0] != -1 && axes[0] != int64(len(v.view))) || attrInt(n, "keepdims", 1) != 1 {
			return true, fmt.Errorf("ReduceMean of a channels-last tensor over axes %v (keepdims %d); the import takes one over the last axis (axes [-1], keepdims 1) as the start of nn.LayerNorm(C)", axes, attrInt(n, "keepdims", 1))
		}
		return true, im.lnStart(n, &lnChain{x: v, xName: n.Inputs[0], axes: axes, start: n, channel: true, affine: []int{lastChannels(v)}})
	case "MatMul":
		if k != 0 {
			break
		}
		w, err := im.konst(n, 1, "weights", false)
		if err != nil {
			return true, err
		}
		if !w.float || len(w.dims) != 2 || w.dims[0] != lastChannels(v) {
			return true, fmt.Errorf("MatMul of a channels-last tensor [N,%s] by %q of shape %v; want a float constant [%d,K] (nn.Linear)", joinInts(v.view), w.name, w.dims, lastChannels(v))
		}
		return true, im.set(n, ival{kind: ivPending, p: &pending{kind: pMatMul, x: v, w: w, node: n}})
	case "Div":
		if k == 0 && im.geluNodes(n) != nil {
			return true, im.lastGELUDiv(n, v)
		}
	case "Add", "Mul":
		return true, im.lastBinary(n)
	case "Conv":
		if k == 0 && len(v.view) == 2 && !v.seq {
			return true, im.tokenConv1d(n, v)
		}
	case "Relu", "LeakyRelu", "Tanh", "Sigmoid", "Elu", "Softplus", "HardSigmoid", "HardSwish", "Clip", "PRelu", "Dropout", "Identity":
		if k == 0 && (n.OpType != "PRelu" || im.scalarSlope(n)) {
			return true, im.lastActivation(n, v)
		}
	}
	return true, lastRefusal(n.Inputs[k])
}

// permIs reports whether the Transpose n's perm is p.
func permIs(n *onnx.Node, p ...int64) bool {
	a := attr(n, "perm")
	return a != nil && slices.Equal(a.Ints, p)
}

// lastBinary imports the Add or Mul n of a channels-last value: the Add
// of a MatMul's bias [K] (a 1×1 Conv with a bias), of two channels-last
// values of one shape (a residual join), the Mul by a constant [C]
// (ConvNeXt's layer scale, LayerScale: trained, as torch's gamma is), and
// the Add of a constant [C] or the Add or Mul of one value (AddConst,
// MulConst, which training does not change).
func (im *importer) lastBinary(n *onnx.Node) error {
	if len(n.Inputs) != 2 {
		return fmt.Errorf("%s of %d inputs; want 2", n.OpType, len(n.Inputs))
	}
	a, _, err := im.arg(n, 0)
	if err != nil {
		return err
	}
	b, _, err := im.arg(n, 1)
	if err != nil {
		return err
	}
	if a.kind == ivConst {
		a, b = b, a
	}
	for i, v := range []ival{a, b} {
		if x := []ival{b, a}[i]; n.OpType == "Mul" && v.kind == ivPending && (v.p.kind == pSiLU || v.p.kind == pHardswish) && x.kind == ivAct && x.last && x.t == v.p.x.t {
			return im.lastActivation(n, x) // F.silu(x) with x first: x·σ(x)
		}
	}
	switch {
	case n.OpType == "Add" && a.kind == ivPending && a.p.kind == pMatMul && b.kind == ivConst:
		if !b.c.float || len(b.c.dims) != 1 || b.c.dims[0] != a.p.w.dims[1] {
			return fmt.Errorf("adds %q of shape %v to a MatMul of a channels-last tensor by [%d,%d]; want its bias [%d]", b.c.name, b.c.dims, a.p.w.dims[0], a.p.w.dims[1], a.p.w.dims[1])
		}
		p := a.p
		if base, ok := strings.CutSuffix(b.c.name, "_bias"); ok {
			// nn.MultiheadAttention's in_proj_bias: the layer is its
			// in_proj, the attention's own name left to it.
			w := *p.w
			w.name = base + ".weight"
			p = &pending{kind: pMatMul, x: p.x, w: &w, node: p.node}
		}
		return im.lastConv(n, p, b.c.f)
	case (n.OpType == "Add" || n.OpType == "Mul") && a.kind == ivAct && b.kind == ivAct:
		verb, join := "adds a channels-last tensor [N,%s] to", im.net.Add
		if n.OpType == "Mul" {
			verb, join = "multiplies a channels-last tensor [N,%s] by", im.net.Mul // gMLP's u ⊙ v
		}
		if !a.last || !b.last || !slices.Equal(a.view, b.view) || a.seq != b.seq {
			return fmt.Errorf(verb+" a tensor [N,%s] that is not channels-last of that shape and layout; permute both alike first", joinInts(a.view), joinInts(b.view))
		}
		at, bt := a.t, b.t
		if !slices.Equal(im.net.Shape(at), im.net.Shape(bt)) {
			// Tokens, one of them maybe still its patch embedding's image:
			// both as the token image.
			at, bt = im.tokensOf(at), im.tokensOf(bt)
		}
		return im.set(n, ival{kind: ivAct, t: join(at, bt), view: a.view, last: true, seq: a.seq})
	case a.kind == ivAct && b.kind == ivConst && ((b.c.size() == 1 && n.OpType == "Mul") || n.OpType == "Add"):
		// Trained where named trainable: one value (ReZero's alpha on
		// tokens), or a shift a channel (ResMLP's Affine β).
		kind := map[string]layerKind{"Mul": kindMulConst, "Add": kindAddConst}[n.OpType]
		if done, err := im.trainableConst(n, a, b.c, kind); done {
			return err
		}
		fallthrough
	case a.kind == ivAct && b.kind == ivConst:
		c, err := lastConsts(a, b.c)
		if err != nil {
			return fmt.Errorf("%s of a channels-last tensor and the constant %q: %w", n.OpType, b.c.name, err)
		}
		var t Tensor
		switch {
		case n.OpType == "Mul" && len(c) > 1:
			// ConvNeXt's layer scale, gamma · x: a parameter of torch's,
			// trained, its values x⁰.
			name := im.layerName(n, b.c.name)
			t = im.net.LayerScale(name, a.t)
			im.params[name+".g"] = c
		case n.OpType == "Mul":
			t = im.net.MulConst(a.t, c)
		default:
			t = im.net.AddConst(a.t, c)
		}
		return im.set(n, ival{kind: ivAct, t: t, view: a.view, last: true, seq: a.seq})
	}
	return fmt.Errorf("%s of a channels-last tensor and another value; the import takes there only %s", n.OpType, lastSupported)
}

// lastConsts returns the values of c, a constant that ONNX broadcasts
// against the channels-last x [N,H,W,C] (or tokens [N,T,C]): one value, or one per channel
// ([C], or [1,…,1,C]).
func lastConsts(x ival, c *iconst) ([]float32, error) {
	switch {
	case !c.float:
		return nil, fmt.Errorf("an integer constant of shape %v; want float values", c.dims)
	case slices.ContainsFunc(c.f, func(v float32) bool { return v != v }):
		return nil, fmt.Errorf("a constant of shape %v holding NaN", c.dims)
	case c.size() == 1:
		return []float32{c.f[0]}, nil
	case len(c.dims) == 0 || len(c.dims) > 4 || c.dims[len(c.dims)-1] != lastChannels(x) || c.size() != lastChannels(x):
		return nil, fmt.Errorf("shape %v is neither one value nor one per channel ([%d] against [N,%s])", c.dims, lastChannels(x), joinInts(x.view))
	}
	return slices.Clone(c.f), nil
}

// lastConv adds the 1×1 Conv of the channels-last MatMul p (torch's
// nn.Linear on [N,H,W,C]), with bias where it is not nil, as n's output:
// its weights [C,K] transposed to [K,C,1,1].
func (im *importer) lastConv(n *onnx.Node, p *pending, bias []float32) error {
	name := im.layerName(p.node, p.w.name)
	k := p.w.dims[1]
	if len(im.net.Shape(p.x.t)) == 1 { // a global pool's output: a dense layer, its weights [C,K] as they are
		var t Tensor
		if bias != nil {
			t = im.net.Dense(name, p.x.t, k)
			im.params[name+".b"] = bias
		} else {
			t = im.net.DenseNoBias(name, p.x.t, k)
		}
		im.params[name+".w"] = slices.Clone(p.w.f)
		return im.set(n, ival{kind: ivAct, t: t, view: []int{1, 1, k}, last: true})
	}
	t := im.net.Conv2D(name, p.x.t, Conv{Out: k, Kernel: 1, Bias: bias != nil})
	im.params[name+".w"] = transpose2(p.w).f
	if bias != nil {
		im.params[name+".b"] = bias
	}
	view := slices.Clone(p.x.view) // [H,W,K], or the tokens' [T,K]
	view[len(view)-1] = k
	return im.set(n, ival{kind: ivAct, t: t, view: view, last: true, seq: p.x.seq})
}

// lastChannels returns the channels of the channels-last value v: its
// view's last dimension.
func lastChannels(v ival) int { return v.view[len(v.view)-1] }

// lastActivation imports n, an elementwise activation of the
// channels-last x (or the Mul that finishes SiLU or Hardswish of it), as
// on any tensor, its output channels-last.
func (im *importer) lastActivation(n *onnx.Node, x ival) error {
	// The handlers take the data as the Net holds it: the input is shown
	// to them so for the call.
	in := n.Inputs[0]
	if v := im.vals[in]; v.kind == ivAct {
		im.vals[in] = ival{kind: ivAct, t: v.t, view: im.net.Shape(v.t)}
		defer func() { im.vals[in] = v }()
	}
	if err := importOps[n.OpType](im, n); err != nil {
		return err
	}
	if v := im.vals[n.Outputs[0]]; v.kind == ivAct {
		v.last, v.view, v.seq = true, slices.Clone(x.view), x.seq
		im.vals[n.Outputs[0]] = v
	}
	return nil
}

// scalarSlope reports whether the PRelu n has one slope, which does not
// depend on the layout.
func (im *importer) scalarSlope(n *onnx.Node) bool {
	c, err := im.konst(n, 1, "slope", false)
	return err == nil && c.size() == 1
}

// lastGELUDiv starts torch's GELU (see geluDiv) on the channels-last x.
func (im *importer) lastGELUDiv(n *onnx.Node, x ival) error {
	c, err := im.konst(n, 1, "divisor", false)
	if err != nil {
		return err
	}
	if !c.float || c.size() != 1 || !(math.Abs(float64(c.f[0])-math.Sqrt2) <= 1e-6) {
		return fmt.Errorf("divides by %q of shape %v before Erf, Add, Mul and Mul, torch's form of nn.GELU; want one value, √2 (the exact GELU)", n.Inputs[1], c.dims)
	}
	return im.set(n, ival{kind: ivPending, p: &pending{kind: pGELUDiv, x: x}})
}

// lastGELU imports n, a node of torch's GELU on the channels-last x, as
// the other GELUs are (Erf, Add and Mul read only the pattern's values),
// its output channels-last.
func (im *importer) lastGELU(n *onnx.Node, x ival) error {
	if n.OpType != "Erf" && n.OpType != "Add" && n.OpType != "Mul" {
		return fmt.Errorf("reads torch's GELU of a channels-last tensor before it is finished; want Erf, Add 1, Mul by x, Mul by 0.5")
	}
	return im.lastActivation(n, x)
}

// layerScaleMul imports the Mul n of an image that a channels-last block
// has just permuted back and a constant of one value a channel ([C,1,1],
// or [1,C,1,1]) as LayerScale, trained, its values x⁰: torchvision's
// ConvNeXt block (layer_scale * block(x), layer_scale an nn.Parameter
// [C,1,1]). It reports false for other Muls.
func (im *importer) layerScaleMul(n *onnx.Node, a, b ival) (bool, error) {
	if b.kind == ivAct {
		a, b = b, a
	}
	if a.kind != ivAct || !a.unpermuted || b.kind != ivConst || !b.c.float {
		return false, nil
	}
	c := a.view[0]
	dims := b.c.dims
	if len(dims) == 4 && dims[0] == 1 {
		dims = dims[1:]
	}
	if c < 2 || !slices.Equal(dims, []int{c, 1, 1}) {
		return false, nil
	}
	t, _, err := im.fileLayer(n, b.c.name, ".g", "scales by", b.c.f, func(name string) Tensor { return im.net.LayerScale(name, a.t) })
	if err != nil {
		return true, err
	}
	return true, im.set(n, ival{kind: ivAct, t: t, view: slices.Clone(a.view)})
}
