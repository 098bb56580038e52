package models

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// TestImportONNXAutoPadSame imports Convs with auto_pad SAME_UPPER and
// SAME_LOWER, on inputs whose padding splits unevenly, and requires the
// network of the same Conv with the pads ONNX defines for them
// ([top,left,bottom,right], worked out by hand below) written explicitly:
// the same spec and the same logits, bit for bit; and, where onnxruntime
// runs, its logits on the auto_pad file (but for the dilated one, which
// onnxruntime refuses).
func TestImportONNXAutoPadSame(t *testing.T) {
	for _, c := range []struct {
		name           string
		h, w, kh, kw   int
		attrs          []onnx.Attr // strides, dilations
		pre            []int64     // the pads of a Pad before the Conv, or nil
		auto           string
		pads           []int64 // the explicit equivalent, a Pad before it included
		oh, ow         int
		extraB, extraR int // the Conv's ExtraBottom and ExtraRight
	}{
		// ⌈8/2⌉ = 4 outputs: (4−1)·2 + 3 − 8 = 1 row of zeros, at the end (UPPER) or the start (LOWER).
		{"upper 3×3 stride 2", 8, 8, 3, 3, []onnx.Attr{onnx.IntsAttr("strides", 2, 2)}, nil, "SAME_UPPER", []int64{0, 0, 1, 1}, 4, 4, 1, 1},
		{"lower 3×3 stride 2", 8, 8, 3, 3, []onnx.Attr{onnx.IntsAttr("strides", 2, 2)}, nil, "SAME_LOWER", []int64{1, 1, 0, 0}, 4, 4, -1, -1},
		// Stride 1: k − 1 zeros, 3 rows (1 + 2, or 2 + 1) and 1 column.
		{"upper 4×2", 5, 6, 4, 2, nil, nil, "SAME_UPPER", []int64{1, 0, 2, 1}, 5, 6, 1, 1},
		{"lower 4×2", 5, 6, 4, 2, nil, nil, "SAME_LOWER", []int64{2, 1, 1, 0}, 5, 6, -1, -1},
		// Dilation (2,1), stride (2,1): rows span 5, (4−1)·2 + 5 − 8 = 3 → [1,2]; columns 2 → [1,1].
		{"upper dilated", 8, 6, 3, 3, []onnx.Attr{onnx.IntsAttr("strides", 2, 1), onnx.IntsAttr("dilations", 2, 1)}, nil, "SAME_UPPER", []int64{1, 1, 2, 1}, 4, 6, 1, 0},
		// No padding: a 1×1 or a 2×2 kernel at stride 3 on 9 needs none.
		{"upper none", 9, 9, 2, 2, []onnx.Attr{onnx.IntsAttr("strides", 3, 3)}, nil, "SAME_UPPER", []int64{0, 0, 0, 0}, 3, 3, 0, 0},
		// After a Pad of the top: the Conv's input is 8×8, so [0,0,1,1] of its own, [1,0,1,1] in all.
		{"after a Pad", 7, 8, 3, 3, []onnx.Attr{onnx.IntsAttr("strides", 2, 2)}, []int64{0, 0, 1, 0, 0, 0, 0, 0}, "SAME_UPPER", []int64{1, 0, 1, 1}, 4, 4, 0, 1},
		// VALID is no padding, as before.
		{"valid", 6, 6, 3, 3, nil, nil, "VALID", []int64{0, 0, 0, 0}, 4, 4, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			const oc = 2
			in := []onnx.Dim{{Param: "N"}, {Value: 1}, {Value: int64(c.h)}, {Value: int64(c.w)}}
			graph := func(pre []int64, attrs ...onnx.Attr) []byte {
				inits := []onnx.Tensor{onnx.FloatTensor("k", ramp(oc*c.kh*c.kw, 0.3), oc, 1, c.kh, c.kw),
					onnx.FloatTensor("fw", ramp(oc*c.oh*c.ow*2, 1), oc*c.oh*c.ow, 2)}
				x := "x"
				var nodes []onnx.Node
				if pre != nil {
					inits = append(inits, onnx.Int64Tensor("pp", pre, 8))
					nodes, x = append(nodes, node("Pad", []string{"x", "pp"}, "p")), "p"
				}
				nodes = append(nodes, node("Conv", []string{x, "k"}, "c", append(slices.Clone(c.attrs), attrs...)...),
					node("Relu", []string{"c"}, "r"), node("Flatten", []string{"r"}, "f"), node("MatMul", []string{"f", "fw"}, "y"))
				return tinyONNX(t, 13, in, inits, nodes...)
			}
			enc := graph(c.pre, onnx.StringAttr("auto_pad", c.auto))
			m, x0, err := ImportONNX("auto", enc, []int{1, c.h, c.w}, 2)
			if err != nil {
				t.Fatal(err)
			}
			want, p, err := ImportONNX("auto", graph(nil, onnx.IntsAttr("pads", c.pads...)), []int{1, c.h, c.w}, 2)
			if err != nil {
				t.Fatal(err)
			}
			s1, err1 := Spec(m)
			s2, err2 := Spec(want)
			if err1 != nil || err2 != nil || !reflect.DeepEqual(s1, s2) {
				t.Fatalf("spec %+v (%v), explicit pads' %+v (%v)", s1, err1, s2, err2)
			}
			if l := s1.Layers[0]; l.Op != "conv" || l.ExtraBottom != c.extraB || l.ExtraRight != c.extraR {
				t.Errorf("conv %+v, want ExtraBottom %d and ExtraRight %d", l, c.extraB, c.extraR)
			}
			b := batchOf(imageSet(5, 3, 2, true, 1, c.h, c.w), seq(3)...)
			z1, err1 := Logits(m, x0, b)
			z2, err2 := Logits(want, p, b)
			if err1 != nil || err2 != nil || !slices.Equal(z1, z2) {
				t.Fatalf("logits %v (%v), explicit pads' %v (%v)", z1, err1, z2, err2)
			}
			if testing.Short() || c.name == "upper dilated" { // onnxruntime 1.30: "Dilation not supported for AutoPadType::SAME_UPPER"
				return
			}
			node, modules := onnxRuntime(t)
			checkRuntime(t, "auto_pad "+c.auto, node, modules, enc, m, x0, b)
		})
	}
}

