package models

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// The importer's handling of the nodes that compute on the data: each
// becomes a layer of the Net, or starts or finishes a pattern of several
// nodes (MatMul and its bias, PyTorch's form of GroupNorm, a Pad and the
// Conv it pads).

// maxPoolWindow is the largest pooling window the kernels take.
const maxPoolWindow = 16

func (im *importer) conv(n *onnx.Node) error {
	if v, ok, err := im.arg(n, 0); err == nil && ok && im.onPoint(v) {
		return im.convPoint(n, v)
	}
	x, pad, err := im.padded(n)
	if err != nil {
		return err
	}
	w, err := im.konst(n, 1, "weights", false)
	if err != nil {
		return err
	}
	c := im.net.Shape(x.t)
	groups := attrInt(n, "group", 1)
	if groups < 1 || int64(c[0])%groups != 0 {
		return fmt.Errorf("group %d does not divide the %d input channels", groups, c[0])
	}
	cg := c[0] / int(groups)
	if !w.float || len(w.dims) != 4 || w.dims[1] != cg || int64(w.dims[0])%groups != 0 {
		return fmt.Errorf("weights %q of shape %v, want [out,%d,kh,kw] with out a multiple of group %d (input [N,%s])", w.name, w.dims, cg, groups, joinInts(c))
	}
	a, err := convSettings(n, w.dims[2], w.dims[3], c, pad)
	if err != nil {
		return err
	}
	out := w.dims[0]
	bias, err := im.floats(n, 2, "bias", out, true)
	if err != nil {
		return err
	}
	name := im.layerName(n, w.name)
	t := im.net.Conv2D(name, x.t, a.convOf(out, bias != nil, int(groups)))
	im.params[name+".w"] = w.f
	if bias != nil {
		im.params[name+".b"] = bias
	}
	return im.act(n, t)
}

// padded returns n's input 0, an image, and the zero padding of a Pad
// before it.
func (im *importer) padded(n *onnx.Node) (ival, padSides, error) {
	if v, ok, err := im.arg(n, 0); err == nil && ok && v.kind == ivPending && v.p.kind == pPad {
		return v.p.x, v.p.pads, nil
	}
	x, err := im.image(n, 0)
	return x, padSides{}, err
}

func (im *importer) gemm(n *onnx.Node) error {
	x, err := im.vector(n)
	if err != nil {
		return err
	}
	b, err := im.konst(n, 1, "weights", false)
	if err != nil {
		return err
	}
	if attrFloat(n, "alpha", 1) != 1 || attrFloat(n, "beta", 1) != 1 || attrInt(n, "transA", 0) != 0 {
		return fmt.Errorf("alpha %g, beta %g, transA %d: want 1, 1, 0 (a linear layer)", attrFloat(n, "alpha", 1), attrFloat(n, "beta", 1), attrInt(n, "transA", 0))
	}
	in := product(x.view)
	if !b.float || len(b.dims) != 2 {
		return fmt.Errorf("weights %q of shape %v, want a float matrix", b.name, b.dims)
	}
	w := b
	if attrInt(n, "transB", 0) != 0 {
		w = transpose2(b)
	}
	if w.dims[0] != in {
		return fmt.Errorf("weights %q of shape %v do not fit the %d inputs", b.name, b.dims, in)
	}
	bias, err := im.floats(n, 2, "bias", w.dims[1], true)
	if err != nil {
		return err
	}
	return im.dense(n, x, w, b.name, bias)
}

// vector returns n's input 0, an activation read as a vector per sample.
func (im *importer) vector(n *onnx.Node) (ival, error) {
	x, err := im.data(n, 0)
	if err == nil && len(x.view) != 1 {
		err = fmt.Errorf("reads a tensor of shape [N,%s], want a matrix [N,features] (Flatten first)", joinInts(x.view))
	}
	return x, err
}

// dense adds the Dense layer x·w + bias, w [in,out], or x·w
// (DenseNoBias) where bias is nil.
func (im *importer) dense(n *onnx.Node, x ival, w *iconst, init string, bias []float32) error {
	name := im.layerName(n, init)
	if bias == nil {
		t := im.net.DenseNoBias(name, x.t, w.dims[1])
		im.params[name+".w"] = w.f
		return im.act(n, t)
	}
	t := im.net.Dense(name, x.t, w.dims[1])
	im.params[name+".w"], im.params[name+".b"] = w.f, bias
	return im.act(n, t)
}

