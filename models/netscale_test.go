package models

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// seNet is conv 3×3 2→4 (padding 1) → ReLU → a squeeze-and-excitation
// block (global average pool → Dense 2 → ReLU → Dense 4 → Sigmoid, the
// gate; ChannelScale of the maps by it) → conv 3×3 4→5 stride 2 → ReLU →
// global average pool → Dense 3, on 2×6×6 samples.
func seNet() (Model, error) {
	n := NewNet("senet", []int{2, 6, 6}, 3)
	h := n.ReLU(n.Conv2D("c1", n.Input(), Conv{Out: 4, Kernel: 3, Pad: 1, Bias: true}))
	g := n.Sigmoid(n.Dense("se2", n.ReLU(n.Dense("se1", n.GlobalAvgPool(h), 2)), 4))
	h = n.ReLU(n.Conv2D("c2", n.ChannelScale(h, g), Conv{Out: 5, Kernel: 3, Stride: 2, Pad: 1, Bias: true}))
	return n.Model(n.Dense("fc", n.GlobalAvgPool(h), 3))
}

// TestChannelScaleRoundTrip exports seNet to ONNX (the gate reshaped to
// [N,4,1,1], then Mul of the maps and it) and imports it, and stores it as
// a NetSpec (JSON) and rebuilds it: each trains as the original, bit for
// bit, and both hold one channelscale layer reading the maps and the gate.
func TestChannelScaleRoundTrip(t *testing.T) {
	m, err := seNet()
	if err != nil {
		t.Fatal(err)
	}
	params := m.Init(9)
	om, enc := marshalONNX(t, m, params)
	var ops []string
	for _, n := range om.Graph.Nodes {
		ops = append(ops, n.OpType)
	}
	if !strings.Contains(strings.Join(ops, " "), "Sigmoid Reshape Mul Conv") {
		t.Errorf("the export's operators %v: want the gate's Sigmoid, Reshape to [N,C,1,1], then the Mul before the conv", ops)
	}
	im, js := roundTrips(t, "senet", m, params, enc, batchOf(imageSet(23, 5, 3, true, 2, 6, 6), seq(5)...))
	if !strings.Contains(string(js), `{"op":"channelscale","in":[2,7]}`) {
		t.Errorf("spec %s: no channelscale layer reading the ReLU's maps and the Sigmoid's gate", js)
	}
	var got []string
	ispec, _ := specJSON(t, im)
	for _, l := range ispec.Layers {
		got = append(got, l.Op)
	}
	if !slices.Contains(got, "channelscale") {
		t.Errorf("the imported export's layers %v hold no channelscale", got)
	}
}

