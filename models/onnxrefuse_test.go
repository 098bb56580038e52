package models

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// tinyONNX encodes a graph reading x of shape in and writing y, at opset.
func tinyONNX(t *testing.T, opset int64, in []onnx.Dim, inits []onnx.Tensor, nodes ...onnx.Node) []byte {
	t.Helper()
	m := &onnx.Model{Opsets: []onnx.OpsetID{{Version: opset}}, Graph: onnx.Graph{Name: "tiny", Nodes: nodes, Initializers: inits,
		Inputs:  []onnx.ValueInfo{{Name: "x", ElemType: onnx.Float, Shape: in}},
		Outputs: []onnx.ValueInfo{{Name: "y", ElemType: onnx.Float}}}}
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func node(op string, in []string, out string, attrs ...onnx.Attr) onnx.Node {
	return onnx.Node{Name: "/" + out + "/" + op, OpType: op, Inputs: in, Outputs: []string{out}, Attrs: attrs}
}

// ramp returns n values spread over [−1, 1].
func ramp(n int, phase float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(math.Sin(float64(float32(i)*0.7 + phase)))
	}
	return v
}

var batchN = []onnx.Dim{{Param: "N"}, {Value: 1}, {Value: 4}, {Value: 4}}

// convGemm returns the nodes and initialisers of conv (1→4, 3×3, padding
// 1, no bias) → mid → ReLU → mean over the maps → Gemm to 2 classes, with
// mid the nodes between "c" and "m".
func convGemm(mid []onnx.Node, inits ...onnx.Tensor) ([]onnx.Node, []onnx.Tensor) {
	nodes := append([]onnx.Node{node("Conv", []string{"x", "cw"}, "c", onnx.IntsAttr("pads", 1, 1, 1, 1))}, mid...)
	nodes = append(nodes, node("Relu", []string{"m"}, "r"),
		node("ReduceMean", []string{"r", "axes"}, "p", onnx.IntAttr("keepdims", 0)),
		node("Gemm", []string{"p", "fw", "fb"}, "y", onnx.IntAttr("transB", 1)))
	return nodes, append(inits, onnx.FloatTensor("cw", ramp(36, 0), 4, 1, 3, 3), onnx.Int64Tensor("axes", []int64{2, 3}, 2),
		onnx.FloatTensor("fw", ramp(8, 1), 2, 4), onnx.FloatTensor("fb", ramp(2, 2), 2))
}

// TestImportONNXNormalizations imports GroupNormalization (opset 18, scale
// per group, and 21's per channel) and InstanceNormalization of the maps:
// the network is the Net written by hand with the same weights, logit for
// logit.
func TestImportONNXNormalizations(t *testing.T) {
	gamma, beta := []float32{1.5, 0.5, 0.5, 2}, []float32{0.1, -0.2, 0.3, 0}
	for _, c := range []struct {
		name   string
		groups int
		opset  int64
		mid    onnx.Node
		g, b   onnx.Tensor
	}{
		{"GroupNormalization-18", 2, 18, node("GroupNormalization", []string{"c", "g", "b"}, "m", onnx.IntAttr("num_groups", 2), onnx.FloatAttr("epsilon", 1e-5)),
			onnx.FloatTensor("g", []float32{1.5, 0.75}, 2), onnx.FloatTensor("b", []float32{0.1, -0.2}, 2)},
		{"GroupNormalization-21", 2, 21, node("GroupNormalization", []string{"c", "g", "b"}, "m", onnx.IntAttr("num_groups", 2)),
			onnx.FloatTensor("g", gamma, 4), onnx.FloatTensor("b", beta, 4)},
		{"InstanceNormalization", 4, 18, node("InstanceNormalization", []string{"c", "g", "b"}, "m"),
			onnx.FloatTensor("g", gamma, 4), onnx.FloatTensor("b", beta, 4)},
	} {
		nodes, inits := convGemm([]onnx.Node{c.mid}, c.g, c.b)
		m, x0, err := ImportONNX(c.name, tinyONNX(t, c.opset, batchN, inits, nodes...), []int{1, 4, 4}, 2)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		n := NewNet(c.name, []int{1, 4, 4}, 2)
		h := n.Conv2D("cw", n.Input(), Conv{Out: 4, Kernel: 3, Pad: 1})
		h = n.ReLU(n.GroupNorm("g", h, c.groups))
		want, err := n.Model(n.Dense("fw", n.GlobalAvgPool(h), 2))
		if err != nil {
			t.Fatal(err)
		}
		p := slices.Concat(ramp(36, 0), perChannel(c.g.Floats, 4), perChannel(c.b.Floats, 4), transpose2(&iconst{dims: []int{2, 4}, f: ramp(8, 1), float: true}).f, ramp(2, 2))
		b := batchOf(imageSet(9, 3, 2, true, 1, 4, 4), seq(3)...)
		z1, err1 := Logits(m, x0, b)
		z2, err2 := Logits(want, p, b)
		if err1 != nil || err2 != nil || !slices.Equal(z1, z2) {
			t.Errorf("%s: logits %v (%v), the hand-written Net's %v (%v)", c.name, z1, err1, z2, err2)
		}
	}
}

