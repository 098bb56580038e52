package models

import (
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// TestImportPoolTrailingPads checks TensorFlow's "SAME" pools as tf2onnx
// writes them — pads [0,0,1,1] or auto_pad SAME_UPPER — which import as
// ceil-mode pools of the same windows: the layers, and the logits of
// onnxruntime where it is installed; and the one-line refusals of the
// unequal pads ceil mode does not give.
func TestImportPoolTrailingPads(t *testing.T) {
	in := func(side int) []onnx.Dim {
		return []onnx.Dim{{Param: "N"}, {Value: 1}, {Value: int64(side)}, {Value: int64(side)}}
	}
	k := onnx.FloatTensor("k", ramp(18, 1), 2, 1, 3, 3)
	pool := func(op string, attrs ...onnx.Attr) []onnx.Node {
		return []onnx.Node{node("Conv", []string{"x", "k"}, "c", onnx.IntsAttr("pads", 1, 1, 1, 1)),
			node(op, []string{"c"}, "p", attrs...), node("Flatten", []string{"p"}, "y")}
	}
	ks, s2 := onnx.IntsAttr("kernel_shape", 3, 3), onnx.IntsAttr("strides", 2, 2)
	for _, c := range []struct {
		name  string
		side  int
		nodes []onnx.Node
		want  string // the pool's spec, or the refusal
	}{
		{"max, pads [0,0,1,1]", 8, pool("MaxPool", ks, s2, onnx.IntsAttr("pads", 0, 0, 1, 1)), `"op":"maxpool","in":[1],"kernel":3,"stride":2,"ceil":true`},
		{"max, SAME_UPPER", 8, pool("MaxPool", ks, s2, onnx.StringAttr("auto_pad", "SAME_UPPER")), `"op":"maxpool","in":[1],"kernel":3,"stride":2,"ceil":true`},
		{"average 2×2, SAME_UPPER on 7×7", 7, pool("AveragePool", onnx.IntsAttr("kernel_shape", 2, 2), onnx.IntsAttr("strides", 2, 2), onnx.StringAttr("auto_pad", "SAME_UPPER")),
			`"op":"avgpool","in":[1],"kernel":2,"stride":2,"ceil":true`},
		{"max, SAME_UPPER with equal pads", 7, pool("MaxPool", ks, s2, onnx.StringAttr("auto_pad", "SAME_UPPER")), `"op":"maxpool","in":[1],"kernel":3,"stride":2,"pad":1}`},
		{"max, pads [1,1,2,2]", 7, pool("MaxPool", ks, s2, onnx.IntsAttr("pads", 1, 1, 2, 2)), `"op":"maxpool","in":[1],"kernel":3,"stride":2,"pad":1,"ceil":true`},
		{"max, SAME_LOWER", 8, pool("MaxPool", ks, s2, onnx.StringAttr("auto_pad", "SAME_LOWER")), "pad the bottom and right more only as ceil mode does"},
		{"max, pads [1,1,0,0]", 8, pool("MaxPool", ks, s2, onnx.IntsAttr("pads", 1, 1, 0, 0)), "pads [1 1 0 0]"},
		{"max, pads [0,0,1,1] in ceil mode", 8, pool("MaxPool", ks, s2, onnx.IntsAttr("pads", 0, 0, 1, 1), onnx.IntAttr("ceil_mode", 1)), "pads [0 0 1 1]"},
		{"max, pads [0,0,3,3]: one more window", 8, pool("MaxPool", ks, s2, onnx.IntsAttr("pads", 0, 0, 3, 3)), "pads [0 0 3 3]"},
		{"average, pads [0,0,1,1] counting the pad", 8, pool("AveragePool", ks, s2, onnx.IntsAttr("pads", 0, 0, 1, 1), onnx.IntAttr("count_include_pad", 1)), "count_include_pad 1"},
		{"max, SAME_UPPER beside pads", 8, pool("MaxPool", ks, s2, onnx.StringAttr("auto_pad", "SAME_UPPER"), onnx.IntsAttr("pads", 0, 0, 1, 1)), "set one"},
	} {
		t.Run(c.name, func(t *testing.T) {
			enc := tinyONNX(t, 13, in(c.side), []onnx.Tensor{k}, c.nodes...)
			out := (c.side + 1) / 2 // SAME's ⌈side/stride⌉, and the ceil mode's
			m, x0, err := ImportONNX("pool", enc, []int{1, c.side, c.side}, 2*out*out)
			if !strings.HasPrefix(c.want, `"op"`) {
				if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("%v, want one line naming %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, js := specJSON(t, m); !strings.Contains(string(js), c.want) {
				t.Fatalf("spec %s, want a layer %s", js, c.want)
			}
			if testing.Short() {
				return
			}
			node, modules := onnxRuntime(t)
			checkRuntime(t, "the tf2onnx pool", node, modules, enc, m, x0, batchOf(imageSet(5, 4, 2*out*out, true, 1, c.side, c.side), seq(4)...))
		})
	}
}