// TestChannelScaleRefusesOtherGates checks Net.ChannelScale's one-line
// refusals: a gate of another size, a gate that is an image, a vector
// scaled.
func TestChannelScaleRefusesOtherGates(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(n *Net) Tensor
		want string
	}{
		{"gate of 3 for 4 channels", func(n *Net) Tensor {
			h := n.Conv2D("c", n.Input(), Conv{Out: 4, Kernel: 3, Pad: 1})
			return n.ChannelScale(h, n.Dense("d", n.GlobalAvgPool(h), 3))
		}, "senet: chanscale#4: scales an image of shape [4 6 6] by a gate of shape [3], want [4] or [4,1,1] (one value per channel)"},
		{"gate an image", func(n *Net) Tensor {
			h := n.Conv2D("c", n.Input(), Conv{Out: 4, Kernel: 3, Pad: 1})
			return n.ChannelScale(h, h)
		}, "senet: chanscale#2: scales an image of shape [4 6 6] by a gate of shape [4 6 6], want [4] or [4,1,1] (one value per channel)"},
		{"a vector scaled", func(n *Net) Tensor {
			v := n.GlobalAvgPool(n.Input())
			return n.ChannelScale(v, v)
		}, "senet: chanscale#2: reads a tensor of shape [2], want an image [C,H,W]"},
	} {
		n := NewNet("senet", []int{2, 6, 6}, 3)
		c.make(n)
		if err := n.Err(); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// gapConv returns the nodes and initialisers of conv (1→4, 3×3, padding
// 1, bias) → ReLU "r" → pool, then mid and a 1×1 conv "head" 4→3 (stride
// 2, bias) of "g", then tail reading "h".
func gapConv(pool onnx.Node, mid, tail []onnx.Node) ([]onnx.Node, []onnx.Tensor) {
	nodes := []onnx.Node{node("Conv", []string{"x", "cw", "cb"}, "c", onnx.IntsAttr("pads", 1, 1, 1, 1)), node("Relu", []string{"c"}, "r"), pool}
	nodes = append(nodes, mid...)
	nodes = append(nodes, node("Conv", []string{"g", "head.weight", "head.bias"}, "h", onnx.IntsAttr("strides", 2, 2)))
	return append(nodes, tail...), []onnx.Tensor{onnx.FloatTensor("cw", ramp(36, 0), 4, 1, 3, 3), onnx.FloatTensor("cb", ramp(4, 3), 4),
		onnx.FloatTensor("head.weight", ramp(12, 1), 3, 4, 1, 1), onnx.FloatTensor("head.bias", ramp(3, 2), 3),
		onnx.Int64Tensor("axes", []int64{2, 3}, 2)}
}

// TestImportConv1x1OnGlobalPool imports a 1×1 Conv on a global pool's
// output [N,C,1,1] (GlobalAveragePool, or ReduceMean over the maps with
// keepdims), then Flatten, Reshape or Squeeze, as a dense layer of the
// weights transposed to [C,out]: the network is the Net written by hand
// with Dense, logit for logit, and its weights are the Conv's transposed.
func TestImportConv1x1OnGlobalPool(t *testing.T) {
	hand := NewNet("hand", []int{1, 4, 4}, 3)
	h := hand.GlobalAvgPool(hand.ReLU(hand.Conv2D("cw", hand.Input(), Conv{Out: 4, Kernel: 3, Pad: 1, Bias: true})))
	want, err := hand.Model(hand.Dense("head", h, 3))
	if err != nil {
		t.Fatal(err)
	}
	gap := node("GlobalAveragePool", []string{"r"}, "g")
	mean := node("ReduceMean", []string{"r"}, "g", onnx.IntsAttr("axes", 2, 3), onnx.IntAttr("keepdims", 1))
	flat := []onnx.Node{node("Flatten", []string{"h"}, "y")}
	b := batchOf(imageSet(3, 4, 3, true, 1, 4, 4), seq(4)...)
	for _, c := range []struct {
		name string
		pool onnx.Node
		mid  []onnx.Node
		tail []onnx.Node
	}{
		{"GlobalAveragePool-Flatten", gap, nil, flat},
		{"ReduceMean-keepdims-Flatten", mean, nil, flat},
		{"GlobalAveragePool-Squeeze", gap, nil, []onnx.Node{node("Squeeze", []string{"h", "axes"}, "y")}},
		{"GlobalAveragePool-Relu-Reshape", node("GlobalAveragePool", []string{"r"}, "p"), []onnx.Node{node("Relu", []string{"p"}, "g")},
			[]onnx.Node{node("Reshape", []string{"h", "flat"}, "y")}},
	} {
		nodes, inits := gapConv(c.pool, c.mid, c.tail)
		inits = append(inits, onnx.Int64Tensor("flat", []int64{0, -1}, 2))
		m, x0, err := ImportONNX(c.name, tinyONNX(t, 13, batchN, inits, nodes...), []int{1, 4, 4}, 3)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var ops []string
		spec, _ := specJSON(t, m)
		for _, l := range spec.Layers {
			ops = append(ops, l.Op)
		}
		wantOps := []string{"conv", "relu", "globalavgpool", "dense"}
		if len(c.mid) > 0 {
			wantOps = []string{"conv", "relu", "globalavgpool", "relu", "dense"}
		} else if got, w := fmt.Sprint(m.Params()), fmt.Sprint(want.Params()); got != w {
			t.Errorf("%s: parameters %s, want %s", c.name, got, w)
		} else {
			sameTraining(t, c.name, want, x0, m, x0, b)
		}
		if !slices.Equal(ops, wantOps) {
			t.Errorf("%s: layers %v, want %v", c.name, ops, wantOps)
		}
		for _, p := range m.Params() {
			if p.Name == "head.w" {
				w := x0[p.Offset : p.Offset+p.Size()]
				if tw := transpose2(&iconst{dims: []int{3, 4}, float: true, f: ramp(12, 1)}).f; !slices.Equal(w, tw) || !slices.Equal(p.Shape, []int{4, 3}) {
					t.Errorf("%s: head.w %v %v, want the Conv's weights transposed, [4 3] %v", c.name, p.Shape, w, tw)
				}
			}
		}
	}
}

// TestImportSqueezeExcitation imports a squeeze-and-excitation block,
// GlobalAveragePool → 1×1 Conv → Relu → 1×1 Conv → Sigmoid → Mul of the
// maps and the gate [N,4,1,1], in either operand order, as one
// channelscale layer, the same logits either way; and refuses, each in one
// line, a gate of another channel count, a k×k kernel with padding on the
// pooled [N,C,1,1], a pool of it, and the Mul of two maps.
func TestImportSqueezeExcitation(t *testing.T) {
	inits := []onnx.Tensor{onnx.FloatTensor("cw", ramp(36, 0), 4, 1, 3, 3), onnx.FloatTensor("cb", ramp(4, 3), 4),
		onnx.FloatTensor("w1", ramp(8, 1), 2, 4, 1, 1), onnx.FloatTensor("b1", ramp(2, 2), 2),
		onnx.FloatTensor("w2", ramp(8, 4), 4, 2, 1, 1), onnx.FloatTensor("b2", ramp(4, 5), 4),
		onnx.FloatTensor("w3", ramp(6, 4), 3, 2, 1, 1), onnx.FloatTensor("k3", ramp(144, 2), 4, 4, 3, 3),
		onnx.FloatTensor("fw", ramp(12, 6), 3, 4), onnx.FloatTensor("fb", ramp(3, 7), 3)}
	head := []onnx.Node{node("Conv", []string{"x", "cw", "cb"}, "c", onnx.IntsAttr("pads", 1, 1, 1, 1)), node("Relu", []string{"c"}, "r"),
		node("GlobalAveragePool", []string{"r"}, "p"), node("Conv", []string{"p", "w1", "b1"}, "s1"), node("Relu", []string{"s1"}, "s2")}
	gate := append(slices.Clone(head), node("Conv", []string{"s2", "w2", "b2"}, "s3"), node("Sigmoid", []string{"s3"}, "s"))
	tail := []onnx.Node{node("GlobalAveragePool", []string{"e"}, "q"), node("Flatten", []string{"q"}, "f"), node("Gemm", []string{"f", "fw", "fb"}, "y", onnx.IntAttr("transB", 1))}
	b := batchOf(imageSet(3, 4, 3, true, 1, 4, 4), seq(4)...)
	var first Model
	var x0 []float32
	for _, order := range [][]string{{"r", "s"}, {"s", "r"}} {
		nodes := append(append(slices.Clone(gate), node("Mul", order, "e")), tail...)
		m, x, err := ImportONNX("se", tinyONNX(t, 13, batchN, inits, nodes...), []int{1, 4, 4}, 3)
		if err != nil {
			t.Fatalf("Mul%v: %v", order, err)
		}
		spec, _ := specJSON(t, m)
		var ops []string
		for _, l := range spec.Layers {
			ops = append(ops, l.Op)
		}
		if want := []string{"conv", "relu", "globalavgpool", "dense", "relu", "dense", "sigmoid", "channelscale", "globalavgpool", "dense"}; !slices.Equal(ops, want) {
			t.Errorf("Mul%v: layers %v, want %v", order, ops, want)
		}
		if first == nil {
			first, x0 = m, x
		} else {
			sameTraining(t, "Mul"+strings.Join(order, ","), first, x0, m, x, b)
		}
	}
	for _, c := range []struct {
		name  string
		nodes []onnx.Node
		want  string
	}{
		{"a gate of 3 channels", append(append(slices.Clone(head), node("Conv", []string{"s2", "w3"}, "s3"), node("Sigmoid", []string{"s3"}, "s"),
			node("Mul", []string{"r", "s"}, "e")), tail...),
			`node "/e/Mul" (Mul): multiplies an image [N,4,4,4] by a gate [N,3,1,1]; want one gate value per channel, [N,4,1,1]`},
		{"a 3×3 kernel with padding", append(append(slices.Clone(head[:3]), node("Conv", []string{"p", "k3"}, "e", onnx.IntsAttr("pads", 1, 1, 1, 1))), tail...),
			`node "/e/Conv" (Conv): a 3×3 kernel with padding 1 on [N,4,1,1], a global pool's output, reads only its centre tap; the import takes a 1×1 kernel without padding there (a dense layer): use nn.Conv2d(4, 4, 1)`},
		{"a pool of the pooled", append(append(slices.Clone(head[:3]), node("MaxPool", []string{"p"}, "e", onnx.IntsAttr("kernel_shape", 1, 1))), tail...),
			`node "/e/MaxPool" (MaxPool): reads [N,4,1,1], a global pool's output, where it wants images [N,C,H,W]`},
		{"a map and its flattening", append(append(slices.Clone(head[:2]), node("Flatten", []string{"r"}, "rf"), node("Mul", []string{"r", "rf"}, "e")), tail...),
			"Mul of two tensors of the network's data, [N,4,4,4] and [N,64]"},
	} {
		_, _, err := ImportONNX("se", tinyONNX(t, 13, batchN, inits, c.nodes...), []int{1, 4, 4}, 3)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a refusal naming %q", c.name, err, c.want)
		}
	}
}

