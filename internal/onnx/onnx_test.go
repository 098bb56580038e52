package onnx

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strings"
	"testing"
)

// field is one decoded protobuf field.
type field struct {
	num, wire int
	v         uint64 // varint or fixed32 value
	b         []byte // length-delimited payload
}

// decode splits a protobuf message into its fields, failing on malformed
// input. It is written from the wire-format specification, independently
// of enc.
func decode(t *testing.T, b []byte) []field {
	t.Helper()
	var out []field
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			t.Fatalf("bad key varint at % x", b)
		}
		b = b[n:]
		f := field{num: int(key >> 3), wire: int(key & 7)}
		switch f.wire {
		case 0:
			f.v, n = binary.Uvarint(b)
			if n <= 0 {
				t.Fatalf("field %d: bad varint", f.num)
			}
			b = b[n:]
		case 2:
			l, n := binary.Uvarint(b)
			if n <= 0 || uint64(len(b)-n) < l {
				t.Fatalf("field %d: bad length", f.num)
			}
			f.b, b = b[n:n+int(l)], b[n+int(l):]
		case 5:
			if len(b) < 4 {
				t.Fatalf("field %d: short fixed32", f.num)
			}
			f.v, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
		default:
			t.Fatalf("field %d: unexpected wire type %d", f.num, f.wire)
		}
		out = append(out, f)
	}
	return out
}

// get returns the fields numbered num.
func get(fs []field, num int) []field {
	var out []field
	for _, f := range fs {
		if f.num == num {
			out = append(out, f)
		}
	}
	return out
}

// one returns the only field numbered num.
func one(t *testing.T, fs []field, num int) field {
	t.Helper()
	g := get(fs, num)
	if len(g) != 1 {
		t.Fatalf("field %d occurs %d times, want once", num, len(g))
	}
	return g[0]
}

func unpack(t *testing.T, b []byte) []int64 {
	t.Helper()
	var out []int64
	for len(b) > 0 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			t.Fatalf("bad packed varint")
		}
		out = append(out, int64(v))
		b = b[n:]
	}
	return out
}

// tinyModel is y = Relu(Gemm(x, w, b)) for x [N,2].
func tinyModel() *Model {
	return &Model{
		Opsets:          []OpsetID{{Version: 13}},
		ProducerName:    "test",
		ProducerVersion: "v1.2.3",
		DocString:       "doc",
		Metadata:        []Property{{"k", "v"}, {"input_scale", "1/255"}},
		Graph: Graph{
			Name: "tiny",
			Nodes: []Node{
				{Name: "fc", OpType: "Gemm", Inputs: []string{"x", "w", "b"}, Outputs: []string{"z"},
					Attrs: []Attr{FloatAttr("alpha", 1), IntAttr("transB", 0)}},
				{Name: "act", OpType: "Relu", Inputs: []string{"z"}, Outputs: []string{"y"}},
			},
			Initializers: []Tensor{
				FloatTensor("w", []float32{1, -2, 3.5, 0}, 2, 2),
				FloatTensor("b", []float32{0.25, -1}, 2),
			},
			Inputs:  []ValueInfo{{Name: "x", ElemType: Float, Shape: []Dim{{Param: "N"}, {Value: 2}}}},
			Outputs: []ValueInfo{{Name: "y", ElemType: Float, Shape: []Dim{{Param: "N"}, {Value: 2}}}},
		},
	}
}

