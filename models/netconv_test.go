package models

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// factorized is a network of the general convolutions on 3×12×10 samples:
// a 1×3 conv padding (0,1), a 3×1 conv stride (2,1) padding (1,0), a
// dilated 3×3 conv (dilation 2, padding 2), a grouped dilated conv stride
// 2, a 2×3 conv with dilation (3,1), and a 3×3 conv spelt per axis (the
// plain padded convolution) → global average pooling → Dense 3.
func factorized() (Model, error) {
	n := NewNet("factorized", []int{3, 12, 10}, 3)
	h := n.ReLU(n.Conv2D("c13", n.Input(), Conv{Out: 4, Kernel: 1, KernelW: 3, PadW: 1, Bias: true}))
	h = n.Conv2D("c31", h, Conv{Out: 6, Kernel: 3, KernelW: 1, Stride: 2, StrideW: 1, PadH: 1, Init: InitKaimingNormal})
	h = n.ReLU(n.GroupNorm("gn", h, 2))
	h = n.Conv2D("d2", h, Conv{Out: 6, Kernel: 3, Pad: 2, Dilation: 2, Bias: true})
	h = n.Conv2D("d2s2", h, Conv{Out: 6, Kernel: 3, Stride: 2, Pad: 2, Dilation: 2, Groups: 3})
	h = n.Conv2D("dxy", n.ReLU(h), Conv{Out: 4, Kernel: 2, KernelW: 3, PadH: 1, Dilation: 3, DilationW: 1, Bias: true})
	h = n.Conv2D("same", h, Conv{Out: 4, Kernel: 3, KernelW: 3, PadH: 1, PadW: 1, StrideW: 1, Dilation: 1})
	return n.Model(n.Dense("fc", n.GlobalAvgPool(h), 3))
}

// TestConvAxesRoundTrip exports factorized to ONNX, where each convolution
// is a Conv with its kernel_shape, strides, pads and dilations, imports it
// and rebuilds it from its NetSpec: each trains as the original, bit for
// bit. The filters are [Out,C/G,KH,KW] of fan-in (C/G)·KH·KW, the spec
// writes the per-axis fields only where the axes differ or the kernel is
// dilated, and a convolution spelt per axis with both axes alike is
// written as it always was.
func TestConvAxesRoundTrip(t *testing.T) {
	m, err := factorized()
	if err != nil {
		t.Fatal(err)
	}
	shapes := map[string][]int{"c13.w": {4, 3, 1, 3}, "c31.w": {6, 4, 3, 1}, "d2.w": {6, 6, 3, 3}, "d2s2.w": {6, 2, 3, 3}, "dxy.w": {4, 6, 2, 3}, "same.w": {4, 4, 3, 3}}
	for _, p := range m.Params() {
		if want, ok := shapes[p.Name]; ok && !slices.Equal(p.Shape, want) {
			t.Errorf("%s of shape %v, want %v", p.Name, p.Shape, want)
		}
	}
	if b, err := WorkerBytes(m, []int{4}, []int{8}); err != nil || b <= 0 {
		t.Errorf("worker memory %d, %v", b, err)
	}
	params := m.Init(9)
	for _, p := range m.Params() {
		if p.Name == "c13.w" && maxAbs(params[p.Offset:p.Offset+p.Size()]) > 1/float32(3) {
			t.Errorf("c13.w drawn beyond 1/√9: its fan-in is C·KH·KW = 9")
		}
	}
	om, enc := marshalONNX(t, m, params)
	got := map[string]string{}
	for _, n := range om.Graph.Nodes {
		if n.OpType == "Conv" {
			got[n.Name] = fmt.Sprint(attr(&n, "kernel_shape").Ints, attr(&n, "strides").Ints, attr(&n, "pads").Ints, attr(&n, "dilations").Ints)
		}
	}
	want := map[string]string{
		"c13":  "[1 3] [1 1] [0 1 0 1] [1 1]",
		"c31":  "[3 1] [2 1] [1 0 1 0] [1 1]",
		"d2":   "[3 3] [1 1] [2 2 2 2] [2 2]",
		"d2s2": "[3 3] [2 2] [2 2 2 2] [2 2]",
		"dxy":  "[2 3] [1 1] [1 0 1 0] [3 1]",
		"same": "[3 3] [1 1] [1 1 1 1] [1 1]",
	}
	if !maps.Equal(got, want) {
		t.Errorf("the export's Conv attributes %v, want %v", got, want)
	}
	_, js := roundTrips(t, "factorized", m, params, enc, batchOf(imageSet(29, 5, 3, true, 3, 12, 10), seq(5)...))
	for _, want := range []string{
		`{"op":"conv","name":"c13","in":[0],"out":4,"kernel":1,"stride":1,"bias":true,"init":"uniform","kernel_w":3,"pad_w":1}`,
		`{"op":"conv","name":"c31","in":[2],"out":6,"kernel":3,"stride":2,"init":"kaiming-normal","kernel_w":1,"stride_w":1,"pad_h":1}`,
		`{"op":"conv","name":"d2","in":[5],"out":6,"kernel":3,"stride":1,"pad":2,"bias":true,"init":"uniform","dilation":2}`,
		`"groups":3,"dilation":2}`,
		`"kernel_w":3,"pad_h":1,"dilation":3,"dilation_w":1}`,
		`{"op":"conv","name":"same","in":[9],"out":4,"kernel":3,"stride":1,"pad":1,"init":"uniform"}`,
	} {
		if !strings.Contains(string(js), want) {
			t.Errorf("spec %s lacks %s", js, want)
		}
	}
}

// TestConvAxesRefusals checks that Conv2D refuses per-axis settings out of
// range, Pad beside PadH or PadW, and a dilated kernel wider than the
// padded input, naming the layer.
func TestConvAxesRefusals(t *testing.T) {
	for _, c := range []struct {
		conv Conv
		want string
	}{
		{Conv{Out: 2, Kernel: 3, Pad: 1, PadW: 1}, "c: padding 1 and per-axis padding (0,1): set one"},
		{Conv{Out: 2, Kernel: 3, Dilation: -1}, "c: Dilation -1: want 0 to"},
		{Conv{Out: 2, Kernel: 3, KernelW: -3}, "c: KernelW -3: want 0 to"},
		{Conv{Out: 2, Kernel: 3, Dilation: 4}, "c: a 3×3 kernel (stride (1,1), padding (0,0), dilation (4,4)) does not fit the 8×8 input"},
		{Conv{Out: 2, Kernel: 1, KernelW: 9, PadH: 1}, "c: a 1×9 kernel (stride (1,1), padding (1,0), dilation (1,1)) does not fit the 8×8 input"},
	} {
		n := NewNet("refuse", []int{1, 8, 8}, 2)
		_, err := n.Model(n.Dense("fc", n.Conv2D("c", n.Input(), c.conv), 2))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error containing %q", c.conv, err, c.want)
		}
	}
}
