package models

import (
	"fmt"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// importOps maps each supported operator to the importer's handling of
// its nodes.
var importOps = map[string]func(*importer, *onnx.Node) error{
	"Conv": (*importer).conv, "Gemm": (*importer).gemm, "MatMul": (*importer).matMul,
	"Add": (*importer).add, "Mul": (*importer).mul, "Sub": (*importer).sub, "Div": (*importer).div, "Relu": (*importer).relu,
	"PRelu": (*importer).prelu, "LeakyRelu": (*importer).leakyRelu, "Tanh": (*importer).tanh, "Sigmoid": (*importer).sigmoid, "Clip": (*importer).clip,
	"Elu": (*importer).elu, "Softplus": (*importer).softplus, "HardSigmoid": (*importer).hardSigmoid, "HardSwish": (*importer).hardSwish,
	"Erf": (*importer).erf, "Softmax": (*importer).softmax,
	"MaxPool": (*importer).maxPool, "AveragePool": (*importer).avgPool,
	"GlobalAveragePool": (*importer).globalAvgPool, "ReduceMean": (*importer).reduceMean,
	"GlobalMaxPool": (*importer).globalMaxPool, "ReduceMax": (*importer).reduceMax, "ReduceL2": (*importer).reduceL2,
	"Flatten": (*importer).flatten, "Reshape": (*importer).reshape, "Squeeze": (*importer).squeeze,
	"Dropout": (*importer).dropout, "Identity": (*importer).identity,
	"GroupNormalization": (*importer).groupNormalization, "InstanceNormalization": (*importer).instanceNorm,
	"Pad": (*importer).pad, "Constant": (*importer).constant, "ConstantOfShape": (*importer).constantOfShape,
	"Shape": (*importer).shape, "Gather": (*importer).gather, "Unsqueeze": (*importer).unsqueeze, "Expand": (*importer).expand,
	"Concat": (*importer).concat, "Slice": (*importer).slice, "Split": (*importer).split, "Transpose": (*importer).transpose,
	"Cast": (*importer).cast, "LogSoftmax": (*importer).logSoftmax, "Equal": (*importer).equal, "Where": (*importer).where,
}

// node imports one node of the graph.
func (im *importer) node(n *onnx.Node) error {
	if n.Domain != "" && n.Domain != "ai.onnx" {
		return fmt.Errorf("operator %s of domain %q is not supported; the import reads the default domain's %s", n.OpType, n.Domain, ONNXSupported)
	}
	if len(n.Outputs) == 0 || n.Outputs[0] == "" {
		return fmt.Errorf("the node has no output")
	}
	if done, err := im.lrnStep(n); done {
		return err
	}
	if done, err := im.layerNormStep(n); done {
		return err
	}
	if done, err := im.tokens(n); done {
		return err
	}
	if done, err := im.channelsLast(n); done {
		return err
	}
	h, ok := importOps[n.OpType]
	switch {
	case n.OpType == "If":
		return im.ifConst(n) // not in importOps: it imports nodes itself
	case n.OpType == "BatchNormalization":
		return fmt.Errorf("BatchNormalization is refused: under non-IID data each node's batch statistics differ, so the nodes' models do not agree on what it computes (SPEC §12); use GroupNorm (nn.GroupNorm) instead")
	case !ok:
		return fmt.Errorf("operator %s is not supported; the import reads %s", n.OpType, ONNXSupported)
	}
	return h(im, n)
}

// set records v as n's first output.
func (im *importer) set(n *onnx.Node, v ival) error {
	im.vals[n.Outputs[0]] = v
	return im.net.Err()
}

// act records the Net tensor t, whose ONNX shape is the Net's, as n's
// output.
func (im *importer) act(n *onnx.Node, t Tensor) error {
	return im.set(n, ival{kind: ivAct, t: t, view: im.net.Shape(t)})
}

// arg returns input k of n and whether n has it (an optional input may be
// omitted).
func (im *importer) arg(n *onnx.Node, k int) (ival, bool, error) {
	if k >= len(n.Inputs) || n.Inputs[k] == "" {
		return ival{}, false, nil
	}
	v, ok := im.vals[n.Inputs[k]]
	if !ok {
		return ival{}, true, fmt.Errorf("reads %q, which no node before it computes (a graph not in topological order, or a Dropout's mask)", n.Inputs[k])
	}
	return v, true, nil
}

// data returns input k of n, an activation.
func (im *importer) data(n *onnx.Node, k int) (ival, error) {
	v, ok, err := im.arg(n, k)
	if err == nil && ok {
		v, err = im.settle(n.Inputs[k], v)
	}
	switch {
	case err != nil:
		return v, err
	case !ok:
		return v, fmt.Errorf("input %d is missing", k)
	case v.kind == ivPending:
		return v, fmt.Errorf("reads %q, which is %s; the import recognises that pattern only in the order PyTorch writes it", n.Inputs[k], pendNames[v.p.kind])
	case v.kind == ivConst:
		return v, fmt.Errorf("reads the constant %q where the network's data is expected", n.Inputs[k])
	case v.last:
		return v, lastRefusal(n.Inputs[k])
	}
	return v, nil
}

// image returns input k of n, an activation of shape [C,H,W].
func (im *importer) image(n *onnx.Node, k int) (ival, error) {
	v, err := im.data(n, k)
	if err == nil && im.onPoint(v) {
		err = fmt.Errorf("reads [N,%s], a global pool's output, where it wants images [N,C,H,W]; the import takes a 1×1 Conv, a Mul by an image, Flatten, Reshape or Squeeze there", joinInts(v.view))
	} else if err == nil && (len(v.view) != 3 || !slices.Equal(im.net.Shape(v.t), v.view)) {
		err = fmt.Errorf("reads a tensor of shape [N,%s], want images [N,C,H,W]", joinInts(v.view))
	}
	return v, err
}

// onConstants refuses n, an operator the import folds on constants only
// (shape arithmetic), where an input is the network's data: what says what
// the network does with it (a crop).
func (im *importer) onConstants(n *onnx.Node, what string) error {
	for _, in := range n.Inputs {
		if v, ok := im.vals[in]; ok && v.kind != ivConst {
			return fmt.Errorf("%s of the network's data (%s) is not supported: the import takes %s only on constants, the shape arithmetic it folds", n.OpType, what, n.OpType)
		}
	}
	return nil
}

// konst returns input k of n, a constant, or nil where n omits it and
// optional is set.
func (im *importer) konst(n *onnx.Node, k int, what string, optional bool) (*iconst, error) {
	v, ok, err := im.arg(n, k)
	switch {
	case err != nil:
		return nil, err
	case !ok && optional:
		return nil, nil
	case !ok:
		return nil, fmt.Errorf("its %s (input %d) is missing", what, k)
	case v.kind != ivConst:
		return nil, fmt.Errorf("its %s (%q) is computed from the data, not a constant: a dynamic shape that cannot be resolved when the file is imported", what, n.Inputs[k])
	}
	return v.c, nil
}

// floats returns input k of n, a float constant of size values (any
// shape), or nil where n omits it and optional is set.
func (im *importer) floats(n *onnx.Node, k int, what string, size int, optional bool) ([]float32, error) {
	c, err := im.konst(n, k, what, optional)
	if err != nil || c == nil {
		return nil, err
	}
	if !c.float || c.size() != size {
		return nil, fmt.Errorf("its %s (%q) has shape %v, want %d float values", what, n.Inputs[k], c.dims, size)
	}
	return c.f, nil
}

// ints returns input k of n, an integer constant, as values.
func (im *importer) ints(n *onnx.Node, k int, what string, optional bool) ([]int64, error) {
	c, err := im.konst(n, k, what, optional)
	if err != nil || c == nil {
		return nil, err
	}
	if c.float {
		return nil, fmt.Errorf("its %s (%q) is a float tensor, want integers", what, n.Inputs[k])
	}
	return c.i, nil
}

// intsAttrOrInput returns the integers n holds as the attribute name
// (earlier opsets) or as its input k (later ones), and whether it has them.
func (im *importer) intsAttrOrInput(n *onnx.Node, name string, k int) ([]int64, bool, error) {
	if a := attr(n, name); a != nil {
		return a.Ints, true, nil
	}
	v, err := im.ints(n, k, name, true)
	return v, v != nil, err
}

func attr(n *onnx.Node, name string) *onnx.Attr {
	for i := range n.Attrs {
		if n.Attrs[i].Name == name {
			return &n.Attrs[i]
		}
	}
	return nil
}

func attrInt(n *onnx.Node, name string, def int64) int64 {
	if a := attr(n, name); a != nil {
		return a.I
	}
	return def
}

func attrFloat(n *onnx.Node, name string, def float32) float32 {
	if a := attr(n, name); a != nil {
		return a.F
	}
	return def
}

func attrString(n *onnx.Node, name, def string) string {
	if a := attr(n, name); a != nil {
		return a.S
	}
	return def
}

// attrPair returns the INTS attribute name of a 2-D operator as one value
// for both axes, def where it is absent, or an error where its values
// differ (per-axis settings the Net does not have).
func attrPair(n *onnx.Node, name string, def int) (int, error) {
	a := attr(n, name)
	if a == nil {
		return def, nil
	}
	if len(a.Ints) == 0 {
		return def, nil
	}
	for _, v := range a.Ints {
		if v != a.Ints[0] {
			return 0, fmt.Errorf("%s %v differ between the axes or sides; the Net's layers take one value for all (asymmetric settings are not supported)", name, a.Ints)
		}
	}
	if a.Ints[0] < 0 || a.Ints[0] > maxLayerWidth {
		return 0, fmt.Errorf("%s %v out of range", name, a.Ints)
	}
	return int(a.Ints[0]), nil
}