// TestImportONNXAutoPadRefusals checks the padding the import still
// refuses, each in one line naming the node.
func TestImportONNXAutoPadRefusals(t *testing.T) {
	in := []onnx.Dim{{Param: "N"}, {Value: 1}, {Value: 6}, {Value: 6}}
	inits := []onnx.Tensor{onnx.FloatTensor("k", ramp(18, 0), 2, 1, 3, 3), onnx.FloatTensor("fw", ramp(36, 1), 18, 2)}
	conv := func(x string, attrs ...onnx.Attr) []onnx.Node {
		return []onnx.Node{node("Conv", []string{x, "k"}, "c", append([]onnx.Attr{onnx.IntsAttr("strides", 2, 2)}, attrs...)...),
			node("Flatten", []string{"c"}, "f"), node("MatMul", []string{"f", "fw"}, "y")}
	}
	padded := func(pads []int64, value float32, then ...onnx.Node) ([]onnx.Tensor, []onnx.Node) {
		ii := append(slices.Clone(inits), onnx.Int64Tensor("pp", pads, 8), onnx.FloatTensor("v", []float32{value}))
		return ii, append([]onnx.Node{node("Pad", []string{"x", "pp", "v"}, "p")}, then...)
	}
	crop, cropNodes := padded([]int64{0, 0, 0, 1, 0, 0, -1, 0}, 0, conv("p")...)
	ones, onesNodes := padded([]int64{0, 0, 0, 0, 0, 0, 1, 1}, 1, conv("p")...)
	pool, poolNodes := padded([]int64{0, 0, 0, 0, 0, 0, 1, 1}, 0, node("AveragePool", []string{"p"}, "c", onnx.IntsAttr("kernel_shape", 2, 2), onnx.IntsAttr("strides", 2, 2)),
		node("Flatten", []string{"c"}, "f"), node("MatMul", []string{"f", "fw"}, "y"))
	for _, c := range []struct {
		name  string
		inits []onnx.Tensor
		nodes []onnx.Node
		want  string
	}{
		{"auto_pad beside pads", inits, conv("x", onnx.StringAttr("auto_pad", "SAME_UPPER"), onnx.IntsAttr("pads", 0, 0, 1, 1)),
			`node "/c/Conv" (Conv): auto_pad SAME_UPPER with pads [0 0 1 1]: set one`},
		{"auto_pad SAME", inits, conv("x", onnx.StringAttr("auto_pad", "SAME")), `node "/c/Conv" (Conv): auto_pad SAME is not supported`},
		{"negative pads", inits, conv("x", onnx.IntsAttr("pads", 0, 0, -1, 1)), "pads [0 0 -1 1] out of range (want 0 to"},
		{"a Pad that crops", crop, cropNodes, `node "/p/Pad" (Pad): pads [0 0 0 1 0 0 -1 0]: want 0 to`},
		{"a Pad of ones", ones, onesNodes, `node "/p/Pad" (Pad): pads with a value other than 0`},
		{"an unequal Pad before a pool", pool, poolNodes, `node "/c/AveragePool" (AveragePool): pools after a zero Pad of [0 0 1 1] (top, left, bottom, right)`},
	} {
		_, _, err := ImportONNX("refuse", tinyONNX(t, 13, in, c.inits, c.nodes...), []int{1, 6, 6}, 2)
		if err == nil || !containsLine(err.Error(), c.want) {
			t.Errorf("%s: %v, want one line containing %q", c.name, err, c.want)
		}
	}
}

// containsLine reports whether msg is one line containing want.
func containsLine(msg, want string) bool {
	return !strings.Contains(msg, "\n") && strings.Contains(msg, want)
}

