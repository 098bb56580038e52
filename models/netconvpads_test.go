package models

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// unequalPads is a network of convolutions padded unequally on opposite
// sides, on 2×9×8 samples: TensorFlow's "SAME" 3×3 stride 2 (pads
// [0,0,1,1]), PyTorch's padding='same' of a 4×4 kernel ([1,1,2,2]), a
// grouped dilated one with more zeros at the top and left ([2,1,0,1]),
// and a 1×3 stride (1,2) one ([0,1,1,0]) → global average pooling →
// Dense 3.
func unequalPads() (Model, error) {
	n := NewNet("pads", []int{2, 9, 8}, 3)
	h := n.ReLU(n.Conv2D("up", n.Input(), Conv{Out: 4, Kernel: 3, Stride: 2, ExtraBottom: 1, ExtraRight: 1, Bias: true}))
	h = n.Conv2D("k4", h, Conv{Out: 4, Kernel: 4, Pad: 1, ExtraBottom: 1, ExtraRight: 1, Init: InitKaimingNormal})
	h = n.ReLU(n.GroupNorm("gn", h, 2))
	h = n.Conv2D("lo", h, Conv{Out: 4, Kernel: 3, PadH: 2, PadW: 1, ExtraBottom: -2, Dilation: 2, Groups: 2, Bias: true})
	h = n.Conv2D("row", h, Conv{Out: 4, Kernel: 1, KernelW: 3, StrideW: 2, PadW: 1, ExtraBottom: 1, ExtraRight: -1})
	return n.Model(n.Dense("fc", n.GlobalAvgPool(h), 3))
}

// TestConvUnequalPadsRoundTrip checks the output sizes of unequalPads'
// convolutions ((H + top + bottom − span)/stride + 1), exports it to
// ONNX, where each Conv has pads [top,left,bottom,right], imports it and
// rebuilds it from its NetSpec (extra_bottom and extra_right): each
// trains as the original, bit for bit.
func TestConvUnequalPadsRoundTrip(t *testing.T) {
	m, err := unequalPads()
	if err != nil {
		t.Fatal(err)
	}
	params := m.Init(5)
	om, enc := marshalONNX(t, m, params)
	got := map[string]string{}
	for _, n := range om.Graph.Nodes {
		if n.OpType == "Conv" {
			got[n.Name] = fmt.Sprint(attr(&n, "pads").Ints)
		}
	}
	want := map[string]string{"up": "[0 0 1 1]", "k4": "[1 1 2 2]", "lo": "[2 1 0 1]", "row": "[0 1 1 0]"}
	if !maps.Equal(got, want) {
		t.Errorf("the export's Conv pads %v, want %v", got, want)
	}
	// 9×8 → up (9+1−3)/2+1 × (8+1−3)/2+1 = 4×4 → k4 4×4 → lo (4+2−5)+1 × (4+2−5)+1 = 2×2
	// → row (2+1−1)+1 × (2+1−3)/2+1 = 3×1.
	n := NewNet("sizes", []int{2, 9, 8}, 3)
	h := n.Conv2D("up", n.Input(), Conv{Out: 4, Kernel: 3, Stride: 2, ExtraBottom: 1, ExtraRight: 1})
	h2 := n.Conv2D("k4", h, Conv{Out: 4, Kernel: 4, Pad: 1, ExtraBottom: 1, ExtraRight: 1})
	h3 := n.Conv2D("lo", h2, Conv{Out: 4, Kernel: 3, PadH: 2, PadW: 1, ExtraBottom: -2, Dilation: 2, Groups: 2})
	h4 := n.Conv2D("row", h3, Conv{Out: 4, Kernel: 1, KernelW: 3, StrideW: 2, PadW: 1, ExtraBottom: 1, ExtraRight: -1})
	for _, c := range []struct {
		t    Tensor
		want []int
	}{{h, []int{4, 4, 4}}, {h2, []int{4, 4, 4}}, {h3, []int{4, 2, 2}}, {h4, []int{4, 3, 1}}} {
		if s := n.Shape(c.t); !slices.Equal(s, c.want) {
			t.Errorf("output %v, want %v", s, c.want)
		}
	}
	_, js := roundTrips(t, "pads", m, params, enc, batchOf(imageSet(31, 5, 3, true, 2, 9, 8), seq(5)...))
	for _, want := range []string{
		`{"op":"conv","name":"up","in":[0],"out":4,"kernel":3,"stride":2,"bias":true,"init":"uniform","extra_bottom":1,"extra_right":1}`,
		`{"op":"conv","name":"k4","in":[2],"out":4,"kernel":4,"stride":1,"pad":1,"init":"kaiming-normal","extra_bottom":1,"extra_right":1}`,
		`"pad_h":2,"pad_w":1,"dilation":2,"extra_bottom":-2}`,
		`"kernel_w":3,"stride_w":2,"pad_w":1,"extra_bottom":1,"extra_right":-1}`,
	} {
		if !strings.Contains(string(js), want) {
			t.Errorf("spec %s lacks %s", js, want)
		}
	}
}

