package models

import (
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// shuffleNet is conv 3×3 2→8 (padding 1) → ReLU; a ShuffleNetV2 unit
// (Channels [0,4) and [4,8), the second through a 1×1 conv 4→4 and ReLU,
// joined by Concat) → ShuffleChannels in 2 groups → Channels [2,7) →
// conv 3×3 5→6 stride 2 → ReLU → global average pool → Dense 3, on 2×6×6
// samples.
func shuffleNet() (Model, error) {
	n := NewNet("shufflenet", []int{2, 6, 6}, 3)
	h := n.ReLU(n.Conv2D("c1", n.Input(), Conv{Out: 8, Kernel: 3, Pad: 1, Bias: true}))
	b := n.ReLU(n.Conv2D("c2", n.Channels(h, 4, 8), Conv{Out: 4, Kernel: 1, Bias: true}))
	h = n.ShuffleChannels(n.Concat(n.Channels(h, 0, 4), b), 2)
	h = n.ReLU(n.Conv2D("c3", n.Channels(h, 2, 7), Conv{Out: 6, Kernel: 3, Stride: 2, Pad: 1, Bias: true}))
	return n.Model(n.Dense("fc", n.GlobalAvgPool(h), 3))
}

// TestChannelsShuffleRoundTrip exports shuffleNet to ONNX (each Channels a
// Slice along axis 1, the shuffle Reshape to 5-D, Transpose, Reshape) and
// imports it, and stores it as a NetSpec (JSON) and rebuilds it: each
// trains as the original, bit for bit, and the spec holds the channels
// layers' ranges and the shuffle's groups.
func TestChannelsShuffleRoundTrip(t *testing.T) {
	m, err := shuffleNet()
	if err != nil {
		t.Fatal(err)
	}
	params := m.Init(9)
	om, enc := marshalONNX(t, m, params)
	var ops []string
	for _, n := range om.Graph.Nodes {
		ops = append(ops, n.OpType)
	}
	if got := strings.Join(ops, " "); !strings.Contains(got, "Slice Conv Relu Slice Concat Reshape Transpose Reshape Slice Conv") {
		t.Errorf("the export's operators %v: want Slices and the shuffle's Reshape, Transpose, Reshape", ops)
	}
	im, js := roundTrips(t, "shufflenet", m, params, enc, batchOf(imageSet(23, 5, 3, true, 2, 6, 6), seq(5)...))
	for _, want := range []string{`{"op":"channels","in":[2],"from":4,"to":8}`, `{"op":"channels","in":[2],"to":4}`,
		`{"op":"shuffle","in":[7],"groups":2}`, `{"op":"channels","in":[8],"from":2,"to":7}`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("spec %s: no %s", js, want)
		}
	}
	ispec, _ := specJSON(t, im)
	var got []string
	for _, l := range ispec.Layers {
		got = append(got, l.Op)
	}
	if want := "conv relu channels conv relu channels concat shuffle channels conv relu globalavgpool dense"; strings.Join(got, " ") != want {
		t.Errorf("the imported export's layers %v, want %s", got, want)
	}
}

// TestVectorShuffleRoundTrip exports a ShuffleChannels of a vector (Dense
// 12 → shuffle in 3 groups → ReLU → Dense 3; Reshape to [N,3,4],
// Transpose perm [0,2,1], Reshape back) and imports it: it trains as the
// original, bit for bit; with a Transpose of another perm the Reshape is
// refused.
func TestVectorShuffleRoundTrip(t *testing.T) {
	n := NewNet("vshuffle", []int{1, 4, 4}, 3)
	h := n.ReLU(n.ShuffleChannels(n.Dense("fc1", n.Flatten(n.Input()), 12), 3))
	m, err := n.Model(n.Dense("fc2", h, 3))
	if err != nil {
		t.Fatal(err)
	}
	params := m.Init(4)
	om, enc := marshalONNX(t, m, params)
	im, js := roundTrips(t, "vshuffle", m, params, enc, batchOf(imageSet(5, 4, 3, true, 1, 4, 4), seq(4)...))
	if !strings.Contains(string(js), `{"op":"shuffle","in":[2],"groups":3}`) {
		t.Errorf("spec %s: no shuffle in 3 groups", js)
	}
	if ispec, _ := specJSON(t, im); len(ispec.Layers) != len(m.(*classifier).net.layers) {
		t.Errorf("the import has %d layers, the original %d", len(ispec.Layers), len(m.(*classifier).net.layers))
	}
	for i := range om.Graph.Nodes {
		if nd := &om.Graph.Nodes[i]; nd.OpType == "Transpose" {
			nd.Attrs = []onnx.Attr{onnx.IntsAttr("perm", 0, 1, 2)}
		}
	}
	b, err := om.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = ImportONNX("vshuffle.onnx", b, []int{1, 4, 4}, 3)
	if err == nil || !strings.Contains(err.Error(), "reshapes [N,12] to [N,3,4]") {
		t.Errorf("a Transpose of perm [0 1 2] after a shuffle's Reshape: %v; want the Reshape refused", err)
	}
}

