package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
)

// tensorData is a TensorProto's data fields, before they are checked
// against its type and shape.
type tensorData struct {
	raw      []byte
	hasRaw   bool
	external bool
	ints     []int64
	floats   []float32
}

func (t *Tensor) decode(r *msgReader) error {
	var d tensorData
	for r.next() {
		switch r.num {
		case 1:
			t.Dims = r.int64s(t.Dims)
		case 2:
			t.DataType = DataType(r.int64v())
		case 3:
			return fmt.Errorf("segmented tensors are not supported")
		case 4:
			d.floats = r.float32s(d.floats)
		case 5, 7, 11:
			d.ints = r.int64s(d.ints)
		case 8:
			t.Name = r.str()
		case 9:
			d.raw, d.hasRaw = r.p, r.want(wireBytes)
		case 10:
			d.floats = r.float64s(d.floats)
		case 12:
			t.DocString = r.str()
		case 13:
			d.external = true
		case 14:
			d.external = d.external || r.int64v() == 1
		}
	}
	if r.err != nil {
		return r.err
	}
	return t.fill(d)
}

// fill sets t's data from d, checking it against t's type and dimensions.
func (t *Tensor) fill(d tensorData) error {
	if d.external {
		return fmt.Errorf("data stored outside the model file (external data), which is not supported; save the model with its weights inside")
	}
	n := int64(1)
	for _, x := range t.Dims {
		if x < 0 || (x > 0 && n > math.MaxInt32/x) {
			return fmt.Errorf("bad dimensions %v", t.Dims)
		}
		n *= x
	}
	size := map[DataType]int{Float: 4, Double: 8, Int64: 8, Int32: 4, Bool: 1}[t.DataType]
	if size == 0 {
		return fmt.Errorf("data type %d, not one of float, double, int64, int32 and bool", t.DataType)
	}
	isFloat := t.DataType == Float || t.DataType == Double
	switch {
	case d.hasRaw:
		if int64(len(d.raw)) != n*int64(size) {
			return fmt.Errorf("%d bytes of raw data for %d values of %d bytes (shape %v)", len(d.raw), n, size, t.Dims)
		}
		t.decodeRaw(d.raw, int(n), size)
		return nil
	case isFloat:
		t.Floats = d.floats
		if t.Floats == nil {
			t.Floats = []float32{}
		}
		if int64(len(t.Floats)) != n {
			return fmt.Errorf("%d values for shape %v (%d)", len(t.Floats), t.Dims, n)
		}
	default:
		t.Int64s = d.ints
		if t.Int64s == nil {
			t.Int64s = []int64{}
		}
		if int64(len(t.Int64s)) != n {
			return fmt.Errorf("%d values for shape %v (%d)", len(t.Int64s), t.Dims, n)
		}
	}
	return nil
}

// decodeRaw reads n little-endian values of size bytes.
func (t *Tensor) decodeRaw(raw []byte, n, size int) {
	switch t.DataType {
	case Float:
		t.Floats = make([]float32, n)
		for i := range t.Floats {
			t.Floats[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case Double:
		t.Floats = make([]float32, n)
		for i := range t.Floats {
			t.Floats[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:])))
		}
	default:
		t.Int64s = make([]int64, n)
		for i := range t.Int64s {
			switch size {
			case 8:
				t.Int64s[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
			case 4:
				t.Int64s[i] = int64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
			default:
				t.Int64s[i] = int64(raw[i])
			}
		}
	}
}
