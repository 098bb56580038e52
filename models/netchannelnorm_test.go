package models

import (
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// cnNet is conv 2×2 stride 2 3→6 → ChannelNorm (ε 1e-6, ConvNeXt's) →
// GELU → conv 1×1 6→4 → ChannelNorm (ε 1e-5) → ReLU → global average
// pooling → Dense 3, on 3×8×8 samples.
func cnNet() (Model, error) {
	n := NewNet("cnnet", []int{3, 8, 8}, 3)
	h := n.GELU(n.ChannelNorm("cn1", n.Conv2D("stem", n.Input(), Conv{Out: 6, Kernel: 2, Stride: 2, Bias: true}), 1e-6))
	h = n.ReLU(n.ChannelNorm("cn2", n.Conv2D("pw", h, Conv{Out: 4, Kernel: 1, Bias: true}), 1e-5))
	return n.Model(n.Dense("fc", n.GlobalAvgPool(h), 3))
}

// TestChannelNormRoundTrip exports cnNet to ONNX (the channels_first
// chain for each ChannelNorm) and imports it, and stores it as a NetSpec
// (JSON) and rebuilds it: each trains as the original, bit for bit, and
// both record each ChannelNorm's ε.
func TestChannelNormRoundTrip(t *testing.T) {
	m, err := cnNet()
	if err != nil {
		t.Fatal(err)
	}
	params := onnxrtParams(m, 9) // scales and shifts off 1 and 0
	om, enc := marshalONNX(t, m, params)
	var ops []string
	for _, n := range om.Graph.Nodes {
		ops = append(ops, n.OpType)
	}
	chain := "ReduceMean Sub Pow ReduceMean Add Sqrt Div Mul Add"
	if got := strings.Count(strings.Join(ops, " "), chain); got != 2 {
		t.Errorf("the export's operators %v hold %d ChannelNorm chains (%s), want 2", ops, got, chain)
	}
	im, js := roundTrips(t, "cnnet", m, params, enc, batchOf(imageSet(23, 5, 3, true, 3, 8, 8), seq(5)...))
	for _, want := range []string{`{"op":"channelnorm","name":"cn1","in":[1],"eps":0.000001}`, `{"op":"channelnorm","name":"cn2","in":[4],"eps":0.00001}`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("spec %s: no %s", js, want)
		}
	}
	ispec, _ := specJSON(t, im)
	var got []string
	for _, l := range ispec.Layers {
		got = append(got, l.Op)
		if l.Op == "channelnorm" && (l.Eps == nil || (l.Name == "cn1" && *l.Eps != 1e-6) || (l.Name == "cn2" && *l.Eps != 1e-5)) {
			t.Errorf("imported channelnorm %s with ε %v, want the export's", l.Name, l.Eps)
		}
	}
	if want := "conv channelnorm gelu conv channelnorm relu globalavgpool dense"; strings.Join(got, " ") != want {
		t.Errorf("the imported export's layers %v, want %s", got, want)
	}
	for _, c := range []struct {
		name string
		spec NetSpec
		want string
	}{
		{"no eps", NetSpec{Name: "e", Shape: []int{2, 3, 3}, Classes: 2, Layers: []LayerSpec{{Op: "channelnorm", Name: "cn", In: []int{0}},
			{Op: "flatten", In: []int{1}}, {Op: "dense", Name: "fc", In: []int{2}, Units: 2}}}, "e: layer 0 (channelnorm cn): no eps"},
		{"of a vector", NetSpec{Name: "e", Shape: []int{4}, Classes: 2, Layers: []LayerSpec{{Op: "channelnorm", Name: "cn", In: []int{0}, Eps: new(float32(1e-5))},
			{Op: "dense", Name: "fc", In: []int{1}, Units: 2}}}, "reads a tensor of shape [4], want an image [C,H,W]"},
	} {
		if _, err := NetFromSpec(c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	n := NewNet("e", []int{2, 3, 3}, 2)
	if n.ChannelNorm("cn", n.Input(), 0); n.Err() == nil || n.Err().Error() != "e: cn: ε 0, want a finite number above 0" {
		t.Errorf("ChannelNorm(ε 0): %v, want a refusal of ε", n.Err())
	}
}

// TestImportChannelsLast imports a channels-last block between the
// convolution and the head of convGemm — Transpose perm [0,2,3,1],
// nn.LayerNorm(4), MatMul and Add of a bias, GELU, MatMul without a
// bias, Mul by a [4] constant, the residual Add and Transpose back — and
// checks it is the Net written by hand with the same weights, logit for
// logit; and the one-line refusals of other readers of a channels-last
// value.
func TestImportChannelsLast(t *testing.T) {
	k := func(name string, v float32) onnx.Tensor { return onnx.FloatTensor(name, []float32{v}) }
	inits := []onnx.Tensor{k("two", 2), k("eps", 1e-6), k("sqrt2", 1.4142135), k("one", 1), k("half", 0.5),
		onnx.FloatTensor("ln.weight", ramp(4, 2), 4), onnx.FloatTensor("ln.bias", ramp(4, 3), 4),
		onnx.FloatTensor("w1", ramp(32, 4), 4, 8), onnx.FloatTensor("b1", ramp(8, 5), 8), onnx.FloatTensor("w2", ramp(32, 6), 8, 4),
		onnx.FloatTensor("gamma", ramp(4, 7), 4)}
	ln := lnChainNodes("t", "n", -1)
	inner := map[string]bool{"m": true, "d": true, "p": true, "v": true, "ve": true, "s": true, "nrm": true, "sc": true}
	for i := range ln { // the chain's own names, apart from convGemm's
		for j, in := range ln[i].Inputs {
			if inner[in] {
				ln[i].Inputs[j] = "ln." + in
			}
		}
		if o := ln[i].Outputs[0]; inner[o] {
			ln[i].Outputs[0] = "ln." + o
		}
	}
	block := append([]onnx.Node{node("Transpose", []string{"c"}, "t", onnx.IntsAttr("perm", 0, 2, 3, 1))}, ln...)
	block = append(block,
		node("MatMul", []string{"n", "w1"}, "mm1"), node("Add", []string{"b1", "mm1"}, "l1"),
		node("Div", []string{"l1", "sqrt2"}, "gd"), node("Erf", []string{"gd"}, "ge"), node("Add", []string{"ge", "one"}, "ga"),
		node("Mul", []string{"l1", "ga"}, "gm"), node("Mul", []string{"gm", "half"}, "g"),
		node("MatMul", []string{"g", "w2"}, "l2"), node("Mul", []string{"gamma", "l2"}, "ls"),
		node("Add", []string{"t", "ls"}, "res"), node("Transpose", []string{"res"}, "m", onnx.IntsAttr("perm", 0, 3, 1, 2)))
	nodes, all := convGemm(block, inits...)
	m, x0, err := ImportONNX("cl", tinyONNX(t, 13, batchN, all, nodes...), []int{1, 4, 4}, 2)
	if err != nil {
		t.Fatal(err)
	}
	n := NewNet("cl", []int{1, 4, 4}, 2)
	c := n.Conv2D("c", n.Input(), Conv{Out: 4, Kernel: 3, Pad: 1})
	h := n.ChannelNorm("ln", c, 1e-6)
	h = n.GELU(n.Conv2D("mm1", h, Conv{Out: 8, Kernel: 1, Bias: true}))
	h = n.LayerScale("gamma", n.Conv2D("l2", h, Conv{Out: 4, Kernel: 1})) // trained, as torch's gamma
	h = n.ReLU(n.Add(c, h))
	want, err := n.Model(n.Dense("y", n.GlobalAvgPool(h), 2))
	if err != nil {
		t.Fatal(err)
	}
	if got, wantOps := specOps(t, m), specOps(t, want); got != wantOps {
		t.Fatalf("imported layers %s, want %s", got, wantOps)
	}
	b := batchOf(imageSet(3, 4, 2, true, 1, 4, 4), seq(4)...)
	z, err := Logits(m, x0, b)
	if err != nil {
		t.Fatal(err)
	}
	// The hand-written Net's weights: the file's, the 1×1 convolutions'
	// [C,K] matrices transposed to [K,C,1,1].
	p := map[string][]float32{"c.w": ramp(36, 0), "ln.g": ramp(4, 2), "ln.b": ramp(4, 3),
		"mm1.w": transpose2(&iconst{dims: []int{4, 8}, float: true, f: ramp(32, 4)}).f, "mm1.b": ramp(8, 5), "gamma.g": ramp(4, 7),
		"l2.w": transpose2(&iconst{dims: []int{8, 4}, float: true, f: ramp(32, 6)}).f, "y.w": transpose2(&iconst{dims: []int{2, 4}, float: true, f: ramp(8, 1)}).f, "y.b": ramp(2, 2)}
	var wx []float32
	for _, q := range want.Params() {
		wx = append(wx, p[q.Name]...)
	}
	zw, err := Logits(want, wx, b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range z {
		if z[i] != zw[i] {
			t.Fatalf("logit %d: imported %g, by hand %g", i, z[i], zw[i])
		}
	}

	refusals := []struct {
		name  string
		edit  func([]onnx.Node) []onnx.Node
		want  string
		inits []onnx.Tensor
	}{
		{"Softmax", func(ns []onnx.Node) []onnx.Node {
			return append(ns[:1:1], node("Softmax", []string{"t"}, "rl", onnx.IntAttr("axis", -1)), node("Transpose", []string{"rl"}, "m", onnx.IntsAttr("perm", 0, 3, 1, 2)))
		}, `(Softmax): reads "t", a channels-last tensor (an image after Transpose perm [0,2,3,1]); the import takes there only ReduceMean over the last axis`, nil},
		{"ReduceMean over the height", func(ns []onnx.Node) []onnx.Node {
			ns[1] = node("ReduceMean", []string{"t"}, "ln.m", onnx.IntsAttr("axes", 1))
			return ns
		}, "ReduceMean of a channels-last tensor over axes [1] (keepdims 1); the import takes one over the last axis", nil},
		{"MatMul of another width", nil, `MatMul of a channels-last tensor [N,4,4,4] by "w1" of shape [3 8]; want a float constant [4,K] (nn.Linear)`,
			[]onnx.Tensor{onnx.FloatTensor("w1", ramp(24, 4), 3, 8)}},
		{"Add of an image", func(ns []onnx.Node) []onnx.Node {
			ns[len(ns)-2] = node("Add", []string{"c", "ls"}, "res")
			return ns
		}, "adds a channels-last tensor [N,4,4,4] to a tensor [N,4,4,4] that is not channels-last of that shape", nil},
		{"Mul by [2]", nil, `Mul of a channels-last tensor and the constant "gamma": shape [2] is neither one value nor one per channel`,
			[]onnx.Tensor{onnx.FloatTensor("gamma", ramp(2, 7), 2)}},
		{"Flatten of a channels-last output", func(ns []onnx.Node) []onnx.Node {
			ns[len(ns)-1] = node("Flatten", []string{"res"}, "m")
			return ns
		}, `(Flatten): reads "res", a channels-last tensor`, nil},
	}
	for _, c := range refusals {
		blk := append([]onnx.Node(nil), block...)
		if c.edit != nil {
			blk = c.edit(blk)
		}
		in := append([]onnx.Tensor(nil), inits...)
		for _, r := range c.inits {
			for i := range in {
				if in[i].Name == r.Name {
					in[i] = r
				}
			}
		}
		nodes, all := convGemm(blk, in...)
		_, _, err := ImportONNX("cl", tinyONNX(t, 13, batchN, all, nodes...), []int{1, 4, 4}, 2)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want a one-line refusal naming %q", c.name, err, c.want)
		}
	}
	// A graph ending in a channels-last MatMul without its bias: the
	// 1×1 Conv it settles to is no class logits.
	_, _, err = ImportONNX("cl", tinyONNX(t, 13, batchN, []onnx.Tensor{onnx.FloatTensor("cw", ramp(36, 0), 4, 1, 3, 3), onnx.FloatTensor("w", ramp(8, 6), 4, 2)},
		node("Conv", []string{"x", "cw"}, "c", onnx.IntsAttr("pads", 1, 1, 1, 1)), node("Transpose", []string{"c"}, "t", onnx.IntsAttr("perm", 0, 2, 3, 1)),
		node("MatMul", []string{"t", "w"}, "y")), []int{1, 4, 4}, 2)
	if want := `the output "y" has shape [N,4,4,2], want the 2 class logits [N,2]`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a channels-last output: %v, want a refusal naming %q", err, want)
	}
}

// TestConvNeXtFixtureRoundTrip imports convnext_block.onnx (torch's export
// of a tiny ConvNeXt: channels_first LayerNorms and a channels-last
// block), trains it three SGD steps, exports it and imports the export:
// the same network, training bit for bit as the first import.
func TestConvNeXtFixtureRoundTrip(t *testing.T) {
	m, x0 := importFixture(t, "convnext_block")
	b := batchOf(imageSet(17, 6, 10, true, 3, 32, 32), seq(6)...)
	params := sgdSteps(t, m, x0, b, 3)
	_, enc := marshalONNX(t, m, params)
	im, _ := roundTrips(t, "convnext_block", m, params, enc, b)
	want, _ := specJSON(t, m)
	got, _ := specJSON(t, im)
	for i := range want.Layers {
		if i >= len(got.Layers) || got.Layers[i].Op != want.Layers[i].Op {
			t.Fatalf("the export imports as %v, want %v", got.Layers, want.Layers)
		}
	}
}
