// Package onnx writes ONNX models: the protobuf wire encoding of the few
// messages of onnx.proto3 a feed-forward network needs (ModelProto,
// GraphProto, NodeProto, AttributeProto, TensorProto, ValueInfoProto,
// TypeProto, TensorShapeProto, OperatorSetIdProto, StringStringEntryProto),
// written by hand so that gtstorm depends on no protobuf library.
//
// The package knows no operators: a caller describes its graph as nodes
// of the standard opset, with initialisers for the weights, and Marshal
// checks that the graph is well formed (every input defined before use,
// every name produced once, tensor data matching its shape) and encodes
// it. Field numbers are those of onnx.proto3 (the same as onnx.proto):
//
//	ModelProto          ir_version 1, producer_name 2, producer_version 3,
//	                    domain 4, model_version 5, doc_string 6, graph 7,
//	                    opset_import 8, metadata_props 14
//	OperatorSetIdProto  domain 1, version 2
//	StringStringEntry   key 1, value 2
//	GraphProto          node 1, name 2, initializer 5, doc_string 10,
//	                    input 11, output 12
//	NodeProto           input 1, output 2, name 3, op_type 4, attribute 5,
//	                    doc_string 6, domain 7
//	AttributeProto      name 1, f 2, i 3, s 4, floats 7, ints 8,
//	                    doc_string 13, type 20
//	TensorProto         dims 1, data_type 2, name 8, raw_data 9, doc_string 12
//	ValueInfoProto      name 1, type 2, doc_string 3
//	TypeProto           tensor_type 1; TypeProto.Tensor: elem_type 1, shape 2
//	TensorShapeProto    dim 1; Dimension: dim_value 1, dim_param 2
//
// Tensor data goes in raw_data, little-endian, as the specification asks;
// repeated integers are packed.
package onnx

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
)

// IRVersion is the IR version Marshal writes when Model.IRVersion is 0:
// 7 (IR_VERSION_2020_5_8, ONNX 1.8), the first that opset 13 goes with.
const IRVersion = 7

// DataType is TensorProto.DataType.
type DataType int32

// The element types this package writes.
const (
	Float DataType = 1 // float32
	Int64 DataType = 7
)

func (t DataType) String() string {
	switch t {
	case Float:
		return "float"
	case Int64:
		return "int64"
	}
	return fmt.Sprintf("DataType(%d)", int32(t))
}

// AttrType is AttributeProto.AttributeType.
type AttrType int32

// The attribute types this package writes.
const (
	AttrFloat  AttrType = 1
	AttrInt    AttrType = 2
	AttrString AttrType = 3
	AttrFloats AttrType = 6
	AttrInts   AttrType = 7
)

// Model is a ModelProto.
type Model struct {
	IRVersion       int64 // 0: IRVersion
	Opsets          []OpsetID
	ProducerName    string
	ProducerVersion string
	Domain          string
	ModelVersion    int64
	DocString       string
	Metadata        []Property // metadata_props
	Graph           Graph
}

// OpsetID is an OperatorSetIdProto; Domain "" is the default ONNX domain.
type OpsetID struct {
	Domain  string
	Version int64
}

// Property is a StringStringEntryProto.
type Property struct {
	Key, Value string
}

// Graph is a GraphProto. Initializers are not listed among Inputs (IR
// version ≥ 4 allows that; it makes them constants).
type Graph struct {
	Name         string
	DocString    string
	Nodes        []Node // in topological order
	Initializers []Tensor
	Inputs       []ValueInfo
	Outputs      []ValueInfo
}

// Node is a NodeProto.
type Node struct {
	Name      string
	OpType    string
	Domain    string // "" for the default domain
	DocString string
	Inputs    []string // "" marks an omitted optional input
	Outputs   []string
	Attrs     []Attr
}

// Attr is an AttributeProto of one of the types of AttrType; only the field
// of its Type is written.
type Attr struct {
	Name   string
	Type   AttrType
	F      float32
	I      int64
	S      string
	Floats []float32
	Ints   []int64
	// T, Strings and G are read by Unmarshal (AttrTensor, AttrStrings,
	// AttrGraph: an If's branch); Marshal does not write them.
	T       *Tensor
	Strings []string
	G       *Graph
}

// IntAttr returns an INT attribute.
func IntAttr(name string, v int64) Attr { return Attr{Name: name, Type: AttrInt, I: v} }