// TestImportONNXSamePadFixture checks that torch's Pad-then-Conv spellings
// of same_pad.onnx become Convs padded unequally (nn.ZeroPad2d((0,1,0,1))
// before a stride-2 conv: pads [0,0,1,1]; F.pad(h, (1,2,1,2)): [1,1,2,2];
// nn.ZeroPad2d((2,1,1,0)): [1,2,0,1]), that gtstorm's export writes those
// pads on the Conv, and that it imports again as the same network with
// the same logits.
func TestImportONNXSamePadFixture(t *testing.T) {
	m, x0 := importFixture(t, "same_pad")
	spec, err := Spec(m)
	if err != nil {
		t.Fatal(err)
	}
	type pads struct{ top, left, bottom, right, stride int }
	var got []pads
	for _, l := range spec.Layers {
		if l.Op == "conv" {
			top, left := l.Pad, l.Pad
			if l.PadH != 0 || l.PadW != 0 {
				top, left = l.PadH, l.PadW
			}
			got = append(got, pads{top, left, top + l.ExtraBottom, left + l.ExtraRight, l.Stride})
		}
	}
	if want := []pads{{0, 0, 1, 1, 2}, {1, 1, 2, 2, 1}, {1, 2, 0, 1, 2}}; !slices.Equal(got, want) {
		t.Fatalf("convs padded %v, want %v", got, want)
	}
	om, enc := marshalONNX(t, m, x0)
	var written [][]int64
	for _, n := range om.Graph.Nodes {
		if n.OpType == "Conv" {
			written = append(written, attr(&n, "pads").Ints)
		}
	}
	if fmt.Sprint(written) != "[[0 0 1 1] [1 1 2 2] [1 2 0 1]]" {
		t.Errorf("export writes pads %v", written)
	}
	r, rx, err := ImportONNX("same_pad", enc, []int{1, 28, 28}, 10)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := Spec(r)
	unnamed := func(ls []LayerSpec) []LayerSpec {
		ls = slices.Clone(ls)
		for i := range ls {
			ls[i].Name = "" // the export names the parameters name.w
		}
		return ls
	}
	if err != nil || !reflect.DeepEqual(unnamed(rs.Layers), unnamed(spec.Layers)) {
		t.Fatalf("export imports as %+v (%v), want %+v", rs.Layers, err, spec.Layers)
	}
	b := batchOf(imageSet(4, 5, 10, true, 1, 28, 28), seq(5)...)
	z1, err1 := Logits(m, x0, b)
	z2, err2 := Logits(r, rx, b)
	if err1 != nil || err2 != nil || !slices.Equal(z1, z2) {
		t.Errorf("logits of the re-imported export differ (%v, %v)", err1, err2)
	}
}

// TestImportONNXAutoPadSameOnPoint imports a 1×1 Conv with auto_pad
// SAME_UPPER on a global pool's output (a squeeze-and-excitation layer as
// tf2onnx writes Keras's Conv2D(padding="same")): no padding, the dense
// layer of the Conv without auto_pad, bit for bit; a 3×3 kernel there is
// still refused.
func TestImportONNXAutoPadSameOnPoint(t *testing.T) {
	in := []onnx.Dim{{Param: "N"}, {Value: 3}, {Value: 4}, {Value: 4}}
	inits := []onnx.Tensor{onnx.FloatTensor("k", ramp(6, 0.5), 2, 3, 1, 1), onnx.FloatTensor("k3", ramp(54, 0.5), 2, 3, 3, 3)}
	graph := func(k string, attrs ...onnx.Attr) []byte {
		return tinyONNX(t, 13, in, inits, node("GlobalAveragePool", []string{"x"}, "g"),
			node("Conv", []string{"g", k}, "c", attrs...), node("Flatten", []string{"c"}, "y"))
	}
	m, x0, err := ImportONNX("point", graph("k", onnx.StringAttr("auto_pad", "SAME_UPPER")), []int{3, 4, 4}, 2)
	if err != nil {
		t.Fatal(err)
	}
	want, p, err := ImportONNX("point", graph("k"), []int{3, 4, 4}, 2)
	if err != nil {
		t.Fatal(err)
	}
	b := batchOf(imageSet(6, 3, 2, true, 3, 4, 4), seq(3)...)
	z1, err1 := Logits(m, x0, b)
	z2, err2 := Logits(want, p, b)
	if err1 != nil || err2 != nil || !slices.Equal(z1, z2) {
		t.Errorf("logits %v (%v), without auto_pad %v (%v)", z1, err1, z2, err2)
	}
	_, _, err = ImportONNX("point", graph("k3", onnx.StringAttr("auto_pad", "SAME_LOWER")), []int{3, 4, 4}, 2)
	if err == nil || !containsLine(err.Error(), "a 3×3 kernel with padding 0 on [N,3,1,1], a global pool's output") {
		t.Errorf("a 3×3 kernel on a point: %v", err)
	}
}