// TestImportSplitAndSlice imports a Split of the data into equal parts
// (opset 13 without its sizes) and by constant sizes, and a Slice along
// the channels with a negative end, joined again by Concat: the network
// is the Net written by hand with Channels, logit for logit.
func TestImportSplitAndSlice(t *testing.T) {
	split := func(sizes ...int64) onnx.Node {
		n := node("Split", []string{"c"}, "s0", onnx.IntAttr("axis", 1))
		if sizes != nil {
			n.Inputs = append(n.Inputs, "sizes")
		}
		n.Outputs = []string{"s0", "s1"}
		return n
	}
	for _, c := range []struct {
		name     string
		split    onnx.Node
		sizes    []int64
		from, to int // the second part
	}{
		{"equal", split(), nil, 2, 4},
		{"sizes", split(1, 3), []int64{1, 3}, 1, 4},
	} {
		mid := []onnx.Node{c.split,
			node("Slice", []string{"c", "st", "en", "ax"}, "sl"),
			node("Concat", []string{"s1", "sl", "s0"}, "m", onnx.IntAttr("axis", 1))}
		nodes, inits := convGemm(mid, onnx.Int64Tensor("st", []int64{1}, 1), onnx.Int64Tensor("en", []int64{-1}, 1), onnx.Int64Tensor("ax", []int64{1}, 1))
		nodes[len(nodes)-1].Inputs[1] = "fw6"
		inits = append(inits, onnx.FloatTensor("fw6", ramp(12, 1), 2, 6)) // 4 channels and 2 again
		if c.sizes != nil {
			inits = append(inits, onnx.Int64Tensor("sizes", c.sizes, 2))
		}
		m, x0, err := ImportONNX(c.name, tinyONNX(t, 13, batchN, inits, nodes...), []int{1, 4, 4}, 2)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		n := NewNet(c.name, []int{1, 4, 4}, 2)
		h := n.Conv2D("cw", n.Input(), Conv{Out: 4, Kernel: 3, Pad: 1})
		h = n.ReLU(n.Concat(n.Channels(h, c.from, c.to), n.Channels(h, 1, 3), n.Channels(h, 0, c.from)))
		want, err := n.Model(n.Dense("fw6", n.GlobalAvgPool(h), 2))
		if err != nil {
			t.Fatal(err)
		}
		p := slices.Concat(ramp(36, 0), transpose2(&iconst{dims: []int{2, 6}, f: ramp(12, 1), float: true}).f, ramp(2, 2))
		b := batchOf(imageSet(9, 3, 2, true, 1, 4, 4), seq(3)...)
		z1, err1 := Logits(m, x0, b)
		z2, err2 := Logits(want, p, b)
		if err1 != nil || err2 != nil || !slices.Equal(z1, z2) {
			t.Errorf("%s: logits %v (%v), the hand-written Net's %v (%v)", c.name, z1, err1, z2, err2)
		}
	}
}