// IntsAttr returns an INTS attribute.
func IntsAttr(name string, v ...int64) Attr { return Attr{Name: name, Type: AttrInts, Ints: v} }

// FloatAttr returns a FLOAT attribute.
func FloatAttr(name string, v float32) Attr { return Attr{Name: name, Type: AttrFloat, F: v} }

// FloatsAttr returns a FLOATS attribute.
func FloatsAttr(name string, v ...float32) Attr { return Attr{Name: name, Type: AttrFloats, Floats: v} }

// StringAttr returns a STRING attribute.
func StringAttr(name, v string) Attr { return Attr{Name: name, Type: AttrString, S: v} }

// Tensor is a TensorProto with its data: Floats for Float, Int64s for
// Int64, of length the product of Dims (1 for a scalar).
type Tensor struct {
	Name      string
	DocString string
	DataType  DataType
	Dims      []int64
	Floats    []float32
	Int64s    []int64
}

// FloatTensor returns a Float tensor of shape dims holding v (not copied).
func FloatTensor(name string, v []float32, dims ...int) Tensor {
	return Tensor{Name: name, DataType: Float, Dims: int64s(dims), Floats: v}
}

// Int64Tensor returns an Int64 tensor of shape dims holding v (not copied).
func Int64Tensor(name string, v []int64, dims ...int) Tensor {
	return Tensor{Name: name, DataType: Int64, Dims: int64s(dims), Int64s: v}
}

func int64s(v []int) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// ValueInfo is a ValueInfoProto of a tensor type.
type ValueInfo struct {
	Name      string
	DocString string
	ElemType  DataType
	Shape     []Dim // nil: unknown rank
}

// Dim is one dimension of a tensor shape: a fixed size Value, or a symbolic
// one named Param (a dynamic dimension such as the batch size) when Param
// is not empty.
type Dim struct {
	Value int64
	Param string
}

// Dims returns fixed dimensions.
func Dims(v ...int) []Dim {
	out := make([]Dim, len(v))
	for i, x := range v {
		out[i] = Dim{Value: int64(x)}
	}
	return out
}

// Validate checks that m is a well-formed model of one graph: an opset for
// the default domain, metadata keys that are not empty and occur once (as
// the ONNX checker requires), nodes in topological order reading only graph inputs,
// initialisers and outputs of earlier nodes, every name defined once, every
// graph output defined, and tensors whose data matches their shape.
func (m *Model) Validate() error {
	if m.IRVersion < 0 {
		return fmt.Errorf("onnx: negative IR version %d", m.IRVersion)
	}
	if !slices.ContainsFunc(m.Opsets, func(o OpsetID) bool { return o.Domain == "" }) {
		return fmt.Errorf("onnx: no opset for the default domain")
	}
	for _, o := range m.Opsets {
		if o.Version < 1 {
			return fmt.Errorf("onnx: opset %q has version %d", o.Domain, o.Version)
		}
	}
	if err := validateMetadata(m.Metadata); err != nil {
		return err
	}
	return m.Graph.validate()
}

func validateMetadata(props []Property) error {
	seen := make(map[string]bool, len(props))
	for _, p := range props {
		if p.Key == "" {
			return fmt.Errorf("onnx: metadata property of value %q has an empty key", p.Value)
		}
		if seen[p.Key] {
			return fmt.Errorf("onnx: metadata key %q occurs twice", p.Key)
		}
		seen[p.Key] = true
	}
	return nil
}

