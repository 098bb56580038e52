package models

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// TestImportTrainable checks ImportOptions.Trainable: a Mul of an image by
// a named per-channel initialiser becomes LayerScale, by a named scalar
// Scale, an Add of a named scalar Shift and of a per-channel one
// ChannelShift, each trained from the file's values, where a pattern names
// it, and stays the constant MulConst or AddConst where none does;
// patterns that match nothing or that are malformed, and a named value
// that ONNX broadcasts otherwise than a channel, are refused in one line.
func TestImportTrainable(t *testing.T) {
	scale := []float32{0.5, -1.25, 2, 0.75}
	tinyOp := func(t *testing.T, op, name string, dims ...int) []byte {
		nodes, inits := convGemm([]onnx.Node{node(op, []string{"c", name}, "m")}, onnx.FloatTensor(name, scale[:product(dims)], dims...))
		return tinyONNX(t, 13, batchN, inits, nodes...)
	}
	tiny := func(t *testing.T, name string, dims ...int) []byte { return tinyOp(t, "Mul", name, dims...) }
	// shared reads b [1] twice: x op1 b, a convolution, then op2 b.
	shared := func(t *testing.T, op1, op2 string) []byte {
		return tinyONNX(t, 13, batchN, []onnx.Tensor{onnx.FloatTensor("b", []float32{0.5}), onnx.FloatTensor("cw", ramp(36, 0), 4, 1, 3, 3),
			onnx.Int64Tensor("axes", []int64{2, 3}, 2), onnx.FloatTensor("fw", ramp(8, 1), 2, 4), onnx.FloatTensor("fb", ramp(2, 2), 2)},
			node(op1, []string{"x", "b"}, "a"), node("Conv", []string{"a", "cw"}, "c", onnx.IntsAttr("pads", 1, 1, 1, 1)), node(op2, []string{"c", "b"}, "m"),
			node("ReduceMean", []string{"m", "axes"}, "p", onnx.IntAttr("keepdims", 0)), node("Gemm", []string{"p", "fw", "fb"}, "y", onnx.IntAttr("transB", 1)))
	}
	for _, c := range []struct {
		name      string
		file      []byte
		trainable []string
		want      []float32 // the layer scale's initial values; nil: a constant
		err       string
	}{
		{"folded name", tiny(t, "onnx::Mul_7", 4, 1, 1), []string{"onnx::Mul_7"}, scale, ""},
		{"pattern", tiny(t, "onnx::Mul_7", 1, 4, 1, 1), []string{"onnx::Mul_*"}, scale, ""},
		{"not named", tiny(t, "onnx::Mul_7", 4, 1, 1), nil, nil, ""},
		{"another name", tiny(t, "onnx::Mul_7", 4, 1, 1), []string{"gamma"}, nil, `trainable "gamma" matches no initialiser that multiplies or is added to the network's data; the file's: onnx::Mul_7`},
		{"malformed", tiny(t, "onnx::Mul_7", 4, 1, 1), []string{"[a"}, nil, `trainable "[a": want an initialiser's name or a path.Match pattern`},
		{"scalar", tiny(t, "alpha", 1), []string{"alpha"}, scale[:1], ""},
		{"scalar shift", tinyOp(t, "Add", "bias1a"), []string{"bias*"}, scale[:1], ""},
		{"shift not named", tinyOp(t, "Add", "bias1a"), nil, nil, ""},
		{"shift a channel", tinyOp(t, "Add", "bias", 4, 1, 1), []string{"bias"}, scale, ""},
		{"shift a channel, batch axis", tinyOp(t, "Add", "bias", 1, 4, 1, 1), []string{"bias"}, scale, ""},
		{"shift against the maps' width", tinyOp(t, "Add", "bias", 4), []string{"bias"}, nil, `trainable "bias" (pattern bias) has shape [4]; the import trains one value, or one a channel of the image [N,4,4,4]: [4,1,1] or [1,4,1,1]`},
		{"shared", shared(t, "Add", "Add"), []string{"b"}, []float32{0.5}, ""},
		{"shared by a Mul and an Add", shared(t, "Add", "Mul"), []string{"b"}, nil, `trainable "b" (pattern b) is read here and by node "/a/Add"; the import shares one value between a Mul and a Mul, or an Add and an Add, not a Mul and an Add`},
		{"two channels' worth", tiny(t, "gamma", 2, 1, 1), []string{"gamma"}, nil, `trainable "gamma" (pattern gamma) has shape [2 1 1]; the import trains one value, or one a channel of the image [N,4,4,4]: [4,1,1] or [1,4,1,1]`},
		{"a [C] against the maps' width", tiny(t, "gamma", 4), []string{"gamma"}, nil, `trainable "gamma" (pattern gamma) has shape [4]; the import trains one value, or one a channel of the image [N,4,4,4]: [4,1,1] or [1,4,1,1]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, x0, err := ImportONNXWith("tiny.onnx", c.file, []int{1, 4, 4}, 2, ImportOptions{Trainable: c.trainable})
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("got %v, want one line containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []float32
			off := 0
			for _, p := range m.Params() {
				if strings.HasSuffix(p.Name, ".g") || strings.HasSuffix(p.Name, ".s") || strings.HasSuffix(p.Name, ".b") && p.Name != "fw.b" {
					got = x0[off : off+p.Size()]
				}
				off += p.Size()
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("layer scale %v, want %v (params %v)", got, c.want, m.Params())
			}
		})
	}
}

// TestImportTrainableFixture imports PoolFormer with and without its layer
// scales named: named, they are 32 parameters more, and the gradient
// reaches them (TestImportONNXMatchesTorch checks it against torch's);
// unnamed, ConstantInitialisers and the summary list them.
func TestImportTrainableFixture(t *testing.T) {
	path := filepath.Join("testdata", "onnx", "poolformer_tiny.onnx")
	frozen, _, err := ImportONNXFile(path, []int{3, 16, 16}, 10)
	if err != nil {
		t.Fatal(err)
	}
	trained, _ := importFixture(t, "poolformer_tiny")
	if d := trained.NumParams() - frozen.NumParams(); d != 32 {
		t.Errorf("named layer scales add %d parameters, want 32", d)
	}
	if got, want := ConstantInitialisers(frozen), []string{"layer_scale1", "layer_scale2"}; !slices.Equal(got, want) {
		t.Errorf("constants %v, want %v", got, want)
	}
	if got := ConstantInitialisers(trained); got != nil {
		t.Errorf("constants %v once both are named", got)
	}
	var b strings.Builder
	if err := WriteSummary(&b, frozen); err != nil || !strings.Contains(b.String(), "\nconstants multiplying or added to the data, not trained: layer_scale1, layer_scale2 (--trainable names those torch trains)\n") {
		t.Errorf("summary (%v):\n%s", err, b.String())
	}
	_, _, err = ImportONNXFileWith(path, []int{3, 16, 16}, 10, ImportOptions{Trainable: []string{"layer_scale1", "ls2"}})
	if err == nil || !strings.HasSuffix(err.Error(), `trainable "ls2" matches no initialiser that multiplies or is added to the network's data; the file's: layer_scale1, layer_scale2`) {
		t.Errorf("got %v", err)
	}
}
