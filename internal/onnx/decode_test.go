package onnx

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// smallModel is a model of every field the decoder reads: two opsets,
// metadata, a Conv and a Gemm with int, ints, float, floats and string
// attributes, float and int64 initialisers, an input of a symbolic batch.
func smallModel() *Model {
	return &Model{
		Opsets:       []OpsetID{{Version: 13}, {Domain: "ai.onnx.ml", Version: 3}},
		ProducerName: "test", DocString: "doc",
		Metadata: []Property{{Key: "k", Value: "v"}},
		Graph: Graph{
			Name: "g",
			Nodes: []Node{
				{Name: "conv", OpType: "Conv", Inputs: []string{"x", "w"}, Outputs: []string{"y"},
					Attrs: []Attr{IntsAttr("pads", 1, 1, 1, 1), IntAttr("group", 1), FloatAttr("alpha", 0.5),
						FloatsAttr("scales", 1.5, -2), StringAttr("auto_pad", "NOTSET")}},
				{Name: "flat", OpType: "Reshape", Inputs: []string{"y", "shape"}, Outputs: []string{"z"}},
			},
			Initializers: []Tensor{
				FloatTensor("w", []float32{1, -2, 3.5, 4}, 1, 1, 2, 2),
				Int64Tensor("shape", []int64{0, -1}, 2),
			},
			Inputs:  []ValueInfo{{Name: "x", ElemType: Float, Shape: []Dim{{Param: "N"}, {Value: 1}, {Value: 3}, {Value: 3}}}},
			Outputs: []ValueInfo{{Name: "z", ElemType: Float, Shape: []Dim{{Param: "N"}, {Value: 4}}}},
		},
	}
}

// TestUnmarshalRoundTrip decodes what Marshal writes back to the model.
func TestUnmarshalRoundTrip(t *testing.T) {
	m := smallModel()
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	want := *m
	want.IRVersion = IRVersion
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("decoded\n%+v\nwant\n%+v", got, &want)
	}
	if got.Opset("") != 13 || got.Opset("ai.onnx") != 13 || got.Opset("ai.onnx.ml") != 3 || got.Opset("x") != 0 {
		t.Errorf("opsets %v", got.Opsets)
	}
}

// TestUnmarshalTruncated cuts a small model at every byte: each prefix is
// one error, never a panic.
func TestUnmarshalTruncated(t *testing.T) {
	m := smallModel()
	m.Metadata = nil // the opset import is then the last field: no prefix is a whole model
	m.Opsets = m.Opsets[:1]
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for i := range len(b) {
		_, err := Unmarshal(b[:i])
		if err == nil {
			t.Fatalf("the first %d of %d bytes decode without an error", i, len(b))
		}
		if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "onnx: ") {
			t.Fatalf("cut at %d: %q, want one line starting onnx:", i, err)
		}
	}
}

// TestUnmarshalCorrupt flips, sets and drops bytes of a small model at
// random: the decoder returns (a model or an error) and never panics.
func TestUnmarshalCorrupt(t *testing.T) {
	b, err := smallModel().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	errs := 0
	for range 5000 {
		c := append([]byte(nil), b...)
		for range 1 + rng.IntN(3) {
			i := rng.IntN(len(c))
			switch rng.IntN(3) {
			case 0:
				c[i] ^= 1 << rng.IntN(8)
			case 1:
				c[i] = byte(rng.IntN(256))
			default:
				c = append(c[:i], c[i+1:]...)
			}
		}
		if _, err := Unmarshal(c); err != nil {
			errs++
		}
	}
	t.Logf("%d of 5000 corrupted models refused", errs)
}