// TestImportONNXRefusals checks that what the import does not take is one
// line naming why: a truncated file, BatchNormalization, an unsupported
// operator (naming its node and the supported set), pool paddings the
// Net does not have, a
// dynamic shape it cannot resolve, an input or output that does not fit
// the dataset, settings the Net lacks, a Concat of the data off the
// channels (or with a constant), and Sub, Div and Mul of two tensors of
// the data or of a constant that is neither a scalar nor per channel.
func TestImportONNXRefusals(t *testing.T) {
	fixture := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", "onnx", name+".onnx"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	gn := fixture("gn_resnet")
	conv := func(attrs ...onnx.Attr) []byte {
		nodes, inits := convGemm([]onnx.Node{node("Identity", []string{"c"}, "m")})
		nodes[0].Attrs = attrs
		return tinyONNX(t, 13, batchN, inits, nodes...)
	}
	pooled := func(mid ...onnx.Node) []byte {
		nodes, inits := convGemm(mid, onnx.Int64Tensor("pads", []int64{0, 0, 1, 1, 0, 0, 1, 1}, 8))
		return tinyONNX(t, 13, batchN, inits, nodes...)
	}
	// x.view(x.size(0)*2, −1): arithmetic on the batch size.
	// N op 2 as a Reshape's batch: N + 2 cannot be folded; 2·N (which
	// nn.MultiheadAttention's N·heads needs) folds, and the Reshape
	// refuses it.
	batchArith := func(op string) []byte {
		return tinyONNX(t, 13, batchN, []onnx.Tensor{onnx.Int64Tensor("zero", []int64{0}), onnx.Int64Tensor("two", []int64{2}),
			onnx.Int64Tensor("ax", []int64{0}, 1), onnx.Int64Tensor("rest", []int64{-1}, 1)},
			node("Shape", []string{"x"}, "s"), node("Gather", []string{"s", "zero"}, "n"), node(op, []string{"n", "two"}, "n2"),
			node("Unsqueeze", []string{"n2", "ax"}, "u"), node("Concat", []string{"u", "rest"}, "t", onnx.IntAttr("axis", 0)),
			node("Reshape", []string{"x", "t"}, "y"))
	}
	// Flatten and Gemm to two logits, then the nodes logSoftmax gives.
	logits := func(last ...onnx.Node) []byte {
		nodes := append([]onnx.Node{node("Flatten", []string{"x"}, "f"), node("Gemm", []string{"f", "fw", "fb"}, "g", onnx.IntAttr("transB", 1))}, last...)
		return tinyONNX(t, 13, batchN, []onnx.Tensor{onnx.FloatTensor("fw", ramp(32, 1), 2, 16), onnx.FloatTensor("fb", ramp(2, 2), 2)}, nodes...)
	}
	for _, c := range []struct {
		what    string
		b       []byte
		shape   []int
		classes int
		want    []string
	}{
		{"truncated", gn[:len(gn)/2], nil, 0, []string{"onnx:", "past the end"}},
		{"log-softmax read by a node", logits(node("LogSoftmax", []string{"g"}, "l", onnx.IntAttr("axis", 1)), node("Relu", []string{"l"}, "y")),
			[]int{1, 4, 4}, 2, []string{`node "/y/Relu"`, "LogSoftmax, which the import takes only as the network's last node"}},
		{"log-softmax over the batch", logits(node("LogSoftmax", []string{"g"}, "y", onnx.IntAttr("axis", 0))),
			[]int{1, 4, 4}, 2, []string{"axis 0", "want axis 1 (or -1), the classes"}},
		{"groupnorm without affine", fixture("groupnorm_no_affine"), nil, 0, []string{"nn.GroupNorm(affine=False)", "use affine=True"}},
		{"cat along the height", tinyONNX(t, 13, batchN, nil, node("Relu", []string{"x"}, "a"), node("Relu", []string{"x"}, "b"), node("Concat", []string{"a", "b"}, "y", onnx.IntAttr("axis", 2))),
			[]int{1, 4, 4}, 2, []string{`node "/y/Concat" (Concat)`, "Concat along axis 2 of [N,1,4,4]", "along the channels (axis 1"}},
		{"cat along the batch", tinyONNX(t, 13, batchN, nil, node("Relu", []string{"x"}, "a"), node("Concat", []string{"a", "x"}, "y", onnx.IntAttr("axis", -4))),
			[]int{1, 4, 4}, 2, []string{`node "/y/Concat" (Concat)`, "Concat along axis -4 of [N,1,4,4]"}},
		{"cat of data and a constant", tinyONNX(t, 13, batchN, []onnx.Tensor{onnx.FloatTensor("k", ramp(16, 0), 1, 1, 4, 4)}, node("Concat", []string{"x", "k"}, "y", onnx.IntAttr("axis", 1))),
			[]int{1, 4, 4}, 2, []string{`node "/y/Concat" (Concat)`, `joins the constant "k" of shape [1 1 4 4] with the network's data`}},
		{"constant minus data", tinyONNX(t, 13, batchN, []onnx.Tensor{onnx.FloatTensor("m", []float32{0.5})}, node("Sub", []string{"m", "x"}, "y")),
			[]int{1, 4, 4}, 2, []string{`node "/y/Sub" (Sub)`, `subtracts the network's data from the constant "m" of shape []`, "(x − c)"}},
		{"per-row constants", tinyONNX(t, 13, batchN, []onnx.Tensor{onnx.FloatTensor("s", ramp(4, 1), 4, 1)}, node("Div", []string{"x", "s"}, "y")),
			[]int{1, 4, 4}, 2, []string{`node "/y/Div" (Div)`, `Div of the network's data [N,1,4,4] and the constant "s": shape [4 1] is neither a scalar nor one value per channel ([1,1,1] against [N,1,4,4])`}},
		{"per-column constants", tinyONNX(t, 13, []onnx.Dim{{Param: "N"}, {Value: 3}, {Value: 4}, {Value: 4}}, []onnx.Tensor{onnx.FloatTensor("m", ramp(3, 1), 3)}, node("Sub", []string{"x", "m"}, "y")),
			[]int{3, 4, 4}, 2, []string{`node "/y/Sub" (Sub)`, "shape [3] is neither a scalar nor one value per channel ([3,1,1] against [N,3,4,4])"}},
		{"if on the data", tinyONNX(t, 13, batchN, nil, node("If", []string{"x"}, "y")),
			[]int{1, 4, 4}, 2, []string{`node "/y/If" (If)`, `its condition ("x") is computed from the data, not a constant`}},
		{"if without its branch", tinyONNX(t, 13, batchN, []onnx.Tensor{onnx.Int64Tensor("yes", []int64{1}, 1)}, node("If", []string{"yes"}, "y")),
			[]int{1, 4, 4}, 2, []string{`node "/y/If" (If)`, "If without its then_branch"}},
		{"product of data of two shapes", tinyONNX(t, 13, batchN, nil, node("Flatten", []string{"x"}, "a"), node("Mul", []string{"x", "a"}, "y")),
			[]int{1, 4, 4}, 2, []string{`node "/y/Mul" (Mul)`, "Mul of two tensors of the network's data, [N,1,4,4] and [N,16]", "or of two tensors of equal shape"}},
		{"difference of data of two shapes", tinyONNX(t, 13, batchN, nil, node("GlobalAveragePool", []string{"x"}, "a"), node("Sub", []string{"x", "a"}, "y")),
			[]int{1, 4, 4}, 2, []string{`node "/y/Sub" (Sub)`, "Sub of two tensors of the network's data, [N,1,4,4] and [N,1,1,1]", "or of two tensors of equal shape"}},
		{"division by zero", tinyONNX(t, 13, batchN, []onnx.Tensor{onnx.FloatTensor("s", []float32{0}, 1, 1, 1)}, node("Div", []string{"x", "s"}, "y")),
			[]int{1, 4, 4}, 2, []string{`node "/y/Div" (Div)`, "constant 0 is 0, want a finite number, not 0"}},
		{"crop", tinyONNX(t, 13, batchN, []onnx.Tensor{onnx.Int64Tensor("s", []int64{1}, 1), onnx.Int64Tensor("e", []int64{-1}, 1), onnx.Int64Tensor("ax", []int64{2}, 1)},
			node("Slice", []string{"x", "s", "e", "ax"}, "y")), []int{1, 4, 4}, 2, []string{"Slice of the network's data (cropping or slicing a tensor)"}},
		{"log-softmax of maps", tinyONNX(t, 13, batchN, nil, node("LogSoftmax", []string{"x"}, "y", onnx.IntAttr("axis", 1))),
			[]int{1, 4, 4}, 2, []string{"LogSoftmax of a tensor of shape [N,1,4,4]"}},
		{"truncated at the end", gn[:len(gn)-3], nil, 0, []string{"onnx:"}},
		{"batchnorm", fixture("batchnorm"), nil, 0, []string{`node "/bn/BatchNormalization" (BatchNormalization)`, "SPEC §12", "use GroupNorm"}},
		{"softmax", tinyONNX(t, 13, batchN, nil, node("Softmax", []string{"x"}, "y", onnx.IntAttr("axis", 1))),
			[]int{1, 4, 4}, 2, []string{`node "/y/Softmax" (Softmax): operator Softmax is not supported as the network's last node: the loss takes the logits`, "remove the final nn.Softmax"}},
		{"avg-pool count_include_pad 0 after a zero Pad", pooled(node("Pad", []string{"c", "pads"}, "q"), node("AveragePool", []string{"q"}, "m", onnx.IntsAttr("kernel_shape", 3, 3), onnx.IntsAttr("pads", 1, 1, 1, 1))),
			[]int{1, 4, 4}, 2, []string{`node "/m/AveragePool"`, "count_include_pad 0 after a zero Pad of 1", "all of its padding or none"}},
		{"pool padding over half the window", pooled(node("MaxPool", []string{"c"}, "m", onnx.IntsAttr("kernel_shape", 2, 2), onnx.IntsAttr("pads", 2, 2, 2, 2))),
			[]int{1, 4, 4}, 2, []string{`node "/m/MaxPool"`, "at most half the window"}},
		{"max-pool after a zero Pad", pooled(node("Pad", []string{"c", "pads"}, "q"), node("MaxPool", []string{"q"}, "m", onnx.IntsAttr("kernel_shape", 3, 3))),
			[]int{1, 4, 4}, 2, []string{`node "/m/MaxPool"`, "zero Pad of 1", "−∞"}},
		{"input shape", gn, []int{3, 32, 32}, 10, []string{`input "input" has shape [N,1,28,28], want [N,3,32,32]`}},
		{"classes", gn, nil, 62, []string{"[N,10], want the 62 class logits"}},
		{"batch arithmetic", batchArith("Add"), []int{1, 4, 4}, 2, []string{`node "/n2/Add"`, "dynamic shape that cannot be resolved"}},
		{"a multiple of the batch", batchArith("Mul"), []int{1, 4, 4}, 2, []string{`node "/y/Reshape"`, "target shape [2·N -1] changes the batch dimension"}},
		{"reshape to data", tinyONNX(t, 13, batchN, nil, node("Relu", []string{"x"}, "r"), node("Reshape", []string{"x", "r"}, "y")),
			[]int{1, 4, 4}, 2, []string{"computed from the data", "dynamic shape that cannot be resolved"}},
		{"dynamic height", tinyONNX(t, 13, []onnx.Dim{{Param: "N"}, {Value: 1}, {Param: "h"}, {Value: 4}}, nil, node("Relu", []string{"x"}, "y")),
			[]int{1, 4, 4}, 2, []string{`dimension 2 is dynamic ("h")`}},
		{"no input shape", tinyONNX(t, 13, nil, nil, node("Relu", []string{"x"}, "y")), []int{1, 4, 4}, 2, []string{"no shape"}},
		{"negative padding", conv(onnx.IntsAttr("pads", 0, 0, -1, 1)), []int{1, 4, 4}, 2, []string{"pads [0 0 -1 1] out of range", "a negative pad crops"}},
		{"groups not dividing", conv(onnx.IntAttr("group", 2)), []int{1, 4, 4}, 2, []string{"group 2 does not divide the 1 input channels"}},
		{"dilated past the image", conv(onnx.IntsAttr("dilations", 2, 2)), []int{1, 4, 4}, 2, []string{"3×3 kernel (stride (1,1), padding (0,0), dilation (2,2)) does not fit the 4×4 input"}},
		{"dilation 0", conv(onnx.IntsAttr("dilations", 0, 1)), []int{1, 4, 4}, 2, []string{"dilations [0 1] out of range"}},
		{"other domain", tinyONNX(t, 13, batchN, nil, onnx.Node{Name: "q", OpType: "Relu", Domain: "com.microsoft", Inputs: []string{"x"}, Outputs: []string{"y"}}),
			[]int{1, 4, 4}, 2, []string{`domain "com.microsoft"`}},
		{"output not logits", tinyONNX(t, 13, batchN, nil, node("Relu", []string{"x"}, "y")), []int{1, 4, 4}, 2, []string{"[N,1,4,4], want the 2 class logits"}},
	} {
		shape, classes := cmpOr(c.shape, []int{1, 28, 28}), c.classes
		if classes == 0 {
			classes = 10
		}
		_, _, err := ImportONNX("net.onnx", c.b, shape, classes)
		if err == nil {
			t.Errorf("%s: imported", c.what)
			continue
		}
		msg := err.Error()
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: %q, want %q in it", c.what, msg, w)
			}
		}
		if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "net.onnx") {
			t.Errorf("%s: %q, want one line naming the file", c.what, msg)
		}
	}
}

func cmpOr(a, b []int) []int {
	if a == nil {
		return b
	}
	return a
}

// TestImportONNXFixedBatch imports a graph exported without a dynamic
// batch (input [2,1,4,4], Reshape to [2,−1]): the batch of the export is
// the batch, whatever it is when the network runs.
func TestImportONNXFixedBatch(t *testing.T) {
	b := tinyONNX(t, 13, []onnx.Dim{{Value: 2}, {Value: 1}, {Value: 4}, {Value: 4}},
		[]onnx.Tensor{onnx.Int64Tensor("t", []int64{2, -1}, 2), onnx.FloatTensor("w", ramp(32, 0), 16, 2), onnx.FloatTensor("b", ramp(2, 1), 2)},
		node("Reshape", []string{"x", "t"}, "f"), node("MatMul", []string{"f", "w"}, "h"), node("Add", []string{"h", "b"}, "y"))
	m, x0, err := ImportONNX("fixed.onnx", b, []int{1, 4, 4}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Logits(m, x0, batchOf(imageSet(1, 5, 2, true, 1, 4, 4), seq(5)...)); err != nil || m.NumParams() != 34 {
		t.Errorf("%d parameters, logits of a batch of 5: %v", m.NumParams(), err)
	}
}