// TestChannelsRefusals checks the one-line refusals: Net.Channels out of
// the channels, Net.ShuffleChannels in groups that do not divide them, a
// Slice or Split of the data along another axis, and 5-D Reshapes outside
// torch's channel_shuffle (read by something else than a Transpose of
// perm [0,2,1,3,4] then a Reshape), which keep Reshape's refusal.
func TestChannelsRefusals(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(n *Net) Tensor
		want string
	}{
		{"range", func(n *Net) Tensor { return n.Channels(n.Input(), 1, 3) },
			"chan: channels#1: channels [1,3) of a tensor of shape [2 6 6], want 0 ≤ from < to ≤ 2"},
		{"empty range", func(n *Net) Tensor { return n.Channels(n.Input(), 1, 1) },
			"chan: channels#1: channels [1,1) of a tensor of shape [2 6 6], want 0 ≤ from < to ≤ 2"},
		{"groups", func(n *Net) Tensor {
			return n.ShuffleChannels(n.Conv2D("c", n.Input(), Conv{Out: 8, Kernel: 1}), 3)
		}, "chan: shuffle#2: shuffles the 8 channels of a tensor of shape [8 6 6] in 3 groups, want a number of groups dividing them"},
	} {
		n := NewNet("chan", []int{2, 6, 6}, 3)
		c.make(n)
		if err := n.Err(); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	axes := onnx.Int64Tensor("ax", []int64{2}, 1)
	bounds := []onnx.Tensor{onnx.Int64Tensor("st", []int64{0}, 1), onnx.Int64Tensor("en", []int64{2}, 1)}
	shape5 := onnx.Int64Tensor("to5", []int64{0, 2, 2, 4, 4}, 5)
	shape4 := onnx.Int64Tensor("to4", []int64{0, 4, 4, 4}, 4)
	reshape5 := node("Reshape", []string{"c", "to5"}, "g")
	back := node("Reshape", []string{"t", "to4"}, "m")
	other5 := "reshapes [N,4,4,4] to [N,2,2,4,4]; the import takes Reshape only to flatten ([N,-1]) and in PyTorch's form of GroupNorm"
	for _, c := range []struct {
		name  string
		mid   []onnx.Node
		inits []onnx.Tensor
		want  string
	}{
		{"Slice along axis 2", []onnx.Node{node("Slice", []string{"c", "st", "en", "ax"}, "m")}, append(bounds, axes),
			`node "/m/Slice" (Slice): Slice of the network's data (cropping or slicing a tensor) [N,4,4,4] along axis 2 is not supported: the import takes Slice of the data along the channels (axis 1) only`},
		{"Slice by 2", []onnx.Node{node("Slice", []string{"c", "st", "en", "one", "two"}, "m")},
			append(bounds, onnx.Int64Tensor("one", []int64{1}, 1), onnx.Int64Tensor("two", []int64{2}, 1)),
			"slices the channels of [N,4,4,4] with starts [0], ends [2] and steps [2]; want constant bounds and step 1"},
		{"Split along axis 3", []onnx.Node{{Name: "split", OpType: "Split", Inputs: []string{"c"}, Outputs: []string{"m", "z"}, Attrs: []onnx.Attr{onnx.IntAttr("axis", 3)}}}, nil,
			`node "split" (Split): Split of the network's data (splitting a tensor) [N,4,4,4] along axis 3 is not supported: the import takes Split of the data along the channels (axis 1) only`},
		{"Split of 3 parts", []onnx.Node{{Name: "split", OpType: "Split", Inputs: []string{"c"}, Outputs: []string{"m", "z", "w"}, Attrs: []onnx.Attr{onnx.IntAttr("axis", 1)}}}, nil,
			"splits the 4 channels of [N,4,4,4] into 3 equal parts; want a number of parts dividing them, or the sizes"},
		{"5-D Reshape read by a Relu", []onnx.Node{reshape5, node("Relu", []string{"g"}, "t"), back}, []onnx.Tensor{shape5, shape4}, other5},
		{"another perm", []onnx.Node{reshape5, node("Transpose", []string{"g"}, "t", onnx.IntsAttr("perm", 0, 1, 2, 4, 3)), back}, []onnx.Tensor{shape5, shape4}, other5},
		{"Transpose read twice", []onnx.Node{reshape5, node("Transpose", []string{"g"}, "t", onnx.IntsAttr("perm", 0, 2, 1, 3, 4)), back,
			node("Relu", []string{"t"}, "u")}, []onnx.Tensor{shape5, shape4}, other5},
	} {
		nodes, inits := convGemm(c.mid, c.inits...)
		_, _, err := ImportONNX(c.name, tinyONNX(t, 13, batchN, inits, nodes...), []int{1, 4, 4}, 2)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.name, err, c.want)
		}
	}
}