// TestUnmarshalRefusals checks hand-written encodings the encoder cannot
// produce: each is one error naming the problem.
func TestUnmarshalRefusals(t *testing.T) {
	tensor := func(fields ...func(e *enc)) []byte {
		g := enc{}
		g.msg(1, func(e *enc) { e.str(4, "Relu"); e.bytes(1, []byte("x")); e.bytes(2, []byte("y")) })
		g.msg(5, func(e *enc) {
			for _, f := range fields {
				f(e)
			}
		})
		g.msg(12, func(e *enc) { e.str(1, "y") })
		var m enc
		m.msg(7, func(e *enc) { e.b = append(e.b, g.b...) })
		m.msg(8, func(e *enc) { e.varint(2, 13) })
		return m.b
	}
	name := func(e *enc) { e.str(8, "t") }
	dims := func(d ...int64) func(e *enc) { return func(e *enc) { e.packed(1, d) } }
	typ := func(dt DataType) func(e *enc) { return func(e *enc) { e.varint(2, uint64(dt)) } }
	for _, c := range []struct {
		what string
		b    []byte
		want string
	}{
		{"not protobuf", []byte("hello, world"), "onnx:"},
		{"empty", nil, "no graph"},
		{"external data", tensor(name, dims(2), typ(Float), func(e *enc) { e.varint(14, 1) }), "external data"},
		{"short raw data", tensor(name, dims(2), typ(Float), func(e *enc) { e.bytes(9, make([]byte, 7)) }), "7 bytes of raw data for 2 values"},
		{"float_data count", tensor(name, dims(3), typ(Float), func(e *enc) { e.bytes(4, make([]byte, 8)) }), "2 values for shape [3]"},
		{"string tensor", tensor(name, dims(1), typ(8)), "data type 8"},
		{"negative dim", tensor(name, dims(2, -5), typ(Float)), "bad dimensions"},
		{"wire type", tensor(func(e *enc) { e.varint(8, 3) }), "wire type 0, want 2"},
	} {
		_, err := Unmarshal(c.b)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.what, err, c.want)
		}
	}
}

// TestUnmarshalTorchExport decodes a file PyTorch wrote (models'
// fixtures): its initialisers in raw_data, Constant nodes with tensor
// attributes, its input's symbolic batch.
func TestUnmarshalTorchExport(t *testing.T) {
	m, err := ReadFile(filepath.Join("..", "..", "models", "testdata", "onnx", "mlp_dropout.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Opset("") != 13 || m.ProducerName != "pytorch" {
		t.Errorf("opset %d, producer %q", m.Opset(""), m.ProducerName)
	}
	in := m.Graph.Inputs[0]
	if in.Name != "input" || len(in.Shape) != 4 || in.Shape[0].Param != "N" || in.Shape[2].Value != 28 {
		t.Errorf("input %+v", in)
	}
	var fc1 *Tensor
	for i, init := range m.Graph.Initializers {
		if init.Name == "fc1.weight" {
			fc1 = &m.Graph.Initializers[i]
		}
	}
	if fc1 == nil || !reflect.DeepEqual(fc1.Dims, []int64{32, 784}) || len(fc1.Floats) != 32*784 {
		t.Fatalf("fc1.weight: %+v", fc1)
	}
	consts := 0
	for _, n := range m.Graph.Nodes {
		if n.OpType == "Constant" && len(n.Attrs) == 1 && n.Attrs[0].Type == AttrTensor && n.Attrs[0].T != nil {
			consts++
		}
	}
	if consts == 0 {
		t.Error("no Constant node with a tensor value")
	}
	dir := t.TempDir()
	if _, err := ReadFile(dir); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("reading a directory: %v", err)
	}
	trunc := filepath.Join(dir, "cut.onnx")
	b, _ := os.ReadFile(filepath.Join("..", "..", "models", "testdata", "onnx", "mlp_dropout.onnx"))
	os.WriteFile(trunc, b[:len(b)/2], 0o644)
	if _, err := ReadFile(trunc); err == nil || !strings.Contains(err.Error(), "cut.onnx") {
		t.Errorf("reading a truncated file: %v", err)
	}
}

// TestUnmarshalGraphAttribute decodes the branches of the Ifs torch
// writes around a Squeeze (models' lrn_cnn fixture): each branch a graph
// with its nodes and outputs.
func TestUnmarshalGraphAttribute(t *testing.T) {
	m, err := ReadFile(filepath.Join("..", "..", "models", "testdata", "onnx", "lrn_cnn.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	ifs := 0
	for _, n := range m.Graph.Nodes {
		if n.OpType != "If" {
			continue
		}
		ifs++
		for _, a := range n.Attrs {
			if a.Type != AttrGraph || a.G == nil || len(a.G.Nodes) == 0 || len(a.G.Outputs) != 1 {
				t.Errorf("If %s: attribute %s of type %d, graph %+v; want a branch of nodes and one output", n.Name, a.Name, a.Type, a.G)
			}
		}
		if len(n.Attrs) != 2 {
			t.Errorf("If %s: %d attributes, want its two branches", n.Name, len(n.Attrs))
		}
	}
	if ifs != 2 {
		t.Errorf("%d Ifs, want 2 (one a local response normalisation)", ifs)
	}
}