func TestMarshalStructure(t *testing.T) {
	b, err := tinyModel().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, b)
	if v := one(t, m, 1).v; v != IRVersion {
		t.Errorf("ir_version %d, want %d", v, IRVersion)
	}
	if s := string(one(t, m, 2).b); s != "test" {
		t.Errorf("producer_name %q", s)
	}
	if s := string(one(t, m, 3).b); s != "v1.2.3" {
		t.Errorf("producer_version %q, want v1.2.3", s)
	}
	if s := string(one(t, m, 6).b); s != "doc" {
		t.Errorf("doc_string %q", s)
	}
	op := decode(t, one(t, m, 8).b)
	if len(get(op, 1)) != 0 || one(t, op, 2).v != 13 {
		t.Errorf("opset_import %+v, want default domain version 13", op)
	}
	props := get(m, 14)
	if len(props) != 2 {
		t.Fatalf("%d metadata_props, want 2", len(props))
	}
	for i, want := range []Property{{"k", "v"}, {"input_scale", "1/255"}} {
		kv := decode(t, props[i].b)
		if string(one(t, kv, 1).b) != want.Key || string(one(t, kv, 2).b) != want.Value {
			t.Errorf("metadata_props[%d] decodes to %+v, want %+v", i, kv, want)
		}
	}
	g := decode(t, one(t, m, 7).b)
	if s := string(one(t, g, 2).b); s != "tiny" {
		t.Errorf("graph name %q", s)
	}
	nodes := get(g, 1)
	if len(nodes) != 2 {
		t.Fatalf("%d nodes, want 2", len(nodes))
	}
	n0 := decode(t, nodes[0].b)
	var ins []string
	for _, f := range get(n0, 1) {
		ins = append(ins, string(f.b))
	}
	if strings.Join(ins, ",") != "x,w,b" || string(one(t, n0, 2).b) != "z" ||
		string(one(t, n0, 3).b) != "fc" || string(one(t, n0, 4).b) != "Gemm" {
		t.Errorf("node 0 decodes to %+v", n0)
	}
	attrs := get(n0, 5)
	if len(attrs) != 2 {
		t.Fatalf("%d attributes, want 2", len(attrs))
	}
	alpha := decode(t, attrs[0].b)
	if string(one(t, alpha, 1).b) != "alpha" || one(t, alpha, 2).wire != 5 ||
		math.Float32frombits(uint32(one(t, alpha, 2).v)) != 1 || one(t, alpha, 20).v != uint64(AttrFloat) {
		t.Errorf("alpha decodes to %+v", alpha)
	}
	tb := decode(t, attrs[1].b)
	if string(one(t, tb, 1).b) != "transB" || one(t, tb, 3).v != 0 || one(t, tb, 20).v != uint64(AttrInt) {
		t.Errorf("transB decodes to %+v", tb)
	}
	inits := get(g, 5)
	if len(inits) != 2 {
		t.Fatalf("%d initializers, want 2", len(inits))
	}
	w := decode(t, inits[0].b)
	if d := unpack(t, one(t, w, 1).b); len(d) != 2 || d[0] != 2 || d[1] != 2 {
		t.Errorf("w dims %v", d)
	}
	if one(t, w, 2).v != uint64(Float) || string(one(t, w, 8).b) != "w" {
		t.Errorf("w decodes to %+v", w)
	}
	raw := one(t, w, 9).b
	want := []float32{1, -2, 3.5, 0}
	if len(raw) != 16 {
		t.Fatalf("raw_data has %d bytes, want 16", len(raw))
	}
	for i, x := range want {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])); got != x {
			t.Errorf("w[%d] = %v, want %v", i, got, x)
		}
	}
	if len(get(g, 11)) != 1 || len(get(g, 12)) != 1 {
		t.Errorf("graph has %d inputs and %d outputs, want 1 and 1", len(get(g, 11)), len(get(g, 12)))
	}
}

// TestValueInfoBytes pins the encoding of a ValueInfoProto byte for byte,
// worked out by hand from onnx.proto3.
func TestValueInfoBytes(t *testing.T) {
	v := ValueInfo{Name: "x", ElemType: Float, Shape: []Dim{{Param: "N"}, {Value: 3}}}
	var e enc
	v.encode(&e)
	want, _ := hex.DecodeString("0a0178" + "120f" + "0a0d" + "0801" + "1209" + "0a03" + "12014e" + "0a02" + "0803")
	if !bytes.Equal(e.b, want) {
		t.Errorf("ValueInfo encodes to % x\nwant               % x", e.b, want)
	}
}

func TestNegativeInt(t *testing.T) {
	a := IntAttr("axis", -1)
	var e enc
	a.encode(&e)
	fs := decode(t, e.b)
	if v := int64(one(t, fs, 3).v); v != -1 {
		t.Errorf("axis decodes to %d, want -1", v)
	}
	ints := IntsAttr("pads", 0, 7, -2)
	e = enc{}
	ints.encode(&e)
	fs = decode(t, e.b)
	if got := unpack(t, one(t, fs, 8).b); len(got) != 3 || got[0] != 0 || got[1] != 7 || got[2] != -2 {
		t.Errorf("pads decode to %v", got)
	}
	if one(t, fs, 20).v != uint64(AttrInts) {
		t.Errorf("type %d, want INTS", one(t, fs, 20).v)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(m *Model)
		want string
	}{
		{"no opset", func(m *Model) { m.Opsets = nil }, "no opset"},
		{"undefined input", func(m *Model) { m.Graph.Nodes[1].Inputs[0] = "q" }, `reads "q"`},
		{"use before definition", func(m *Model) {
			m.Graph.Nodes[0], m.Graph.Nodes[1] = m.Graph.Nodes[1], m.Graph.Nodes[0]
		}, `reads "z"`},
		{"duplicate", func(m *Model) { m.Graph.Nodes[1].Outputs[0] = "z" }, `"z" is defined by`},
		{"initializer shadows input", func(m *Model) { m.Graph.Initializers[0].Name = "x" }, `"x" is defined by`},
		{"short tensor", func(m *Model) { m.Graph.Initializers[1].Floats = []float32{1} }, "holds 1 values, want 2"},
		{"undefined output", func(m *Model) { m.Graph.Outputs[0].Name = "out" }, `output "out" is not defined`},
		{"no nodes", func(m *Model) { m.Graph.Nodes = nil }, "no nodes"},
		{"bad attr", func(m *Model) { m.Graph.Nodes[0].Attrs[0].Type = 99 }, "unsupported type"},
		{"duplicate metadata key", func(m *Model) { m.Metadata = append(m.Metadata, Property{"k", "w"}) }, `metadata key "k" occurs twice`},
		{"empty metadata key", func(m *Model) { m.Metadata[0].Key = "" }, "empty key"},
	}
	for _, c := range cases {
		m := tinyModel()
		c.edit(m)
		_, err := m.Marshal()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestWriteTo(t *testing.T) {
	var buf bytes.Buffer
	n, err := tinyModel().WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := tinyModel().Marshal()
	if n != int64(len(b)) || !bytes.Equal(buf.Bytes(), b) {
		t.Errorf("WriteTo wrote %d bytes, Marshal gives %d", n, len(b))
	}
}
