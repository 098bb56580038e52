package weights

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"

	"github.com/gtstorm/gtstorm/decentral"
)

// headerSize is the magic, the version and the body length; trailerSize the
// checksum.
const (
	headerSize  = len(Magic) + 4 + 8
	trailerSize = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Encode validates c and writes its encoding to w.
func Encode(w io.Writer, c *Checkpoint) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("encode checkpoint: %w", err)
	}
	b := make([]byte, headerSize, headerSize+encodedBodySize(c)+trailerSize)
	copy(b, Magic)
	binary.LittleEndian.PutUint32(b[len(Magic):], Version)
	b = appendBody(b, c)
	binary.LittleEndian.PutUint64(b[len(Magic)+4:], uint64(len(b)-headerSize))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("encode checkpoint: %w", err)
	}
	return nil
}

// encodedBodySize returns the body's length, for sizing the buffer.
func encodedBodySize(c *Checkpoint) int {
	n := 4 + len(c.Model) + 4 + 9 + 4*len(c.Params) + 1 + 9 + len(c.Sampler) + 9 + len(c.Meta)
	for _, t := range c.Tensors {
		n += 4 + len(t.Name) + 4 + 8*len(t.Shape)
	}
	if s := c.Optimizer; s != nil {
		n += 4 + len(s.Algorithm) + 4*8 + 3*8 + 4 +
			3*9 + 8*(len(s.Samples)+len(s.GradEvals)+len(s.BytesSent)) + 2*9 + 8*(len(s.Loss)+len(s.SimTime))
		for _, sl := range s.Slabs {
			n += 4 + len(sl.Name) + 9 + 4*len(sl.Data)
		}
	}
	return n
}

func appendBody(b []byte, c *Checkpoint) []byte {
	b = appendString(b, c.Model)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.Tensors)))
	for _, t := range c.Tensors {
		b = appendString(b, t.Name)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(t.Shape)))
		for _, d := range t.Shape {
			b = binary.LittleEndian.AppendUint64(b, uint64(d))
		}
	}
	b = appendFloat32s(b, c.Params)
	if s := c.Optimizer; s == nil {
		b = append(b, 0)
	} else {
		b = append(b, 1)
		b = appendString(b, s.Algorithm)
		for _, f := range []float64{s.Schedule.Eta0, s.Schedule.Decay, s.Schedule.Power, s.Schedule.Rho} {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
		}
		for _, i := range []int{s.Nodes, s.Dim, s.Round} {
			b = binary.LittleEndian.AppendUint64(b, uint64(i))
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s.Slabs)))
		for _, sl := range s.Slabs {
			b = appendString(b, sl.Name)
			b = appendFloat32s(b, sl.Data)
		}
		b = appendInt64s(b, s.Samples)
		b = appendInt64s(b, s.GradEvals)
		b = appendInt64s(b, s.BytesSent)
		b = appendFloat64s(b, s.Loss)
		b = appendFloat64s(b, s.SimTime)
	}
	b = appendBytes(b, c.Sampler)
	b = appendBytes(b, c.Meta)
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// appendLen writes a vec's presence byte and element count.
func appendLen(b []byte, isNil bool, n int) []byte {
	if isNil {
		return append(b, 0)
	}
	return binary.LittleEndian.AppendUint64(append(b, 1), uint64(n))
}

func appendBytes(b, v []byte) []byte {
	return append(appendLen(b, v == nil, len(v)), v...)
}

func appendFloat32s(b []byte, v []float32) []byte {
	b = appendLen(b, v == nil, len(v))
	for _, f := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

func appendFloat64s(b []byte, v []float64) []byte {
	b = appendLen(b, v == nil, len(v))
	for _, f := range v {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
	}
	return b
}

func appendInt64s(b []byte, v []int64) []byte {
	b = appendLen(b, v == nil, len(v))
	for _, i := range v {
		b = binary.LittleEndian.AppendUint64(b, uint64(i))
	}
	return b
}

// Decode parses and validates a checkpoint held in b. The result does not
// alias b.
func Decode(b []byte) (*Checkpoint, error) {
	version, err := checkHeader(b[:min(len(b), headerSize)], int64(len(b)))
	if err != nil {
		return nil, err
	}
	end := len(b) - trailerSize
	if sum, want := crc32.Checksum(b[:end], castagnoli), binary.LittleEndian.Uint32(b[end:]); sum != want {
		return nil, fmt.Errorf("checksum mismatch (stored %08x, computed %08x): the file is damaged", want, sum)
	}
	d := &decoder{b: b[headerSize:end], off: headerSize, version: version}
	c := d.body()
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%d bytes of garbage after the body at offset %d", len(d.b), d.off)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("inconsistent checkpoint: %w", err)
	}
	return c, nil
}