func (g *Graph) validate() error {
	defined := map[string]string{} // name → what defines it
	define := func(name, by string) error {
		if name == "" {
			return fmt.Errorf("onnx: %s has an empty name", by)
		}
		if prev, ok := defined[name]; ok {
			return fmt.Errorf("onnx: %q is defined by %s and by %s", name, prev, by)
		}
		defined[name] = by
		return nil
	}
	for _, v := range g.Inputs {
		if err := define(v.Name, "a graph input"); err != nil {
			return err
		}
		if err := v.validate(); err != nil {
			return err
		}
	}
	for _, t := range g.Initializers {
		if err := define(t.Name, "an initializer"); err != nil {
			return err
		}
		if err := t.validate(); err != nil {
			return err
		}
	}
	if len(g.Nodes) == 0 {
		return fmt.Errorf("onnx: graph %q has no nodes", g.Name)
	}
	for i, n := range g.Nodes {
		what := fmt.Sprintf("node %d (%s %q)", i, n.OpType, n.Name)
		if n.OpType == "" {
			return fmt.Errorf("onnx: %s has no op type", what)
		}
		for _, in := range n.Inputs {
			if _, ok := defined[in]; !ok && in != "" {
				return fmt.Errorf("onnx: %s reads %q, which nothing before it defines", what, in)
			}
		}
		if len(n.Outputs) == 0 {
			return fmt.Errorf("onnx: %s has no outputs", what)
		}
		for _, out := range n.Outputs {
			if err := define(out, what); err != nil {
				return err
			}
		}
		for _, a := range n.Attrs {
			if a.Name == "" {
				return fmt.Errorf("onnx: %s has an attribute without a name", what)
			}
			switch a.Type {
			case AttrFloat, AttrInt, AttrString, AttrFloats, AttrInts:
			default:
				return fmt.Errorf("onnx: %s: attribute %q has unsupported type %d", what, a.Name, a.Type)
			}
		}
	}
	if len(g.Outputs) == 0 {
		return fmt.Errorf("onnx: graph %q has no outputs", g.Name)
	}
	for _, v := range g.Outputs {
		if _, ok := defined[v.Name]; !ok {
			return fmt.Errorf("onnx: graph output %q is not defined", v.Name)
		}
		if err := v.validate(); err != nil {
			return err
		}
	}
	return nil
}

func (v *ValueInfo) validate() error {
	if v.ElemType != Float && v.ElemType != Int64 {
		return fmt.Errorf("onnx: value %q has unsupported element type %v", v.Name, v.ElemType)
	}
	for _, d := range v.Shape {
		if d.Param == "" && d.Value < 0 {
			return fmt.Errorf("onnx: value %q has a negative dimension %d", v.Name, d.Value)
		}
	}
	return nil
}

func (t *Tensor) validate() error {
	n := int64(1)
	for _, d := range t.Dims {
		if d < 0 || (d > 0 && n > math.MaxInt32/d) {
			return fmt.Errorf("onnx: tensor %q has bad dimensions %v", t.Name, t.Dims)
		}
		n *= d
	}
	var have int
	switch t.DataType {
	case Float:
		have = len(t.Floats)
		if t.Int64s != nil {
			return fmt.Errorf("onnx: float tensor %q holds int64 data", t.Name)
		}
	case Int64:
		have = len(t.Int64s)
		if t.Floats != nil {
			return fmt.Errorf("onnx: int64 tensor %q holds float data", t.Name)
		}
	default:
		return fmt.Errorf("onnx: tensor %q has unsupported data type %v", t.Name, t.DataType)
	}
	if int64(have) != n {
		return fmt.Errorf("onnx: tensor %q of shape %v holds %d values, want %d", t.Name, t.Dims, have, n)
	}
	return nil
}

// Marshal validates m and returns its protobuf encoding.
func (m *Model) Marshal() ([]byte, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	var e enc
	ir := m.IRVersion
	if ir == 0 {
		ir = IRVersion
	}
	e.varint(1, uint64(ir))
	e.str(2, m.ProducerName)
	e.str(3, m.ProducerVersion)
	e.str(4, m.Domain)
	if m.ModelVersion != 0 {
		e.varint(5, uint64(m.ModelVersion))
	}
	e.str(6, m.DocString)
	e.msg(7, func(e *enc) { m.Graph.encode(e) })
	for _, o := range m.Opsets {
		e.msg(8, func(e *enc) {
			e.str(1, o.Domain)
			e.varint(2, uint64(o.Version))
		})
	}
	for _, p := range m.Metadata {
		e.msg(14, func(e *enc) {
			e.str(1, p.Key)
			e.str(2, p.Value)
		})
	}
	return e.b, nil
}

// WriteTo writes the encoding of m to w.
func (m *Model) WriteTo(w io.Writer) (int64, error) {
	b, err := m.Marshal()
	if err != nil {
		return 0, err
	}
	n, err := w.Write(b)
	return int64(n), err
}

