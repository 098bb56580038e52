package models

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// mobileNet is a MobileNet-style network on 4×8×8 samples: a grouped conv
// 4→8 (2 groups, padding 1, bias) → ReLU6, a depthwise conv 3×3 stride 2
// padding 1 → Clamp(−1, 1), a grouped 1×1 conv 8→16 (4 groups) → global
// average pooling → Dense 3.
func mobileNet() (Model, error) {
	n := NewNet("mobilenet", []int{4, 8, 8}, 3)
	h := n.Conv2D("g", n.Input(), Conv{Out: 8, Kernel: 3, Pad: 1, Bias: true, Groups: 2})
	h = n.Clamp(h, 0, 6)
	h = n.Clamp(n.Conv2D("dw", h, Conv{Out: 8, Kernel: 3, Stride: 2, Pad: 1, Groups: 8}), -1, 1)
	h = n.Conv2D("pw", h, Conv{Out: 16, Kernel: 1, Groups: 4, Init: InitKaimingNormal})
	return n.Model(n.Dense("fc", n.GlobalAvgPool(h), 3))
}

// TestGroupedRoundTrip exports mobileNet to ONNX, where each grouped
// convolution is a Conv with its group and each Clamp a Clip with its
// bounds, imports it and rebuilds it from its NetSpec: each trains as the
// original, bit for bit. The spec writes groups and the clamp's bounds,
// and the filters are [Out,C/G,K,K] of fan-in (C/G)·K².
func TestGroupedRoundTrip(t *testing.T) {
	m, err := mobileNet()
	if err != nil {
		t.Fatal(err)
	}
	params := m.Init(5)
	shapes := map[string][]int{"g.w": {8, 2, 3, 3}, "dw.w": {8, 1, 3, 3}, "pw.w": {16, 2, 1, 1}}
	for _, p := range m.Params() {
		if want, ok := shapes[p.Name]; ok && !slices.Equal(p.Shape, want) {
			t.Errorf("%s of shape %v, want %v", p.Name, p.Shape, want)
		}
		if p.Name == "dw.w" && maxAbs(params[p.Offset:p.Offset+p.Size()]) > 1/float32(3) {
			t.Errorf("dw.w drawn beyond 1/√9: its fan-in is (C/G)·K² = 9")
		}
	}
	om, enc := marshalONNX(t, m, params)
	groups := map[string]int64{}
	var clips [][2]float32
	for _, n := range om.Graph.Nodes {
		switch n.OpType {
		case "Conv":
			groups[n.Name] = attr(&n, "group").I
		case "Clip":
			if len(n.Inputs) != 3 {
				t.Fatalf("Clip %s reads %v, want x, min and max", n.Name, n.Inputs)
			}
			var b [2]float32
			for k, in := range n.Inputs[1:] {
				for _, init := range om.Graph.Initializers {
					if init.Name == in && len(init.Dims) == 0 && len(init.Floats) == 1 {
						b[k] = init.Floats[0]
					}
				}
			}
			clips = append(clips, b)
		}
	}
	if want := map[string]int64{"g": 2, "dw": 8, "pw": 4}; !mapsEqual(groups, want) {
		t.Errorf("the export's Conv groups %v, want %v", groups, want)
	}
	if want := [][2]float32{{0, 6}, {-1, 1}}; !slices.Equal(clips, want) {
		t.Errorf("the export's Clip bounds %v, want %v", clips, want)
	}
	_, js := roundTrips(t, "mobilenet", m, params, enc, batchOf(imageSet(23, 5, 3, true, 4, 8, 8), seq(5)...))
	for _, want := range []string{`"op":"conv","name":"g","in":[0],"out":8,"kernel":3,"stride":1,"pad":1,"bias":true,"init":"uniform","groups":2}`,
		`{"op":"clamp","in":[1],"lo":0,"hi":6}`, `"groups":8`, `{"op":"clamp","in":[3],"lo":-1,"hi":1}`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("spec %s lacks %s", js, want)
		}
	}
}