// dropout adds the seeded Dropout layer with the node's ratio (its input 1
// from opset 12, its attribute before; 0.5 where absent). Its
// training_mode input is not read: gtstorm's Dropout drops in training and
// is the identity in evaluation, as torch's nn.Dropout. A node named
// dropout#K, as gtstorm's export names a Dropout layer, keeps that name and
// so the key of its masks (K−1, where no layer of the import has the name
// yet): a network imported from its own export draws the same masks.
// Other nodes' layers are keyed by their position, as Net.Dropout keys.
func (im *importer) dropout(n *onnx.Node) error {
	x, err := im.data(n, 0)
	if err != nil {
		return err
	}
	p := attrFloat(n, "ratio", 0.5)
	ratio, err := im.floats(n, 1, "ratio", 1, true)
	if err != nil {
		return err
	}
	if ratio != nil {
		p = ratio[0]
	}
	key, ok := dropoutKey(n.Name)
	if !ok || im.net.hasLayer(n.Name) {
		key = len(im.net.layers)
	}
	t := im.net.dropout(x.t, p, key)
	return im.set(n, ival{kind: ivAct, t: t, view: x.view})
}

func (im *importer) matMul(n *onnx.Node) error {
	x, err := im.vector(n)
	if err != nil {
		return err
	}
	w, err := im.konst(n, 1, "weights", false)
	if err != nil {
		return err
	}
	if !w.float || len(w.dims) != 2 || w.dims[0] != product(x.view) {
		return fmt.Errorf("weights %q of shape %v, want [%d,out]", w.name, w.dims, product(x.view))
	}
	return im.set(n, ival{kind: ivPending, p: &pending{kind: pMatMul, x: x, w: w, node: n}})
}

// settle turns v, the value named name, into an activation where it is a
// MatMul that no Add of a bias follows: a fully connected layer without a
// bias, as torch writes Linear(bias=False). Other values come back as
// they are.
func (im *importer) settle(name string, v ival) (ival, error) {
	if v.kind != ivPending || v.p.kind != pMatMul {
		return v, nil
	}
	p := v.p
	if p.x.last { // a 1×1 Conv without a bias (onnxchanlast.go)
		if err := im.lastConv(p.node, p, nil); err != nil {
			return v, err
		}
		return im.vals[name], nil
	}
	if err := im.dense(p.node, p.x, p.w, p.w.name, nil); err != nil {
		return v, err
	}
	return im.vals[name], nil
}

// binary reads the two inputs of an elementwise node. Two constants it
// folds with fi or ff (done); otherwise it returns them with the constant,
// if any, second.
func (im *importer) binary(n *onnx.Node, fi func(x, y int64) int64, ff func(x, y float32) float32) (a, b ival, done bool, err error) {
	for k, v := range []*ival{&a, &b} {
		var ok bool
		if *v, ok, err = im.arg(n, k); err != nil {
			return a, b, false, err
		} else if !ok {
			return a, b, false, fmt.Errorf("input %d is missing", k)
		}
	}
	if a.kind == ivConst && b.kind == ivConst {
		if n.OpType == "Mul" {
			if c, ok := batchScaled(a.c, b.c, false); ok {
				return a, b, true, im.fold(n, c, nil)
			}
		}
		c, err := elementwise(a.c, b.c, fi, ff)
		return a, b, true, im.fold(n, c, err)
	}
	if a.kind == ivConst {
		a, b = b, a
	}
	return a, b, false, nil
}

// finishGroupNorm adds the GroupNorm p, shifted by beta.
func (im *importer) finishGroupNorm(n *onnx.Node, p *pending, beta *iconst) error {
	c := im.net.Shape(p.x.t)[0]
	if !beta.float || beta.size() != c {
		return fmt.Errorf("shifts a GroupNorm of %d channels by %q of shape %v; want one value per channel", c, beta.name, beta.dims)
	}
	gamma := p.gamma
	if gamma == nil {
		gamma = filled(c, 1)
	}
	return im.groupNorm(n, p.name, p.x, p.groups, gamma, beta.f)
}

// groupNorm adds a GroupNorm layer of x with scale gamma and shift beta.
func (im *importer) groupNorm(n *onnx.Node, name string, x ival, groups int, gamma, beta []float32) error {
	t := im.net.GroupNorm(name, x.t, groups)
	im.params[name+".g"], im.params[name+".b"] = gamma, beta
	return im.act(n, t)
}

func filled(n int, v float32) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// checkEps refuses a normalisation whose ε is not the Net's GroupNorm's.
func checkEps(n *onnx.Node) error {
	eps := attrFloat(n, "epsilon", 1e-5)
	if !(math.Abs(float64(eps)-groupNormEps) <= 1e-9) { // NaN too
		return fmt.Errorf("epsilon %g; the Net's GroupNorm has ε %g (PyTorch's default)", eps, groupNormEps)
	}
	return nil
}

