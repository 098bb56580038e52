package models

import (
	"fmt"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// The importer's handling of arithmetic with constants on the network's
// data — x − mean and x / std of an input normalisation inside forward,
// x·c and x + c — and of Concat of the data (torch.cat of branches along
// the channels). Sub, Div, Mul and Add on constants alone are folded;
// Add also joins residual branches and takes the bias of a MatMul and the
// shift of PyTorch's GroupNorm, Mul its scale and, of x and Sigmoid(x),
// torch's form of nn.SiLU.

func (im *importer) add(n *onnx.Node) error {
	a, b, done, err := im.binary(n, func(x, y int64) int64 { return x + y }, func(x, y float32) float32 { return x + y })
	if done || err != nil {
		return err
	}
	if a.kind != ivConst && b.kind != ivConst {
		// Two activations, one of them perhaps a MatMul without a bias.
		if a, err = im.settle(n.Inputs[0], a); err == nil {
			b, err = im.settle(n.Inputs[1], b)
		}
		if err != nil {
			return err
		}
	}
	switch {
	case a.kind == ivAct && b.kind == ivAct:
		if !slices.Equal(a.view, b.view) || !slices.Equal(im.net.Shape(a.t), im.net.Shape(b.t)) {
			return fmt.Errorf("adds tensors of shapes [N,%s] and [N,%s]; want equal shapes (a residual join)", joinInts(a.view), joinInts(b.view))
		}
		return im.act(n, im.net.Add(a.t, b.t))
	case a.kind == ivPending && b.kind == ivConst && a.p.kind == pMatMul:
		p := a.p
		if b.c.float && b.c.size() == p.w.dims[1] && (len(b.c.dims) == 1 || p.w.dims[1] == 1) {
			return im.dense(n, p.x, p.w, p.w.name, b.c.f)
		}
		// Not its bias: a MatMul without one, then a constant added.
		return im.dataOp(n, kindAddConst)
	case a.kind == ivPending && b.kind == ivConst && (a.p.kind == pGNScaled || a.p.kind == pGN):
		return im.finishGroupNorm(n, a.p, b.c)
	case a.kind == ivAct && b.kind == ivConst:
		return im.dataOp(n, kindAddConst)
	case a.kind == ivPending && a.p.kind == pGELUErf && b.kind == ivConst:
		return im.geluAdd(n, a, b)
	}
	what := "a tensor of the data"
	for _, v := range []ival{a, b} {
		if v.kind == ivPending {
			what = pendNames[v.p.kind]
		}
	}
	return fmt.Errorf("adds %s to another value; the import takes Add as a residual join of two tensors of equal shape, of constants on the network's data, as the bias of a MatMul or as the shift of a GroupNorm", what)
}

// dataOp adds the constant layer kind for n, a commutative Add or Mul of
// the network's data and a constant, in either order.
func (im *importer) dataOp(n *onnx.Node, kind layerKind) error {
	k := 0
	if v, _, err := im.arg(n, 0); err == nil && v.kind == ivConst {
		k = 1
	}
	x, err := im.data(n, k)
	if err != nil {
		return err
	}
	return im.constLayer(n, x, 1-k, kind)
}

func (im *importer) mul(n *onnx.Node) error {
	a, b, done, err := im.binary(n, func(x, y int64) int64 { return x * y }, func(x, y float32) float32 { return x * y })
	if done || err != nil {
		return err
	}
	for _, v := range []ival{a, b} {
		if v.kind == ivPending && v.p.kind == pSiLU { // the Sigmoid's ownMul: x·σ(x)
			return im.set(n, ival{kind: ivAct, t: im.net.SiLU(v.p.x.t), view: v.p.x.view})
		}
	}
	if ok, err := im.pointwiseMul(n, a, b); ok || err != nil { // Hardswish, GELU
		return err
	}
	if ok, err := im.scaleMul(n, a, b); ok || err != nil {
		return err
	}
	if ok, err := im.layerScaleMul(n, a, b); ok || err != nil {
		return err
	}
	if a.kind != ivPending || a.p.kind != pGN || b.kind != ivConst {
		return im.dataOp(n, kindMulConst)
	}
	c := im.net.Shape(a.p.x.t)[0]
	if b.c.float && b.c.size() == 1 && c > 1 {
		return fmt.Errorf("scales a GroupNorm of %d channels by one value, as torch writes nn.GroupNorm(affine=False); the import's GroupNorm has a trainable scale and shift per channel: use affine=True", c)
	}
	if !b.c.float || b.c.size() != c {
		return fmt.Errorf("scales a GroupNorm of %d channels by %q of shape %v; want one value per channel", c, b.c.name, b.c.dims)
	}
	p := *a.p
	p.kind, p.gamma = pGNScaled, b.c.f
	return im.set(n, ival{kind: ivPending, p: &p})
}

func (im *importer) sub(n *onnx.Node) error {
	return im.arith(n, kindSubConst, func(x, y int64) int64 { return x - y }, func(x, y float32) float32 { return x - y })
}

func (im *importer) div(n *onnx.Node) error {
	if ok, err := im.geluDiv(n); ok || err != nil {
		return err
	}
	if ok, err := im.l2Div(n); ok || err != nil {
		return err
	}
	return im.arith(n, kindDivConst, func(x, y int64) int64 { return x / y }, func(x, y float32) float32 { return x / y })
}

// arith imports Sub or Div (kind): folded on two constants; on the data
// and a constant, in that order, the Net's SubConst or DivConst.
func (im *importer) arith(n *onnx.Node, kind layerKind, fi func(x, y int64) int64, ff func(x, y float32) float32) error {
	a, _, err := im.arg(n, 0)
	if err != nil {
		return err
	}
	b, _, err := im.arg(n, 1)
	if err != nil {
		return err
	}
	if a.kind == ivConst && b.kind == ivConst {
		if kind == kindDivConst && !b.c.float && slices.Contains(b.c.i, 0) {
			return fmt.Errorf("divides the constant %q by the integer 0", n.Inputs[0])
		}
		if kind == kindDivConst {
			if c, ok := batchScaled(a.c, b.c, true); ok {
				return im.fold(n, c, nil)
			}
		}
		if a.c.size() == 1 && b.c.size() != 1 { // elementwise puts the single value second
			c, err := elementwise(b.c, a.c, func(x, y int64) int64 { return fi(y, x) }, func(x, y float32) float32 { return ff(y, x) })
			return im.fold(n, c, err)
		}
		c, err := elementwise(a.c, b.c, fi, ff)
		return im.fold(n, c, err)
	}
	verb := map[layerKind]string{kindSubConst: "subtracts", kindDivConst: "divides"}[kind]
	if a.kind == ivConst {
		return fmt.Errorf("%s the network's data from the constant %q of shape %v (c %s x); the import takes %s with the data first and a constant second (x %s c)",
			verb, n.Inputs[0], a.c.dims, map[layerKind]string{kindSubConst: "−", kindDivConst: "/"}[kind], n.OpType, map[layerKind]string{kindSubConst: "−", kindDivConst: "/"}[kind])
	}
	x, err := im.data(n, 0)
	if err != nil {
		return err
	}
	return im.constLayer(n, x, 1, kind)
}

// constLayer adds x op c, c the constant input cIdx of n, as the Net's
// constant layer kind, where c is one value or one per channel of x; it
// refuses a second operand that is the network's data too.
func (im *importer) constLayer(n *onnx.Node, x ival, cIdx int, kind layerKind) error {
	v, _, err := im.arg(n, cIdx)
	if err != nil {
		return err
	}
	if v.kind != ivConst {
		y, err := im.data(n, cIdx)
		if err != nil {
			return err
		}
		if same := slices.Equal(x.view, y.view) && slices.Equal(im.net.Shape(x.t), im.net.Shape(y.t)); same && kind == kindSubConst && cIdx == 1 {
			return im.act(n, im.net.Sub(x.t, y.t)) // PoolFormer's pool(x) − x
		} else if same && kind == kindMulConst {
			return im.act(n, im.net.Mul(x.t, y.t)) // a gate: GLU's a ⊙ σ(b)
		}
		also := ""
		if kind == kindSubConst || kind == kindMulConst {
			also = " or of two tensors of equal shape"
		}
		return fmt.Errorf("%s of two tensors of the network's data, [N,%s] and [N,%s]; the import takes %s only with a constant operand (a scalar or one value per channel)%s",
			n.OpType, joinInts(x.view), joinInts(y.view), n.OpType, also)
	}
	if kind == kindMulConst || kind == kindAddConst {
		if done, err := im.trainableConst(n, x, v.c, kind); done {
			return err
		}
	}
	c, err := channelConsts(x, v.c, im.net.Shape(x.t))
	if err != nil {
		return fmt.Errorf("%s of the network's data [N,%s] and the constant %q: %w", n.OpType, joinInts(x.view), n.Inputs[cIdx], err)
	}
	var t Tensor
	switch kind {
	case kindAddConst:
		t = im.net.AddConst(x.t, c)
	case kindSubConst:
		t = im.net.SubConst(x.t, c)
	case kindMulConst:
		t = im.net.MulConst(x.t, c)
	case kindDivConst:
		t = im.net.DivConst(x.t, c)
	}
	return im.set(n, ival{kind: ivAct, t: t, view: x.view})
}

// channelConsts returns the values of c, a constant that ONNX broadcasts
// against the data x [N,view…] (the Net's tensor of shape net): one value
// (a scalar, or any shape of size 1), or one per channel, broadcast along
// axis 1 ([C,1,1] or [1,C,1,1] against [N,C,H,W]; [C] or [1,C] against
// [N,C]). Any other shape is refused.
func channelConsts(x ival, c *iconst, net []int) ([]float32, error) {
	rank := 1 + len(x.view)
	switch {
	case !c.float:
		return nil, fmt.Errorf("an integer constant of shape %v; want float values", c.dims)
	case len(c.dims) > rank:
		return nil, fmt.Errorf("shape %v has more dimensions than the data; want a scalar or one value per channel", c.dims)
	case c.size() == 1:
		return []float32{c.f[0]}, nil
	}
	for j, d := range c.dims {
		if a := rank - len(c.dims) + j; d != 1 && (a != 1 || d != x.view[0]) {
			want := "[" + joinInts(append([]int{x.view[0]}, filledInts(len(x.view)-1, 1)...)) + "]"
			return nil, fmt.Errorf("shape %v is neither a scalar nor one value per channel (%s against [N,%s]); the import takes constants that are the same for every element or for every channel only", c.dims, want, joinInts(x.view))
		}
	}
	if x.view[0] != net[0] || product(x.view) != product(net) {
		return nil, fmt.Errorf("per-channel values for data the Net holds as [N,%s], not as [N,%s]", joinInts(net), joinInts(x.view))
	}
	return slices.Clone(c.f), nil
}

// concatData imports the Concat of the network's data along the channels,
// axis 1 (torch.cat of branches), as the Net's Concat.
func (im *importer) concatData(n *onnx.Node) error {
	xs := make([]ival, len(n.Inputs))
	for k := range n.Inputs {
		if v, ok, err := im.arg(n, k); err == nil && ok && v.kind == ivConst {
			return fmt.Errorf("joins the constant %q of shape %v with the network's data; the import concatenates tensors of the data only", n.Inputs[k], v.c.dims)
		}
		x, err := im.data(n, k)
		if err != nil {
			return err
		}
		xs[k] = x
	}
	switch len(xs) {
	case 0:
		return fmt.Errorf("Concat of no tensors")
	case 1:
		// torch.cat of a one-tensor list (torchvision's DenseNet's
		// first layer of a block): the tensor itself.
		return im.set(n, xs[0])
	}
	a := attrInt(n, "axis", 0)
	if a < 0 {
		a += int64(1 + len(xs[0].view))
	}
	if a != 1 {
		return fmt.Errorf("Concat along axis %d of [N,%s]; the import joins the network's data along the channels (axis 1, torch.cat(…, dim=1)) only", attrInt(n, "axis", 0), joinInts(xs[0].view))
	}
	ts := make([]Tensor, len(xs))
	view := slices.Clone(xs[0].view)
	view[0] = 0
	// A global pool's output, [N,C,1,1] in the file, is a vector [N,C]
	// in the Net; other 1×1 maps joined with one (fastai's
	// AdaptiveConcatPool2d: a full-map MaxPool beside a
	// GlobalAveragePool) are flattened to vectors too.
	points := slices.ContainsFunc(xs, im.onPoint)
	for k, x := range xs {
		if points && len(x.view) == 3 && x.view[1] == 1 && x.view[2] == 1 && len(im.net.Shape(x.t)) == 3 {
			x.t = im.net.Flatten(x.t)
			xs[k] = x
		}
		s := im.net.Shape(x.t)
		if len(x.view) != len(view) || !slices.Equal(x.view[1:], view[1:]) {
			return fmt.Errorf("Concat of [N,%s] and [N,%s]; want the same shape beyond the channels", joinInts(xs[0].view), joinInts(x.view))
		}
		if x.view[0] != s[0] {
			return fmt.Errorf("Concat of input %d, [N,%s], which the Net holds as [N,%s]", k, joinInts(x.view), joinInts(s))
		}
		ts[k], view[0] = x.t, view[0]+x.view[0]
	}
	return im.set(n, ival{kind: ivAct, t: im.net.Concat(ts...), view: view})
}