func maxAbs(v []float32) float32 {
	var m float32
	for _, f := range v {
		m = max(m, f, -f)
	}
	return m
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestGroupedRefusals checks the one-line errors of groups that do not
// divide the channels (in a Net, and in an ONNX Conv), of clamp bounds
// that are not finite with lo < hi, of a spec's clamp without both bounds,
// and of an ONNX Clip whose bound is computed from the data.
func TestGroupedRefusals(t *testing.T) {
	for _, c := range []struct {
		conv Conv
		want string
	}{
		{Conv{Out: 6, Kernel: 3, Groups: 3}, "c: 3 groups do not divide the 4 input channels and 6 output channels"},
		{Conv{Out: 6, Kernel: 3, Groups: 4}, "c: 4 groups do not divide the 4 input channels and 6 output channels"},
		{Conv{Out: 4, Kernel: 3, Groups: -1}, "c: -1 groups do not divide"},
	} {
		n := NewNet("net", []int{4, 6, 6}, 2)
		n.Conv2D("c", n.Input(), c.conv)
		if err := n.Err(); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want %q", c.conv, err, c.want)
		}
	}
	for _, b := range [][2]float32{{1, 1}, {2, 1}, {float32(math.NaN()), 1}, {0, float32(math.Inf(1))}} {
		n := NewNet("net", []int{4}, 2)
		n.Clamp(n.Input(), b[0], b[1])
		if err := n.Err(); err == nil || !strings.Contains(err.Error(), "clamp#1: bounds") {
			t.Errorf("Clamp(%g, %g): %v, want a refusal naming the bounds", b[0], b[1], err)
		}
	}
	lo := float32(0)
	s := NetSpec{Name: "x", Shape: []int{4}, Classes: 4, Layers: []LayerSpec{{Op: "clamp", In: []int{0}, Lo: &lo}}}
	if _, err := NetFromSpec(s); err == nil || !strings.Contains(err.Error(), "layer 0 (clamp): want both bounds") {
		t.Errorf("clamp without hi: %v", err)
	}
	conv := func(group int64) []byte {
		nodes, inits := convGemm([]onnx.Node{node("Identity", []string{"c"}, "m")})
		nodes[0].Attrs = append(nodes[0].Attrs, onnx.IntAttr("group", group))
		return tinyONNX(t, 13, batchN, inits, nodes...)
	}
	for _, g := range []int64{2, 0} {
		if _, _, err := ImportONNX("conv", conv(g), []int{1, 4, 4}, 2); err == nil || !strings.Contains(err.Error(), "does not divide the 1 input channels") {
			t.Errorf("Conv group %d on 1 channel: %v", g, err)
		}
	}
	// Clip's max computed from the data: the clipped tensor itself.
	enc := tinyONNX(t, 13, batchN, []onnx.Tensor{onnx.FloatTensor("w", ramp(32, 1), 16, 2), onnx.FloatTensor("lo", []float32{0})},
		node("Flatten", []string{"x"}, "f"), node("MatMul", []string{"f", "w"}, "z"), node("Clip", []string{"z", "lo", "z"}, "y"))
	if _, _, err := ImportONNX("clip", enc, []int{1, 4, 4}, 2); err == nil || !strings.Contains(err.Error(), `node "/y/Clip"`) {
		t.Errorf("Clip of a data-dependent max: %v, want a refusal naming the node", err)
	}
}

// TestImportClip imports Clip at opset 13 with both bounds, with only a
// min (torch.clamp(x, min=0): the max is the largest float32), and at
// opset 6 with min and max attributes: each is the Net written by hand
// with Clamp.
func TestImportClip(t *testing.T) {
	w := onnx.FloatTensor("w", ramp(32, 1), 16, 2)
	head := []onnx.Node{node("Flatten", []string{"x"}, "f"), node("MatMul", []string{"f", "w"}, "z")}
	for _, c := range []struct {
		name   string
		opset  int64
		clip   onnx.Node
		inits  []onnx.Tensor
		lo, hi float32
	}{
		{"both", 13, node("Clip", []string{"z", "a", "b"}, "y"),
			[]onnx.Tensor{onnx.FloatTensor("a", []float32{-0.25}), onnx.FloatTensor("b", []float32{0.5})}, -0.25, 0.5},
		{"min only", 13, node("Clip", []string{"z", "a"}, "y"), []onnx.Tensor{onnx.FloatTensor("a", []float32{0})}, 0, math.MaxFloat32},
		{"max only", 11, node("Clip", []string{"z", "", "b"}, "y"), []onnx.Tensor{onnx.FloatTensor("b", []float32{0.5})}, -math.MaxFloat32, 0.5},
		{"attributes", 9, node("Clip", []string{"z"}, "y", onnx.FloatAttr("min", -1), onnx.FloatAttr("max", 0.75)), nil, -1, 0.75},
	} {
		enc := tinyONNX(t, c.opset, batchN, append([]onnx.Tensor{w}, c.inits...), append(slices.Clone(head), c.clip)...)
		m, x0, err := ImportONNX("clip", enc, []int{1, 4, 4}, 2)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		spec, _ := Spec(m)
		last := spec.Layers[len(spec.Layers)-1]
		if last.Op != "clamp" || *last.Lo != c.lo || *last.Hi != c.hi {
			t.Errorf("%s: imports as %+v, want clamp [%g, %g]", c.name, last, c.lo, c.hi)
		}
		n := NewNet("clip", []int{1, 4, 4}, 2)
		want, err := n.Model(n.Clamp(n.DenseNoBias("w", n.Flatten(n.Input()), 2), c.lo, c.hi))
		if err != nil {
			t.Fatal(err)
		}
		sameTraining(t, c.name, want, x0, m, x0, batchOf(imageSet(5, 3, 2, true, 1, 4, 4), 0, 1, 2))
	}
}

// TestGroupedMemory checks that WorkerBytes counts a grouped convolution's
// buffers per group: a depthwise 3×3 convolution of 8 channels on 6×6
// maps (padding 1, batch 32) holds one group's column matrix (9×36 floats)
// and padded image (8×8), and filters and their gradient of 8×1×3×3,
// where the dense convolution holds 72×36, 8×8×8 and 8×8×3×3.
func TestGroupedMemory(t *testing.T) {
	bytes := func(groups int) int64 {
		n := NewNet("mem", []int{8, 6, 6}, 3)
		h := n.Conv2D("c", n.Input(), Conv{Out: 8, Kernel: 3, Pad: 1, Groups: groups})
		m, err := n.Model(n.Dense("fc", n.GlobalAvgPool(h), 3))
		if err != nil {
			t.Fatal(err)
		}
		b, err := WorkerBytes(m, []int{32}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	dense, depthwise := bytes(1), bytes(8)
	perFloat := func(cols, xpad, w int) int64 { return 4 * int64(cols+xpad+2*w) }
	if want := perFloat(72*36, 8*8*8, 8*8*9) - perFloat(9*36, 8*8, 8*9); dense-depthwise != want {
		t.Errorf("depthwise %d bytes, dense %d: %d less, want %d", depthwise, dense, dense-depthwise, want)
	}
}