func (im *importer) groupNormalization(n *onnx.Node) error {
	x, err := im.image(n, 0)
	if err != nil {
		return err
	}
	if err := checkEps(n); err != nil {
		return err
	}
	c, groups := im.net.Shape(x.t)[0], int(attrInt(n, "num_groups", 0))
	if groups < 1 || c%groups != 0 {
		return fmt.Errorf("num_groups %d does not divide the %d channels", groups, c)
	}
	scale, err := im.konst(n, 1, "scale", false)
	if err != nil {
		return err
	}
	size := c // opset 21: per channel; opset 18: per group, the same for its channels
	if scale.size() == groups && groups != c {
		size = groups
	}
	gamma, err := im.floats(n, 1, "scale", size, false)
	if err != nil {
		return err
	}
	beta, err := im.floats(n, 2, "bias", size, false)
	if err != nil {
		return err
	}
	return im.groupNorm(n, im.layerName(n, scale.name), x, groups, perChannel(gamma, c), perChannel(beta, c))
}

// perChannel expands per-group values to the c channels.
func perChannel(v []float32, c int) []float32 {
	out := make([]float32, c)
	for i := range out {
		out[i] = v[i/(c/len(v))]
	}
	return out
}

func (im *importer) instanceNorm(n *onnx.Node) error {
	if err := checkEps(n); err != nil {
		return err
	}
	v, _, err := im.arg(n, 0)
	if err != nil {
		return err
	}
	if v.kind == ivPending && v.p.kind == pGrouped {
		return im.normGroups(n, *v.p)
	}
	x, err := im.image(n, 0) // one group per channel, with its scale and shift
	if err != nil {
		return err
	}
	c := im.net.Shape(x.t)[0]
	scale, err := im.floats(n, 1, "scale", c, false)
	if err != nil {
		return err
	}
	shift, err := im.floats(n, 2, "bias", c, false)
	if err != nil {
		return err
	}
	return im.groupNorm(n, im.layerName(n, ""), x, c, scale, shift)
}

// normGroups imports n, the InstanceNormalization of GroupNorm's groups
// p (pGrouped), which must have scale 1 and shift 0.
func (im *importer) normGroups(n *onnx.Node, p pending) error {
	scale, err := im.floats(n, 1, "scale", p.groups, false)
	if err != nil {
		return err
	}
	shift, err := im.floats(n, 2, "bias", p.groups, false)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(scale, func(s float32) bool { return s != 1 }) || slices.ContainsFunc(shift, func(s float32) bool { return s != 0 }) {
		return fmt.Errorf("normalises the groups of a GroupNorm with a scale or shift of its own; want 1 and 0 (as PyTorch writes nn.GroupNorm)")
	}
	p.kind = pNormed
	return im.set(n, ival{kind: ivPending, p: &p})
}

func (im *importer) relu(n *onnx.Node) error { return im.elementwise(n, im.net.ReLU) }

// elementwise imports n, an elementwise layer of its input 0 that f adds
// (ReLU, Tanh, Sigmoid): the output keeps the input's shape.
func (im *importer) elementwise(n *onnx.Node, f func(Tensor) Tensor) error {
	x, err := im.data(n, 0)
	if err != nil {
		return err
	}
	return im.set(n, ival{kind: ivAct, t: f(x.t), view: x.view})
}

// logSoftmax takes a LogSoftmax over the classes of the logits [N,K], as
// torch's F.log_softmax(x, dim=1) ends a network trained with nll_loss,
// when it is the graph's output (see output): gtstorm's loss, the
// cross-entropy of the logits, is nll_loss of their log_softmax, and the
// class probabilities are the same. Anything else reading it is refused.
func (im *importer) logSoftmax(n *onnx.Node) error {
	x, err := im.data(n, 0)
	if err != nil {
		return err
	}
	if len(x.view) != 1 {
		return fmt.Errorf("LogSoftmax of a tensor of shape [N,%s]; the import takes it only over the class logits [N,K], as the network's last node", joinInts(x.view))
	}
	if axis := attrInt(n, "axis", -1); axis != 1 && axis != -1 {
		return fmt.Errorf("LogSoftmax over axis %d of the logits [N,%d]; want axis 1 (or -1), the classes", axis, x.view[0])
	}
	return im.set(n, ival{kind: ivPending, p: &pending{kind: pLogSoftmax, x: x}})
}

func (im *importer) identity(n *onnx.Node) error {
	v, ok, err := im.arg(n, 0)
	if err == nil && !ok {
		err = fmt.Errorf("input 0 is missing")
	}
	if err != nil {
		return err
	}
	if v.kind == ivConst && !strings.HasPrefix(n.Outputs[0], "/") {
		// torch's export shares equal initialisers (a deep-copied
		// layer's): the copy keeps its parameter's name, which names
		// its layer, or its folded constant's (onnx::Mul_88), which
		// --trainable may name.
		c := *v.c
		c.name = n.Outputs[0]
		v.c = &c
	}
	return im.set(n, v)
}