// TestConvUnequalPadsUnread checks that padding the convolution never
// reads changes nothing: a 3×3 stride-2 conv of an 8×8 input padded 1 on
// every side reads no zero of the bottom and right (4×4 outputs either
// way), so Pad 1 with ExtraBottom and ExtraRight −1 (the general path,
// pads [1,1,0,0]) gives the bits of Pad 1 (the strided path), forward and
// backward; and a spelling with ExtraBottom and ExtraRight 0 is the
// uniform convolution's spec.
func TestConvUnequalPadsUnread(t *testing.T) {
	build := func(c Conv) Model {
		n := NewNet("unread", []int{2, 8, 8}, 3)
		m, err := n.Model(n.Dense("fc", n.ReLU(n.Conv2D("c", n.Input(), c)), 3))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a := build(Conv{Out: 3, Kernel: 3, Stride: 2, Pad: 1, ExtraBottom: -1, ExtraRight: -1, Bias: true})
	b := build(Conv{Out: 3, Kernel: 3, Stride: 2, Pad: 1, Bias: true})
	params := b.Init(3)
	sameTraining(t, "pads [1,1,0,0]", b, params, a, params, batchOf(imageSet(7, 4, 3, true, 2, 8, 8), seq(4)...))
	s1, _ := Spec(build(Conv{Out: 3, Kernel: 3, PadH: 1, PadW: 1, ExtraBottom: 0}))
	s2, _ := Spec(build(Conv{Out: 3, Kernel: 3, Pad: 1}))
	if fmt.Sprint(s1) != fmt.Sprint(s2) {
		t.Errorf("spec %+v, want %+v", s1, s2)
	}
}

// TestConvUnequalPadsRefusals checks that Conv2D refuses ExtraBottom and
// ExtraRight out of range or leaving a side a negative padding, and a
// kernel that the unequally padded input does not fit, naming the layer.
func TestConvUnequalPadsRefusals(t *testing.T) {
	for _, c := range []struct {
		conv Conv
		want string
	}{
		{Conv{Out: 2, Kernel: 3, Pad: 1, ExtraBottom: -2}, "c: ExtraBottom -2 and ExtraRight 0 with padding (1,1): the bottom's and the right's padding (-1,1) must not be negative"},
		{Conv{Out: 2, Kernel: 3, ExtraRight: -1}, "c: ExtraBottom 0 and ExtraRight -1 with padding (0,0)"},
		{Conv{Out: 2, Kernel: 3, ExtraBottom: -1 << 25}, "c: ExtraBottom -33554432: want −16777216 to 16777216"},
		{Conv{Out: 2, Kernel: 9, PadH: 1, ExtraBottom: -1}, "c: a 9×9 kernel (stride (1,1), pads [1,0,0,0], dilation (1,1)) does not fit the 8×8 input"},
	} {
		n := NewNet("refuse", []int{1, 8, 8}, 2)
		_, err := n.Model(n.Dense("fc", n.Conv2D("c", n.Input(), c.conv), 2))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want one line containing %q", c.conv, err, c.want)
		}
	}
}
