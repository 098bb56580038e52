package models

import (
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// TestImportWholeMapMaxPool checks how a MaxPool whose window is the whole
// map imports: as a pool where the Net's pools take the window, so that a
// convolution may read its 1×1 output (SqueezeNet's last pool on a small
// input, then a padded 3×3 convolution), and as GlobalMaxPool beyond
// (nn.AdaptiveMaxPool2d(1) of a 20×20 map); GlobalMaxPool and ReduceMax
// over the maps as GlobalMaxPool; ReduceMax over other axes refused.
func TestImportWholeMapMaxPool(t *testing.T) {
	in := func(side int) []onnx.Dim {
		return []onnx.Dim{{Param: "N"}, {Value: 1}, {Value: int64(side)}, {Value: int64(side)}}
	}
	k := onnx.FloatTensor("k", ramp(18, 1), 2, 1, 3, 3)
	k2 := onnx.FloatTensor("k2", ramp(36, 2), 2, 2, 3, 3)
	for _, c := range []struct {
		name  string
		side  int
		nodes []onnx.Node
		ops   string // the imported layers, or the refusal
	}{
		{"pool of the whole 3×3 map, then a padded conv", 5, []onnx.Node{
			node("Conv", []string{"x", "k"}, "c"),
			node("MaxPool", []string{"c"}, "p", onnx.IntsAttr("kernel_shape", 3, 3), onnx.IntsAttr("strides", 2, 2), onnx.IntAttr("ceil_mode", 1)),
			node("Conv", []string{"p", "k2"}, "c2", onnx.IntsAttr("pads", 1, 1, 1, 1)), node("Flatten", []string{"c2"}, "y")},
			"conv maxpool conv flatten"},
		{"pool of a whole 20×20 map", 22, []onnx.Node{
			node("Conv", []string{"x", "k"}, "c"),
			node("MaxPool", []string{"c"}, "p", onnx.IntsAttr("kernel_shape", 20, 20)), node("Flatten", []string{"p"}, "y")},
			"conv globalmaxpool"},
		{"GlobalMaxPool", 5, []onnx.Node{node("Conv", []string{"x", "k"}, "c"),
			node("GlobalMaxPool", []string{"c"}, "p"), node("Flatten", []string{"p"}, "y")}, "conv globalmaxpool"},
		{"ReduceMax over the maps", 5, []onnx.Node{node("Conv", []string{"x", "k"}, "c"),
			node("ReduceMax", []string{"c"}, "y", onnx.IntsAttr("axes", -1, -2), onnx.IntAttr("keepdims", 0))}, "conv globalmaxpool"},
		{"ReduceMax over the channels", 5, []onnx.Node{node("Conv", []string{"x", "k"}, "c"),
			node("ReduceMax", []string{"c"}, "r", onnx.IntsAttr("axes", 1)), node("Flatten", []string{"r"}, "y")},
			"the import takes ReduceMax of images over the maps"},
	} {
		t.Run(c.name, func(t *testing.T) {
			inits := []onnx.Tensor{k, k2}
			m, _, err := ImportONNX("mp", tinyONNX(t, 13, in(c.side), inits, c.nodes...), []int{1, c.side, c.side}, 2)
			if !strings.HasPrefix(c.ops, "conv ") {
				if err == nil || !strings.Contains(err.Error(), c.ops) {
					t.Fatalf("%v, want a refusal naming %q", err, c.ops)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := specOps(t, m); got != c.ops {
				t.Errorf("layers %s, want %s", got, c.ops)
			}
		})
	}
}
