package models

import (
	"fmt"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// The importer's pooling and shape nodes on the data.

func (im *importer) maxPool(n *onnx.Node) error {
	if attrInt(n, "storage_order", 0) != 0 {
		return fmt.Errorf("storage_order 1 is not supported")
	}
	if ok, err := im.wholeMapMaxPool(n); ok {
		return err
	}
	return im.pool(n, kindMaxPool)
}

func (im *importer) avgPool(n *onnx.Node) error { return im.pool(n, kindAvgPool) }

// pool adds a pooling layer: square windows, one stride, the same padding
// on every side. MaxPool's pads are −∞ (never selected). AveragePool's
// count in the divisor: pads with count_include_pad 1, or a zero Pad
// before it (PyTorch's AvgPool2d with padding, count_include_pad=True,
// exported as Pad then AveragePool); pads with count_include_pad 0 (the
// default; AvgPool2d(count_include_pad=False)) do not
// (Net.AvgPoolExcludePad). Both at once it refuses. ceil_mode 1 is the
// Net's Pooling.Ceil (PyTorch's ceil_mode=True, whose divisor an
// AveragePool with count_include_pad 1 takes too).
func (im *importer) pool(n *onnx.Node, kind layerKind) error {
	x, sides, err := im.padded(n)
	if err != nil {
		return err
	}
	pad, even := sides.even()
	if !even {
		return fmt.Errorf("pools after a zero Pad of %v (top, left, bottom, right): the Net's pools pad every side alike", sides)
	}
	avg := n.OpType == "AveragePool"
	if pad > 0 && !avg {
		return fmt.Errorf("max-pools after a zero Pad of %d, whose zeros it could select; the Net's padded MaxPool pads with −∞ (write the padding in the node's pads)", pad)
	}
	k, err := attrPair(n, "kernel_shape", 0)
	if err != nil {
		return err
	}
	stride, err := attrPair(n, "strides", 1)
	if err != nil {
		return err
	}
	p, ceil, err := poolPads(n, im.net.Shape(x.t), k, stride)
	if err != nil {
		return err
	}
	exclude := avg && p > 0 && attrInt(n, "count_include_pad", 0) == 0
	if exclude && pad > 0 {
		return fmt.Errorf("pads %v with count_include_pad 0 after a zero Pad of %d, whose zeros count in the divisor: the Net's padded AvgPool counts all of its padding or none", attr(n, "pads").Ints, pad)
	}
	if k < 1 || k > maxPoolWindow {
		return fmt.Errorf("kernel_shape %v, want a square window of 1 to %d", attr(n, "kernel_shape").Ints, maxPoolWindow)
	}
	pad += p
	if 2*pad > k {
		return fmt.Errorf("padding %d with a %d×%d window: want at most half the window (as PyTorch)", pad, k, k)
	}
	if err := ceilAfterPad(im.net.Shape(x.t), k, stride, pad, pad-p, ceil); err != nil {
		return err
	}
	cfg := Pooling{Kernel: k, Stride: stride, Pad: pad, ExcludePad: exclude, Ceil: ceil}
	if kind == kindMaxPool {
		return im.act(n, im.net.pool(kind, "maxpool", x.t, cfg))
	}
	return im.act(n, im.net.pool(kind, "avgpool", x.t, cfg))
}

// ceilAfterPad checks that a ceil-mode pool of x [C,H,W] with padding pad,
// of which zero came from a Pad node before it, has the output size the
// node computes on the Pad's output, where a last window starting in
// the zero padding is kept (PyTorch drops it).
func ceilAfterPad(x []int, k, stride, pad, zero int, ceil bool) error {
	if !ceil || zero == 0 || len(x) != 3 || x[1]+2*pad < k || x[2]+2*pad < k {
		return nil
	}
	for _, side := range x[1:] {
		if ceilWindow(side, k, stride, pad) != ceilWindow(side+2*zero, k, stride, pad-zero) {
			return fmt.Errorf("ceil_mode 1 after a zero Pad of %d on [N,%s]: a last window would start in the Pad's zeros, which the node keeps and PyTorch's ceil mode drops", zero, joinInts(x))
		}
	}
	return nil
}

func (im *importer) globalAvgPool(n *onnx.Node) error {
	x, err := im.image(n, 0)
	if err != nil {
		return err
	}
	t := im.net.GlobalAvgPool(x.t)
	return im.set(n, ival{kind: ivAct, t: t, view: []int{x.view[0], 1, 1}})
}

func (im *importer) reduceMean(n *onnx.Node) error {
	if ok, err := im.layerNormStart(n); ok {
		return err
	}
	if err := im.layerNormMean(n); err != nil {
		return err
	}
	x, err := im.image(n, 0)
	if err != nil {
		return err
	}
	axes, _, err := im.intsAttrOrInput(n, "axes", 1)
	if err != nil {
		return err
	}
	if !overMaps(axes) {
		return fmt.Errorf("axes %v: the import takes ReduceMean of images over the maps, axes (2, 3) (x.mean((2, 3))), or over axes (1, 2, 3) with keepdims 1 as the first node of torch's nn.LayerNorm([C,H,W])", axes)
	}
	t := im.net.GlobalAvgPool(x.t)
	view := []int{x.view[0]}
	if attrInt(n, "keepdims", 1) != 0 {
		view = append(view, 1, 1)
	}
	return im.set(n, ival{kind: ivAct, t: t, view: view})
}

func (im *importer) flatten(n *onnx.Node) error {
	v, _, err := im.arg(n, 0)
	if err != nil {
		return err
	}
	if v.kind == ivConst {
		return im.fold(n, v.c.reshaped([]int{product(v.c.dims[:1]), product(v.c.dims[1:])}), nil)
	}
	x, err := im.data(n, 0)
	if err != nil {
		return err
	}
	if axis := attrInt(n, "axis", 1); axis != 1 && axis != int64(-len(x.view)) {
		return fmt.Errorf("axis %d: the import flattens each sample (axis 1) only", axis)
	}
	return im.flat(n, x)
}

// flat records x flattened per sample as n's output.
func (im *importer) flat(n *onnx.Node, x ival) error {
	if len(im.net.Shape(x.t)) == 1 {
		return im.set(n, ival{kind: ivAct, t: x.t, view: []int{product(x.view)}})
	}
	return im.act(n, im.net.Flatten(x.t))
}

func (im *importer) reshape(n *onnx.Node) error {
	target, err := im.ints(n, 1, "target shape", false)
	if err != nil {
		return err
	}
	allowZero := attrInt(n, "allowzero", 0) != 0
	v, _, err := im.arg(n, 0)
	if err != nil {
		return err
	}
	if v.kind == ivConst {
		dims, err := reshapeDims(target, v.c.dims, allowZero)
		if err != nil {
			return err
		}
		return im.fold(n, v.c.reshaped(dims), nil)
	}
	x := v
	if v.kind == ivPending {
		x = v.p.x
	}
	to, err := im.perSample(target, x.view, allowZero)
	if err != nil {
		return err
	}
	if v.kind == ivPending && v.p.kind == pShuffled {
		return im.shuffleEnd(n, v.p, to)
	}
	if v.kind == ivPending {
		if v.p.kind != pNormed || !slices.Equal(to, x.view) {
			return fmt.Errorf("reshapes %s to [N,%s]; the import takes GroupNorm's Reshape back to [N,%s] there", pendNames[v.p.kind], joinInts(to), joinInts(x.view))
		}
		p := *v.p
		p.kind = pGN
		return im.set(n, ival{kind: ivPending, p: &p})
	}
	return im.reshapeData(n, x, to)
}

// reshapeData imports the Reshape of the activation x to [N,to...]: the
// identity, a flatten, a vector's view [N,C,1,1], or the start of
// PyTorch's GroupNorm, [N,G,−1].
func (im *importer) reshapeData(n *onnx.Node, x ival, to []int) error {
	switch {
	case slices.Equal(to, x.view):
		return im.set(n, x)
	case len(im.net.Shape(x.t)) == 1 && len(to) == 3 && to[1] == 1 && to[2] == 1 && to[0] == product(x.view):
		// A vector [N,C] viewed as [N,C,1,1] (a gate's x.view(N, C, 1, 1)).
		return im.set(n, ival{kind: ivAct, t: x.t, view: to})
	case len(to) == 1:
		return im.flat(n, x)
	case len(to) == 2 && len(x.view) == 3 && slices.Equal(im.net.Shape(x.t), x.view) && to[0] > 0 && x.view[0]%to[0] == 0:
		name := im.layerName(n, "")
		return im.set(n, ival{kind: ivPending, p: &pending{kind: pGrouped, x: x, groups: to[0], name: name}})
	case im.shuffleStart(n, x, to):
		return im.set(n, ival{kind: ivPending, p: &pending{kind: pShuffle, x: x, groups: to[0]}})
	}
	return fmt.Errorf("reshapes [N,%s] to [N,%s]; the import takes Reshape only to flatten ([N,-1]) and in PyTorch's form of GroupNorm", joinInts(x.view), joinInts(to))
}

// perSample resolves a Reshape's target for data of per-sample shape view
// and returns the per-sample shape it asks for. Its first entry must be the
// batch: Shape's batch size, 0 (copied), the input's fixed batch, or −1
// with the rest giving one sample's size.
func (im *importer) perSample(target []int64, view []int, allowZero bool) ([]int, error) {
	if len(target) < 2 {
		return nil, fmt.Errorf("target shape %v drops the batch dimension", target)
	}
	first, total := target[0], product(view)
	if !(first == batchDim || first == 0 && !allowZero || first == -1 || im.batch > 0 && first == im.batch) {
		return nil, fmt.Errorf("target shape %v changes the batch dimension", shapeText(target))
	}
	dims, err := reshapeDims(target[1:], view, allowZero)
	if err != nil {
		return nil, err
	}
	if first == -1 && slices.Contains(target[1:], -1) || product(dims) != total {
		return nil, fmt.Errorf("target shape %v does not keep one sample of [N,%s] per batch entry", shapeText(target), joinInts(view))
	}
	return dims, nil
}

// reshapeDims resolves a Reshape target against the shape of what it
// reshapes: 0 copies the dimension (unless allowZero), −1 is inferred.
func reshapeDims(target []int64, from []int, allowZero bool) ([]int, error) {
	out, infer := make([]int, len(target)), -1
	for i, d := range target {
		switch {
		case batchFactor(d) > 0:
			return nil, fmt.Errorf("target shape %v moves the batch dimension", shapeText(target))
		case d == 0 && !allowZero:
			if i >= len(from) {
				return nil, fmt.Errorf("target shape %v copies a dimension %v lacks", shapeText(target), from)
			}
			out[i] = from[i]
		case d == -1 && infer < 0:
			infer = i
		case d < 0 || d > maxLayerWidth:
			return nil, fmt.Errorf("target shape %v", shapeText(target))
		default:
			out[i] = int(d)
		}
	}
	if infer >= 0 {
		out[infer] = 1
		if known := product(out); known == 0 || product(from)%known != 0 {
			return nil, fmt.Errorf("target shape %v does not fit %v", shapeText(target), from)
		} else {
			out[infer] = product(from) / known
		}
	}
	if product(out) != product(from) {
		return nil, fmt.Errorf("target shape %v does not fit %v", shapeText(target), from)
	}
	return out, nil
}

// shapeText writes a folded shape, naming the batch size N.
func shapeText(s []int64) string {
	t := make([]string, len(s))
	for i, v := range s {
		switch k := batchFactor(v); {
		case k == 1:
			t[i] = "N"
		case k > 1:
			t[i] = fmt.Sprintf("%d·N", k)
		default:
			t[i] = fmt.Sprint(v)
		}
	}
	return fmt.Sprint(t)
}

func (im *importer) squeeze(n *onnx.Node) error {
	v, _, err := im.arg(n, 0)
	if err != nil {
		return err
	}
	axes, _, err := im.intsAttrOrInput(n, "axes", 1)
	if err != nil {
		return err
	}
	if v.kind == ivConst {
		dims, err := squeezed(v.c.dims, axes, 0)
		if err != nil {
			return err
		}
		return im.fold(n, v.c.reshaped(dims), nil)
	}
	x, err := im.data(n, 0)
	if err != nil {
		return err
	}
	view, err := squeezed(x.view, axes, 1)
	if err != nil {
		return err
	}
	return im.set(n, ival{kind: ivAct, t: x.t, view: view})
}

// squeezed removes the dimensions of size 1 at axes (all of them where
// axes is empty) from dims, the shape from axis first on (1 for data,
// whose batch axis 0 is not in dims).
func squeezed(dims []int, axes []int64, first int) ([]int, error) {
	rank := len(dims) + first
	drop := map[int]bool{}
	for _, a := range axes {
		if a < 0 {
			a += int64(rank)
		}
		if a < int64(first) || a >= int64(rank) || dims[a-int64(first)] != 1 {
			return nil, fmt.Errorf("squeezes axes %v of a tensor of shape %v; want axes of size 1 other than the batch", axes, dims)
		}
		drop[int(a)-first] = true
	}
	var out []int
	for i, d := range dims {
		if !(drop[i] || len(axes) == 0 && d == 1) {
			out = append(out, d)
		}
	}
	return out, nil
}

func (im *importer) pad(n *onnx.Node) error {
	if mode := attrString(n, "mode", "constant"); mode != "constant" {
		return fmt.Errorf("mode %s is not supported (zeros only)", mode)
	}
	x, base, err := im.padded(n)
	if err != nil {
		return err
	}
	pads, ok, err := im.intsAttrOrInput(n, "pads", 1)
	if err == nil && !ok {
		err = fmt.Errorf("no pads")
	}
	if err != nil {
		return err
	}
	value, err := im.floats(n, 2, "constant value", 1, true)
	if err == nil && len(n.Inputs) > 3 && n.Inputs[3] != "" {
		err = fmt.Errorf("the axes input is not supported")
	}
	if err != nil {
		return err
	}
	if (value != nil && value[0] != 0) || attrFloat(n, "value", 0) != 0 {
		return fmt.Errorf("pads with a value other than 0")
	}
	if len(pads) != 8 || pads[0] != 0 || pads[1] != 0 || pads[4] != 0 || pads[5] != 0 {
		return fmt.Errorf("pads %v: the import takes zero padding of the maps only, [0,0,top,left,0,0,bottom,right]", pads)
	}
	sides := base
	for i, k := range [4]int{2, 3, 6, 7} {
		if pads[k] < 0 || pads[k] > maxLayerWidth {
			return fmt.Errorf("pads %v: want 0 to %d on each side of the maps (a negative pad crops)", pads, maxLayerWidth)
		}
		sides[i] += int(pads[k])
	}
	if sides != (padSides{}) {
		return im.set(n, ival{kind: ivPending, p: &pending{kind: pPad, x: x, pads: sides}})
	}
	return im.set(n, x)
}