// ErrNotCheckpoint is the error of a file that does not start as a
// checkpoint does.
var ErrNotCheckpoint = errors.New("not a gtstorm checkpoint")

// checkHeader checks the header of a checkpoint of size bytes, given its
// first min(size, headerSize) bytes in head: the magic, a version this
// package reads, and a body length that is what the size leaves for it. It
// returns the format version.
func checkHeader(head []byte, size int64) (uint32, error) {
	if len(head) < len(Magic) || string(head[:len(Magic)]) != Magic {
		return 0, fmt.Errorf("%w (the file does not start with %q)", ErrNotCheckpoint, Magic)
	}
	if len(head) < len(Magic)+4 {
		return 0, fmt.Errorf("truncated: %d bytes end inside the header", size)
	}
	version := binary.LittleEndian.Uint32(head[len(Magic):])
	if v := version; !slices.Contains(supportedVersions, v) {
		return 0, fmt.Errorf("format version %d, this build reads version %v", v, supportedVersions)
	}
	if size < int64(headerSize+trailerSize) {
		return 0, fmt.Errorf("truncated: %d bytes, less than the %d of header and checksum", size, headerSize+trailerSize)
	}
	bodyLen := binary.LittleEndian.Uint64(head[len(Magic)+4:])
	if have := uint64(size) - uint64(headerSize+trailerSize); bodyLen != have {
		what := "truncated"
		if bodyLen < have {
			what = "trailing bytes"
		}
		return 0, fmt.Errorf("%s: the header announces a %d-byte body, the file holds %d bytes for it", what, bodyLen, have)
	}
	return version, nil
}

// decoder consumes a body; the first error sticks and makes every later read
// return zero values.
type decoder struct {
	b       []byte // what remains
	off     int    // file offset of b[0], for messages
	version uint32 // the file's format version
	err     error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("at offset %d: %s", d.off, fmt.Sprintf(format, args...))
	}
}

// take returns the next n bytes, or nil after recording an error naming what
// if fewer remain.
func (d *decoder) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.fail("%s needs %d bytes, only %d remain", what, n, len(d.b))
		return nil
	}
	p := d.b[:n]
	d.b = d.b[n:]
	d.off += n
	return p
}

func (d *decoder) u8(what string) byte {
	if p := d.take(1, what); p != nil {
		return p[0]
	}
	return 0
}

