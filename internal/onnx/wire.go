package onnx

import (
	"encoding/binary"
	"fmt"
	"math"
)

// wireFixed64 is protobuf's 64-bit wire type (double, fixed64), which the
// decoder skips or reads in double_data.
const wireFixed64 = 1

// msgReader reads the fields of one protobuf message from b, bounds
// checked: every length and varint is checked against what is left, so a
// truncated or corrupt message is an error, never a panic or an
// allocation larger than the input.
type msgReader struct {
	b    []byte
	num  int    // the field just read
	wire int    // its wire type
	v    uint64 // its varint or fixed value
	p    []byte // its length-delimited payload
	err  error
}

// next reads the next field; it returns false at the end of the message
// or on an error (then r.err is set).
func (r *msgReader) next() bool {
	if r.err != nil || len(r.b) == 0 {
		return false
	}
	key, n := binary.Uvarint(r.b)
	if n <= 0 {
		return r.fail("truncated or overlong field key")
	}
	r.b = r.b[n:]
	if key>>3 == 0 || key>>3 > math.MaxInt32 {
		return r.fail(fmt.Sprintf("field number %d", key>>3))
	}
	r.num, r.wire = int(key>>3), int(key&7)
	switch r.wire {
	case wireVarint:
		if r.v, n = binary.Uvarint(r.b); n <= 0 {
			return r.fail(fmt.Sprintf("field %d: truncated varint", r.num))
		}
		r.b = r.b[n:]
	case wireFixed64:
		if len(r.b) < 8 {
			return r.fail(fmt.Sprintf("field %d: truncated fixed64", r.num))
		}
		r.v, r.b = binary.LittleEndian.Uint64(r.b), r.b[8:]
	case wireBytes:
		l, n := binary.Uvarint(r.b)
		if n <= 0 || l > uint64(len(r.b)-n) {
			return r.fail(fmt.Sprintf("field %d: length runs past the end of the data (truncated?)", r.num))
		}
		r.p, r.b = r.b[n:n+int(l)], r.b[n+int(l):]
	case wireFixed32:
		if len(r.b) < 4 {
			return r.fail(fmt.Sprintf("field %d: truncated fixed32", r.num))
		}
		r.v, r.b = uint64(binary.LittleEndian.Uint32(r.b)), r.b[4:]
	default:
		return r.fail(fmt.Sprintf("field %d: wire type %d, not one of protobuf's 0, 1, 2, 5", r.num, r.wire))
	}
	return true
}

func (r *msgReader) fail(msg string) bool {
	r.err = fmt.Errorf("%s", msg)
	return false
}

// want records an error unless the field just read has wire type w.
func (r *msgReader) want(w int) bool {
	if r.wire != w {
		return r.fail(fmt.Sprintf("field %d: wire type %d, want %d", r.num, r.wire, w))
	}
	return true
}

// str returns the field as a string.
func (r *msgReader) str() string {
	if !r.want(wireBytes) {
		return ""
	}
	return string(r.p)
}

// int64v returns the field as an int64 (a varint of two's complement bits).
func (r *msgReader) int64v() int64 {
	if !r.want(wireVarint) {
		return 0
	}
	return int64(r.v)
}

// float32v returns the field as a float (fixed32).
func (r *msgReader) float32v() float32 {
	if !r.want(wireFixed32) {
		return 0
	}
	return math.Float32frombits(uint32(r.v))
}

// int64s appends the field's values to v: one varint, or a packed run.
func (r *msgReader) int64s(v []int64) []int64 {
	if r.wire == wireVarint {
		return append(v, int64(r.v))
	}
	if !r.want(wireBytes) {
		return v
	}
	p := r.p
	for len(p) > 0 {
		x, n := binary.Uvarint(p)
		if n <= 0 {
			r.fail(fmt.Sprintf("field %d: truncated packed varint", r.num))
			return v
		}
		v, p = append(v, int64(x)), p[n:]
	}
	return v
}

// float32s appends the field's values to v: one fixed32, or a packed run.
func (r *msgReader) float32s(v []float32) []float32 {
	if r.wire == wireFixed32 {
		return append(v, math.Float32frombits(uint32(r.v)))
	}
	if !r.want(wireBytes) {
		return v
	}
	if len(r.p)%4 != 0 {
		r.fail(fmt.Sprintf("field %d: %d bytes of packed floats, not a multiple of 4", r.num, len(r.p)))
		return v
	}
	for i := 0; i < len(r.p); i += 4 {
		v = append(v, math.Float32frombits(binary.LittleEndian.Uint32(r.p[i:])))
	}
	return v
}

// float64s appends the field's values to v, rounded to float32: one
// fixed64, or a packed run (double_data).
func (r *msgReader) float64s(v []float32) []float32 {
	if r.wire == wireFixed64 {
		return append(v, float32(math.Float64frombits(r.v)))
	}
	if !r.want(wireBytes) {
		return v
	}
	if len(r.p)%8 != 0 {
		r.fail(fmt.Sprintf("field %d: %d bytes of packed doubles, not a multiple of 8", r.num, len(r.p)))
		return v
	}
	for i := 0; i < len(r.p); i += 8 {
		v = append(v, float32(math.Float64frombits(binary.LittleEndian.Uint64(r.p[i:]))))
	}
	return v
}

// sub returns a reader of the embedded message just read.
func (r *msgReader) sub() *msgReader {
	if !r.want(wireBytes) {
		return &msgReader{err: r.err}
	}
	return &msgReader{b: r.p}
}