// TestImportGateForms: a squeeze-and-excitation gate computed as a vector
// [N,C] (GlobalAveragePool, Flatten, Gemm, Sigmoid) and brought to
// [N,C,1,1] by a Reshape (y.view(N, C, 1, 1)), by one or two Unsqueeze
// nodes (y[:, :, None, None]), or by the Reshape then an Expand to the
// image's shape (x * y.expand_as(x)) imports as the same network: the same
// layers, trained bit for bit alike. Other Unsqueezes and Expands of the
// data are refused in one line.
func TestImportGateForms(t *testing.T) {
	inits := []onnx.Tensor{onnx.FloatTensor("cw", ramp(36, 0), 4, 1, 3, 3), onnx.FloatTensor("cb", ramp(4, 3), 4),
		onnx.FloatTensor("gw", ramp(16, 1), 4, 4), onnx.FloatTensor("gb", ramp(4, 2), 4),
		onnx.FloatTensor("fw", ramp(12, 6), 3, 4), onnx.FloatTensor("fb", ramp(3, 7), 3),
		onnx.Int64Tensor("to", []int64{0, 4, 1, 1}, 4), onnx.Int64Tensor("a2", []int64{2}, 1), onnx.Int64Tensor("a3", []int64{3}, 1),
		onnx.Int64Tensor("a23", []int64{2, 3}, 2), onnx.Int64Tensor("a1", []int64{1}, 1), onnx.Int64Tensor("big", []int64{1, 4, 8, 8}, 4)}
	head := []onnx.Node{node("Conv", []string{"x", "cw", "cb"}, "c", onnx.IntsAttr("pads", 1, 1, 1, 1)), node("Relu", []string{"c"}, "r"),
		node("GlobalAveragePool", []string{"r"}, "p"), node("Flatten", []string{"p"}, "v"),
		node("Gemm", []string{"v", "gw", "gb"}, "h", onnx.IntAttr("transB", 1)), node("Sigmoid", []string{"h"}, "s")}
	tail := []onnx.Node{node("GlobalAveragePool", []string{"e"}, "q"), node("Flatten", []string{"q"}, "f"), node("Gemm", []string{"f", "fw", "fb"}, "y", onnx.IntAttr("transB", 1))}
	build := func(gate ...onnx.Node) []byte {
		return tinyONNX(t, 13, batchN, inits, append(append(slices.Clone(head), gate...), tail...)...)
	}
	forms := []struct {
		name string
		enc  []byte
	}{
		{"Reshape", build(node("Reshape", []string{"s", "to"}, "g"), node("Mul", []string{"r", "g"}, "e"))},
		{"Unsqueeze twice", build(node("Unsqueeze", []string{"s", "a2"}, "u"), node("Unsqueeze", []string{"u", "a3"}, "g"), node("Mul", []string{"g", "r"}, "e"))},
		{"Unsqueeze (2, 3)", build(node("Unsqueeze", []string{"s", "a23"}, "g"), node("Mul", []string{"r", "g"}, "e"))},
		{"Expand", build(node("Reshape", []string{"s", "to"}, "g"), node("Shape", []string{"r"}, "shape"),
			node("Expand", []string{"g", "shape"}, "ge"), node("Mul", []string{"r", "ge"}, "e"))},
	}
	b := batchOf(imageSet(3, 4, 3, true, 1, 4, 4), seq(4)...)
	var first Model
	var x0 []float32
	for _, f := range forms {
		m, x, err := ImportONNX("gate", f.enc, []int{1, 4, 4}, 3)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		spec, _ := specJSON(t, m)
		var ops []string
		for _, l := range spec.Layers {
			ops = append(ops, l.Op)
		}
		if want := []string{"conv", "relu", "globalavgpool", "dense", "sigmoid", "channelscale", "globalavgpool", "dense"}; !slices.Equal(ops, want) {
			t.Errorf("%s: layers %v, want %v", f.name, ops, want)
		}
		if first == nil {
			first, x0 = m, x
		} else {
			sameTraining(t, f.name, first, x0, m, x, b)
		}
	}
	for _, c := range []struct {
		name string
		gate []onnx.Node
		want string
	}{
		{"a new axis in front", []onnx.Node{node("Unsqueeze", []string{"s", "a1"}, "g"), node("Mul", []string{"r", "g"}, "e")},
			"Unsqueeze of the network's data [N,4] is not supported: the import takes it only at the end of a per-sample vector"},
		{"an image unsqueezed", []onnx.Node{node("Unsqueeze", []string{"r", "a2"}, "g"), node("Mul", []string{"r", "s"}, "e")},
			"Unsqueeze of the network's data [N,4,4,4] is not supported"},
		{"another shape", []onnx.Node{node("Reshape", []string{"s", "to"}, "g"), node("Expand", []string{"g", "big"}, "ge"), node("Mul", []string{"r", "ge"}, "e")},
			"expands a gate [N,4,1,1] to [1 4 8 8]; the import takes Expand of a gate only to the shape of the image"},
		{"an image expanded", []onnx.Node{node("Shape", []string{"r"}, "shape"), node("Expand", []string{"r", "shape"}, "e")},
			"Expand of the network's data [N,4,4,4] is not supported"},
	} {
		_, _, err := ImportONNX("gate", build(c.gate...), []int{1, 4, 4}, 3)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line naming %q", c.name, err, c.want)
		}
	}
}