func (d *decoder) u32(what string) uint32 {
	if p := d.take(4, what); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (d *decoder) u64(what string) uint64 {
	if p := d.take(8, what); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (d *decoder) f64(what string) float64 { return math.Float64frombits(d.u64(what)) }

// int reads an int64 that must lie in [0, MaxInt].
func (d *decoder) int(what string) int {
	v := d.u64(what)
	if v > math.MaxInt {
		d.fail("%s is %d, want a value in [0, %d]", what, int64(v), math.MaxInt)
		return 0
	}
	return int(v)
}

func (d *decoder) str(what string) string {
	n := d.u32(what + " length")
	if d.err == nil && uint64(n) > uint64(len(d.b)) {
		d.fail("%s claims %d bytes, only %d remain", what, n, len(d.b))
	}
	return string(d.take(int(n), what))
}

// count reads a vec header: it returns present = false for nil, else the
// element count, checked against the bytes remaining for elements of size
// elem.
func (d *decoder) count(what string, elem int) (n int, present bool) {
	switch flag := d.u8(what + " presence"); {
	case d.err != nil:
		return 0, false
	case flag == 0:
		return 0, false
	case flag != 1:
		d.fail("%s presence byte is %d, want 0 or 1", what, flag)
		return 0, false
	}
	v := d.u64(what + " count")
	if d.err != nil {
		return 0, false
	}
	if v > uint64(len(d.b)/elem) {
		d.fail("%s claims %d values of %d bytes, only %d bytes remain", what, v, elem, len(d.b))
		return 0, false
	}
	return int(v), true
}

func (d *decoder) bytes(what string) []byte {
	n, ok := d.count(what, 1)
	if !ok {
		return nil
	}
	p := d.take(n, what)
	if p == nil {
		return nil
	}
	v := make([]byte, n)
	copy(v, p)
	return v
}

func (d *decoder) float32s(what string) []float32 {
	n, ok := d.count(what, 4)
	if !ok {
		return nil
	}
	p := d.take(4*n, what)
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
	}
	return v
}

func (d *decoder) float64s(what string) []float64 {
	n, ok := d.count(what, 8)
	if !ok {
		return nil
	}
	p := d.take(8*n, what)
	v := make([]float64, n)
	for i := range v {
		v[i] = math.Float64frombits(binary.LittleEndian.Uint64(p[8*i:]))
	}
	return v
}

func (d *decoder) int64s(what string) []int64 {
	n, ok := d.count(what, 8)
	if !ok {
		return nil
	}
	p := d.take(8*n, what)
	v := make([]int64, n)
	for i := range v {
		v[i] = int64(binary.LittleEndian.Uint64(p[8*i:]))
	}
	return v
}

func (d *decoder) body() *Checkpoint {
	c := &Checkpoint{Model: d.str("model name")}
	nt := d.u32("tensor count")
	// Each tensor takes at least 8 bytes (name length and rank).
	if d.err == nil && uint64(nt) > uint64(len(d.b)/8) {
		d.fail("tensor count %d: only %d bytes remain", nt, len(d.b))
	}
	if d.err != nil {
		return nil
	}
	c.Tensors = make([]Tensor, nt)
	for i := range c.Tensors {
		t := &c.Tensors[i]
		t.Name = d.str(fmt.Sprintf("tensor %d name", i))
		rank := d.u32(fmt.Sprintf("tensor %d rank", i))
		if d.err == nil && uint64(rank) > uint64(len(d.b)/8) {
			d.fail("tensor %q: rank %d: only %d bytes remain", t.Name, rank, len(d.b))
		}
		if d.err != nil {
			return nil
		}
		t.Shape = make([]int, rank)
		for k := range t.Shape {
			v := int64(d.u64("dimension"))
			if d.err == nil && (v < 1 || v > math.MaxInt) {
				d.fail("tensor %q: dimension %d is %d, want ≥ 1", t.Name, k, v)
			}
			t.Shape[k] = int(v)
		}
	}
	c.Params = d.float32s("parameters")
	if c.Params == nil && d.err == nil {
		d.fail("parameters absent")
	}
	switch has := d.u8("optimizer flag"); {
	case d.err != nil:
	case has == 1:
		c.Optimizer = d.snapshot()
	case has != 0:
		d.fail("optimizer flag is %d, want 0 or 1", has)
	}
	c.Sampler = d.bytes("sampler state")
	c.Meta = d.bytes("metadata")
	if d.err != nil {
		return nil
	}
	return c
}

func (d *decoder) snapshot() *decentral.Snapshot {
	s := &decentral.Snapshot{Algorithm: d.str("algorithm")}
	s.Schedule.Eta0 = d.f64("eta0")
	s.Schedule.Decay = d.f64("decay")
	s.Schedule.Power = d.f64("power")
	s.Schedule.Rho = d.f64("rho")
	s.Nodes = d.int("node count")
	s.Dim = d.int("dimension")
	s.Round = d.int("round")
	if d.version == 1 {
		s.Slabs = d.v1Slabs(s.Algorithm)
	} else {
		n := d.u32("slab count")
		// Each slab takes at least 5 bytes (name length and presence).
		if d.err == nil && uint64(n) > uint64(len(d.b)/5) {
			d.fail("slab count %d: only %d bytes remain", n, len(d.b))
		}
		if d.err != nil {
			return s
		}
		s.Slabs = make([]decentral.Slab, n)
		for i := range s.Slabs {
			name := d.str(fmt.Sprintf("slab %d name", i))
			s.Slabs[i] = decentral.Slab{Name: name, Data: d.float32s(fmt.Sprintf("slab %q", name))}
		}
	}
	s.Samples = d.int64s("Samples")
	s.GradEvals = d.int64s("GradEvals")
	s.BytesSent = d.int64s("BytesSent")
	s.Loss = d.float64s("Loss")
	if d.version >= 3 {
		s.SimTime = d.float64s("SimTime")
	}
	return s
}

// v1Slabs reads version 1's fixed X, V and G vectors and names them, in
// that order, after the algorithm's slabs (decentral.StateSlabs): x, then
// GT-STORM's v or GNSD's y, then GNSD's g. Empty vectors beyond X are
// dropped; vectors the algorithm has no name for keep their version-1 name,
// for Validate to report.
func (d *decoder) v1Slabs(algo string) []decentral.Slab {
	names, _ := decentral.StateSlabs(algo) // an unknown algorithm: Validate says so
	var slabs []decentral.Slab
	for j, old := range []string{"X", "V", "G"} {
		v := d.float32s(old)
		if v == nil || (j > 0 && len(v) == 0) {
			continue
		}
		name := old
		if k := len(slabs); k < len(names) {
			name = names[k]
		}
		slabs = append(slabs, decentral.Slab{Name: name, Data: v})
	}
	return slabs
}