func (g *Graph) encode(e *enc) {
	for _, n := range g.Nodes {
		e.msg(1, func(e *enc) { n.encode(e) })
	}
	e.str(2, g.Name)
	for _, t := range g.Initializers {
		e.msg(5, func(e *enc) { t.encode(e) })
	}
	e.str(10, g.DocString)
	for _, v := range g.Inputs {
		e.msg(11, func(e *enc) { v.encode(e) })
	}
	for _, v := range g.Outputs {
		e.msg(12, func(e *enc) { v.encode(e) })
	}
}

func (n *Node) encode(e *enc) {
	for _, s := range n.Inputs {
		e.bytes(1, []byte(s)) // written even when empty: position matters
	}
	for _, s := range n.Outputs {
		e.bytes(2, []byte(s))
	}
	e.str(3, n.Name)
	e.str(4, n.OpType)
	for _, a := range n.Attrs {
		e.msg(5, func(e *enc) { a.encode(e) })
	}
	e.str(6, n.DocString)
	e.str(7, n.Domain)
}

func (a *Attr) encode(e *enc) {
	e.str(1, a.Name)
	switch a.Type {
	case AttrFloat:
		e.tag(2, wireFixed32)
		e.b = binary.LittleEndian.AppendUint32(e.b, math.Float32bits(a.F))
	case AttrInt:
		e.varint(3, uint64(a.I))
	case AttrString:
		e.bytes(4, []byte(a.S))
	case AttrFloats:
		p := make([]byte, 0, 4*len(a.Floats))
		for _, f := range a.Floats {
			p = binary.LittleEndian.AppendUint32(p, math.Float32bits(f))
		}
		e.bytes(7, p)
	case AttrInts:
		e.packed(8, a.Ints)
	}
	e.varint(20, uint64(a.Type))
}

func (t *Tensor) encode(e *enc) {
	e.packed(1, t.Dims)
	e.varint(2, uint64(t.DataType))
	e.str(8, t.Name)
	var raw []byte
	switch t.DataType {
	case Float:
		raw = make([]byte, 0, 4*len(t.Floats))
		for _, f := range t.Floats {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(f))
		}
	case Int64:
		raw = make([]byte, 0, 8*len(t.Int64s))
		for _, v := range t.Int64s {
			raw = binary.LittleEndian.AppendUint64(raw, uint64(v))
		}
	}
	e.bytes(9, raw)
	e.str(12, t.DocString)
}

func (v *ValueInfo) encode(e *enc) {
	e.str(1, v.Name)
	e.msg(2, func(e *enc) { // TypeProto
		e.msg(1, func(e *enc) { // TypeProto.Tensor
			e.varint(1, uint64(v.ElemType))
			if v.Shape != nil {
				e.msg(2, func(e *enc) { // TensorShapeProto
					for _, d := range v.Shape {
						e.msg(1, func(e *enc) { // Dimension
							if d.Param != "" {
								e.bytes(2, []byte(d.Param))
							} else {
								e.varint(1, uint64(d.Value))
							}
						})
					}
				})
			}
		})
	})
	e.str(3, v.DocString)
}

// Protobuf wire types.
const (
	wireVarint  = 0
	wireBytes   = 2
	wireFixed32 = 5
)

// enc appends protobuf fields to b.
type enc struct{ b []byte }

func (e *enc) tag(field, wire int) {
	e.b = binary.AppendUvarint(e.b, uint64(field)<<3|uint64(wire))
}

// varint writes an integer field; int64 values are passed as their two's
// complement bits, as protobuf's int64 encoding asks.
func (e *enc) varint(field int, v uint64) {
	e.tag(field, wireVarint)
	e.b = binary.AppendUvarint(e.b, v)
}

// bytes writes a length-delimited field.
func (e *enc) bytes(field int, p []byte) {
	e.tag(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(p)))
	e.b = append(e.b, p...)
}

// str writes a string field unless it is empty (proto3's default).
func (e *enc) str(field int, s string) {
	if s != "" {
		e.bytes(field, []byte(s))
	}
}

// packed writes repeated int64 values as one packed field, nothing when
// there are none.
func (e *enc) packed(field int, v []int64) {
	if len(v) == 0 {
		return
	}
	var p []byte
	for _, x := range v {
		p = binary.AppendUvarint(p, uint64(x))
	}
	e.bytes(field, p)
}

// msg writes an embedded message encoded by fill.
func (e *enc) msg(field int, fill func(e *enc)) {
	var sub enc
	fill(&sub)
	e.bytes(field, sub.b)
}
