package onnx

import (
	"fmt"

	"github.com/gtstorm/gtstorm/internal/inputfile"
)

// The element types the decoder reads besides Float and Int64: integers
// and booleans are held in Tensor.Int64s, doubles in Tensor.Floats
// (rounded to float32).
const (
	Int32  DataType = 6
	Bool   DataType = 9
	Double DataType = 11
)

// The attribute types the decoder reads besides those Marshal writes; the
// content of the others (graphs, sparse tensors, type protos) is skipped,
// their Type kept.
const (
	AttrTensor  AttrType = 4
	AttrGraph   AttrType = 5
	AttrStrings AttrType = 8
)

// MaxFileBytes bounds the ONNX files ReadFile reads: far above the
// networks gtstorm trains (ResNet-50 is about 100 MB).
const MaxFileBytes = 1 << 30

// ReadFile reads and decodes the ONNX model in the regular file at path
// (at most MaxFileBytes).
func ReadFile(path string) (*Model, error) {
	b, err := inputfile.Read(path, MaxFileBytes, "an ONNX model")
	if err != nil {
		return nil, err
	}
	m, err := Unmarshal(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Unmarshal decodes an ONNX ModelProto: its opset imports, metadata and
// graph — nodes with their attributes (int, ints, float, floats, string,
// strings, tensor, graph; others are kept by type only), initialisers (float_data,
// int32_data, int64_data, double_data or little-endian raw_data), inputs and
// outputs with their shapes. Unknown fields are skipped, as protobuf asks.
// A truncated or corrupt encoding, a tensor whose data does not match its
// shape, data stored outside the file, a model without a graph, without an
// opset of the default domain, and a graph without nodes or outputs are one
// error naming where it is.
func Unmarshal(b []byte) (*Model, error) {
	m := &Model{}
	r := &msgReader{b: b}
	hasGraph := false
	for r.next() {
		switch r.num {
		case 1:
			m.IRVersion = r.int64v()
		case 2:
			m.ProducerName = r.str()
		case 3:
			m.ProducerVersion = r.str()
		case 4:
			m.Domain = r.str()
		case 5:
			m.ModelVersion = r.int64v()
		case 6:
			m.DocString = r.str()
		case 7:
			hasGraph = true
			if err := m.Graph.decode(r.sub()); err != nil {
				return nil, fmt.Errorf("onnx: graph: %w", err)
			}
		case 8:
			o, err := decodeOpset(r.sub())
			if err != nil {
				return nil, fmt.Errorf("onnx: opset_import %d: %w", len(m.Opsets), err)
			}
			m.Opsets = append(m.Opsets, o)
		case 14:
			p, err := decodeProperty(r.sub())
			if err != nil {
				return nil, fmt.Errorf("onnx: metadata_props %d: %w", len(m.Metadata), err)
			}
			m.Metadata = append(m.Metadata, p)
		}
	}
	if r.err != nil {
		return nil, fmt.Errorf("onnx: model: %w", r.err)
	}
	return m, m.checkDecoded(hasGraph)
}

// checkDecoded refuses what a well-formed model file always has but a
// file cut at a field boundary may lack.
func (m *Model) checkDecoded(hasGraph bool) error {
	switch {
	case !hasGraph:
		return fmt.Errorf("onnx: the model has no graph (truncated, or not an ONNX model?)")
	case m.Opset("") == 0:
		return fmt.Errorf("onnx: the model imports no opset of the default domain (truncated?)")
	case len(m.Graph.Nodes) == 0:
		return fmt.Errorf("onnx: graph %q has no nodes", m.Graph.Name)
	case len(m.Graph.Outputs) == 0:
		return fmt.Errorf("onnx: graph %q has no outputs (truncated?)", m.Graph.Name)
	}
	return nil
}

// Opset returns the version of the operator set of domain the model
// imports ("" and "ai.onnx" are the default domain), or 0.
func (m *Model) Opset(domain string) int64 {
	if domain == "ai.onnx" {
		domain = ""
	}
	for _, o := range m.Opsets {
		d := o.Domain
		if d == "ai.onnx" {
			d = ""
		}
		if d == domain {
			return o.Version
		}
	}
	return 0
}

func decodeOpset(r *msgReader) (OpsetID, error) {
	var o OpsetID
	for r.next() {
		switch r.num {
		case 1:
			o.Domain = r.str()
		case 2:
			o.Version = r.int64v()
		}
	}
	return o, r.err
}

func decodeProperty(r *msgReader) (Property, error) {
	var p Property
	for r.next() {
		switch r.num {
		case 1:
			p.Key = r.str()
		case 2:
			p.Value = r.str()
		}
	}
	return p, r.err
}

func (g *Graph) decode(r *msgReader) error {
	for r.next() {
		var err error
		switch r.num {
		case 1:
			var n Node
			if err = n.decode(r.sub()); err != nil {
				err = fmt.Errorf("node %d: %w", len(g.Nodes), err)
			}
			g.Nodes = append(g.Nodes, n)
		case 2:
			g.Name = r.str()
		case 5:
			var t Tensor
			if err = t.decode(r.sub()); err != nil {
				err = fmt.Errorf("initializer %d (%q): %w", len(g.Initializers), t.Name, err)
			}
			g.Initializers = append(g.Initializers, t)
		case 10:
			g.DocString = r.str()
		case 11, 12:
			var v ValueInfo
			if err = v.decode(r.sub()); err != nil {
				err = fmt.Errorf("value %q: %w", v.Name, err)
			}
			if r.num == 11 {
				g.Inputs = append(g.Inputs, v)
			} else {
				g.Outputs = append(g.Outputs, v)
			}
		}
		if err != nil {
			return err
		}
	}
	return r.err
}

func (n *Node) decode(r *msgReader) error {
	for r.next() {
		switch r.num {
		case 1:
			n.Inputs = append(n.Inputs, r.str())
		case 2:
			n.Outputs = append(n.Outputs, r.str())
		case 3:
			n.Name = r.str()
		case 4:
			n.OpType = r.str()
		case 5:
			var a Attr
			if err := a.decode(r.sub()); err != nil {
				return fmt.Errorf("%s %q: attribute %q: %w", n.OpType, n.Name, a.Name, err)
			}
			n.Attrs = append(n.Attrs, a)
		case 6:
			n.DocString = r.str()
		case 7:
			n.Domain = r.str()
		}
	}
	if r.err != nil {
		return fmt.Errorf("%s %q: %w", n.OpType, n.Name, r.err)
	}
	return nil
}

func (a *Attr) decode(r *msgReader) error {
	for r.next() {
		switch r.num {
		case 1:
			a.Name = r.str()
		case 2:
			a.F = r.float32v()
		case 3:
			a.I = r.int64v()
		case 4:
			a.S = r.str()
		case 5:
			a.T = &Tensor{}
			if err := a.T.decode(r.sub()); err != nil {
				return fmt.Errorf("tensor: %w", err)
			}
		case 6:
			a.G = &Graph{}
			if err := a.G.decode(r.sub()); err != nil {
				return fmt.Errorf("graph: %w", err)
			}
		case 7:
			a.Floats = r.float32s(a.Floats)
		case 8:
			a.Ints = r.int64s(a.Ints)
		case 9:
			a.Strings = append(a.Strings, r.str())
		case 20:
			a.Type = AttrType(r.int64v())
		}
	}
	return r.err
}

func (v *ValueInfo) decode(r *msgReader) error {
	for r.next() {
		switch r.num {
		case 1:
			v.Name = r.str()
		case 2:
			if err := v.decodeType(r.sub()); err != nil {
				return err
			}
		case 3:
			v.DocString = r.str()
		}
	}
	return r.err
}

// decodeType reads a TypeProto: its tensor_type's element type and shape
// (other types leave ElemType 0).
func (v *ValueInfo) decodeType(r *msgReader) error {
	for r.next() {
		if r.num != 1 {
			continue
		}
		t := r.sub()
		for t.next() {
			switch t.num {
			case 1:
				v.ElemType = DataType(t.int64v())
			case 2:
				v.Shape = []Dim{} // a shape, perhaps of rank 0
				s := t.sub()
				for s.next() {
					if s.num == 1 {
						v.Shape = append(v.Shape, decodeDim(s.sub()))
					}
				}
				if s.err != nil {
					return fmt.Errorf("shape: %w", s.err)
				}
			}
		}
		if t.err != nil {
			return fmt.Errorf("type: %w", t.err)
		}
	}
	return r.err
}

// decodeDim reads a Dimension; a bad one reports its error through its
// reader's parent (the caller's s.err is not set: errors in a dimension
// are folded into an unknown Param).
func decodeDim(r *msgReader) Dim {
	var d Dim
	for r.next() {
		switch r.num {
		case 1:
			d.Value = r.int64v()
		case 2:
			d.Param = r.str()
		}
	}
	if r.err != nil || (d.Param == "" && d.Value < 0) {
		return Dim{Param: "?"}
	}
	return d
}
