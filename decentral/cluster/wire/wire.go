// Package wire is the message format of gtstorm's network transport: one
// frame per message, a fixed 32-byte little-endian header followed by a
// payload. A DATA frame carries one chunk of one shared vector of a round —
// float32 values as raw little-endian bytes — from a sending node to a
// receiving node; a vector longer than the chunk limit is split into frames
// that name their offset and the vector's total length, both in floats.
// An ENCODED frame carries one chunk of a compressed message instead — the
// compressor's bytes, which the receiver decodes — with its offset and
// total length in bytes.
// A MULTI (MULTIENC) frame is a DATA (ENCODED) frame for several nodes of
// one rank at once: To is their number n, and its payload starts with the
// n destination nodes, uint32 each (see AppendMulti).
// HELLO, ERROR and BYE frames carry text: the run's config hash at connect,
// a peer's reason for closing, or a rank's goodbye when it stops.
//
// Header layout (byte offsets):
//
//	0  'G' 'T'   magic
//	2  version   1
//	3  kind      DATA, GATHER, HELLO, ERROR, BYE, ENCODED, MULTI or MULTIENC
//	4  k         which of the algorithm's shared vectors (x = 0, v or y = 1)
//	5  0 0 0     reserved, zero
//	8  round     uint64
//	16 from      uint32, the sending node
//	20 to        uint32, the receiving node (MULTI, MULTIENC: the number
//	             of receiving nodes, listed at the payload's start)
//	24 offset    uint32, the chunk's first float in the vector (byte in
//	             the message, for ENCODED)
//	28 total     uint32, the vector's length in floats (the message's in
//	             bytes, for ENCODED)
//	32 payload
//
// Encoding appends to a caller's buffer and does not allocate when it has
// room; Decode never panics and rejects every malformed frame with a
// one-line error that names the fault and wraps ErrMalformed. A frame that
// arrives in pieces decodes with DecodeHeader, a FloatWriter and
// CheckFinite, which check the same.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// Frame layout constants.
const (
	Magic0     = 'G' // first magic byte
	Magic1     = 'T' // second magic byte
	Version    = 1   // the format version this package writes and reads
	HeaderSize = 32  // bytes before the payload
	// DefaultChunkBytes is the default payload limit of one DATA frame,
	// 1 MiB: well under gRPC's default 4 MiB message limit.
	DefaultChunkBytes = 1 << 20
	// MaxText is the longest payload of a text frame (HELLO, ERROR, BYE),
	// in bytes.
	MaxText = 4096
)

// Kind is a frame's type.
type Kind uint8

// Frame kinds.
const (
	// Data carries a chunk of a shared vector of a round.
	Data Kind = 1
	// Gather carries a chunk of a node's vector sent to be collected (a
	// model gathered for evaluation); its layout is DATA's.
	Gather Kind = 2
	// Hello opens an edge's stream; its payload is the run's config hash.
	Hello Kind = 3
	// Error reports why a peer closes a stream; its payload is the reason.
	Error Kind = 4
	// Bye says that the sending rank stops, deliberately: its Round is the
	// number of rounds the rank completed, and it sends no vector of a
	// later round; the frames it sent before on the stream all arrived
	// before it. Its payload says why (text).
	Bye Kind = 5
	// Encoded carries a chunk of a compressed message of a round, in
	// place of a DATA frame's vector: its offset and total count bytes,
	// and its payload is raw bytes.
	Encoded Kind = 6
)

// String returns the kind's name: "DATA", "GATHER", "HELLO", "ERROR",
// "BYE", "ENCODED", or "kind N" for an unknown one.
func (k Kind) String() string {
	switch k {
	case Data:
		return "DATA"
	case Gather:
		return "GATHER"
	case Hello:
		return "HELLO"
	case Error:
		return "ERROR"
	case Bye:
		return "BYE"
	case Encoded:
		return "ENCODED"
	case Multi:
		return "MULTI"
	case MultiEncoded:
		return "MULTIENC"
	}
	return fmt.Sprintf("kind %d", uint8(k))
}

// Floats reports whether frames of kind k carry float32 payloads.
func (k Kind) Floats() bool { return k == Data || k == Gather }

// Header is a frame's fixed part.
type Header struct {
	Kind   Kind
	K      uint8  // the shared vector's index: x = 0, v or y = 1
	Round  uint64 // the communication round
	From   uint32 // the sending node
	To     uint32 // the receiving node
	Offset uint32 // the chunk's first float within the vector (byte, for ENCODED)
	Total  uint32 // the vector's length in floats (bytes, for ENCODED)
}

// Frame is a decoded frame: its header and its payload, which aliases the
// decoded bytes.
type Frame struct {
	Header
	Payload []byte
}

// Len returns the number of floats in a float frame's payload.
func (f *Frame) Len() int { return len(f.Payload) / 4 }

// ErrMalformed is wrapped by every error of Decode, DecodeHeader and
// CheckFinite.
var ErrMalformed = errors.New("wire: malformed frame")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// AppendHeader appends h's 32 header bytes to dst.
func AppendHeader(dst []byte, h Header) []byte {
	dst = append(dst, Magic0, Magic1, Version, byte(h.Kind), h.K, 0, 0, 0)
	dst = binary.LittleEndian.AppendUint64(dst, h.Round)
	dst = binary.LittleEndian.AppendUint32(dst, h.From)
	dst = binary.LittleEndian.AppendUint32(dst, h.To)
	dst = binary.LittleEndian.AppendUint32(dst, h.Offset)
	return binary.LittleEndian.AppendUint32(dst, h.Total)
}

// AppendFloats appends a float frame: h's header, then payload as
// little-endian float32 bytes. It does not check that the chunk lies within
// h.Total floats; Decode does.
func AppendFloats(dst []byte, h Header, payload []float32) []byte {
	dst = AppendHeader(dst, h)
	if littleEndian {
		return append(dst, floatBytes(payload)...)
	}
	for _, v := range payload {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
	}
	return dst
}

// AppendBytes appends an ENCODED frame: h's header with kind ENCODED,
// then payload as it is. It does not check that the chunk lies within
// h.Total bytes; Decode does.
func AppendBytes(dst []byte, h Header, payload []byte) []byte {
	h.Kind = Encoded
	return append(AppendHeader(dst, h), payload...)
}

// AppendText appends a text frame (HELLO, ERROR or BYE) with h's kind, k, round
// and nodes, zero offset and total, and text as payload.
func AppendText(dst []byte, h Header, text string) []byte {
	h.Offset, h.Total = 0, 0
	return append(AppendHeader(dst, h), text...)
}

// Decode parses one frame. The payload aliases b. With checkFinite, a float
// payload holding a NaN or an infinity is refused.
func Decode(b []byte, checkFinite bool) (Frame, error) {
	h, err := DecodeHeader(b, len(b)-HeaderSize)
	if err != nil {
		return Frame{}, err
	}
	f := Frame{Header: h, Payload: b[HeaderSize:]}
	if checkFinite && (h.Kind.Floats() || h.Kind == Multi) {
		p := f.Payload
		if h.Kind == Multi {
			p = p[4*h.To:] // after the destinations
		}
		if i, v := firstNonFinite(p); i >= 0 {
			return f, nonFinite(v, uint64(h.Offset)+uint64(i))
		}
	}
	return f, nil
}

// DecodeHeader parses the header at the start of b of a frame whose
// payload is n bytes long, for a frame that arrives in pieces: it checks
// everything Decode checks but the payload's values (see CheckFinite).
func DecodeHeader(b []byte, n int) (Header, error) {
	var h Header
	switch {
	case n < 0:
		return h, malformed("short frame: %d bytes, want at least %d", HeaderSize+n, HeaderSize)
	case len(b) < HeaderSize:
		return h, malformed("short frame: %d bytes, want at least %d", len(b), HeaderSize)
	case b[0] != Magic0 || b[1] != Magic1:
		return h, malformed("bad magic %#02x %#02x, want %#02x %#02x", b[0], b[1], Magic0, Magic1)
	case b[2] != Version:
		return h, malformed("version %d, want %d", b[2], Version)
	case b[5] != 0 || b[6] != 0 || b[7] != 0:
		return h, malformed("reserved bytes %#02x %#02x %#02x, want zero", b[5], b[6], b[7])
	}
	h.Kind, h.K = Kind(b[3]), b[4]
	h.Round = binary.LittleEndian.Uint64(b[8:])
	h.From = binary.LittleEndian.Uint32(b[16:])
	h.To = binary.LittleEndian.Uint32(b[20:])
	h.Offset = binary.LittleEndian.Uint32(b[24:])
	h.Total = binary.LittleEndian.Uint32(b[28:])
	switch h.Kind {
	case Data, Gather:
		if n%4 != 0 {
			return h, malformed("%s payload of %d bytes, not a multiple of 4", h.Kind, n)
		}
		if end := uint64(h.Offset) + uint64(n/4); end > uint64(h.Total) {
			return h, malformed("chunk past the vector's end: floats [%d, %d) of %d", h.Offset, end, h.Total)
		}
	case Encoded:
		if end := uint64(h.Offset) + uint64(n); end > uint64(h.Total) {
			return h, malformed("chunk past the message's end: bytes [%d, %d) of %d", h.Offset, end, h.Total)
		}
	case Multi, MultiEncoded:
		return h, checkMulti(h, n)
	case Hello, Error, Bye:
		if h.Offset != 0 || h.Total != 0 {
			return h, malformed("%s frame with offset %d and total %d, want 0", h.Kind, h.Offset, h.Total)
		}
		if n > MaxText {
			return h, malformed("%s payload of %d bytes, want at most %d", h.Kind, n, MaxText)
		}
	default:
		return h, malformed("unknown kind %d", uint8(h.Kind))
	}
	return h, nil
}

// CheckFinite returns the error Decode gives a payload holding a NaN or an
// infinity, for the floats v of a chunk starting at float offset of its
// vector, or nil.
func CheckFinite(v []float32, offset uint32) error {
	if i, x := firstNonFiniteFloats(v); i >= 0 {
		return nonFinite(x, uint64(offset)+uint64(i))
	}
	return nil
}

func nonFinite(v float32, at uint64) error {
	return malformed("non-finite payload: %v at float %d", v, at)
}

func firstNonFiniteFloats(v []float32) (int, float32) {
	if littleEndian {
		return firstNonFinite(floatBytes(v))
	}
	for i, x := range v {
		if math.Float32bits(x)&0x7f800000 == 0x7f800000 {
			return i, x
		}
	}
	return -1, 0
}

// firstNonFinite returns the index and value of the first NaN or infinity
// of a little-endian float32 payload, or -1. A float is not finite when its
// eight exponent bits are all ones: adding one to them then carries into
// the sign bit's place. Two floats are tested per 64-bit word, without a
// branch, and the payload is scanned again only when one is found.
func firstNonFinite(p []byte) (int, float32) {
	const (
		exp   = 0x7f800000_7f800000
		one   = 0x00800000_00800000
		carry = 0x80000000_80000000
	)
	var acc uint64
	i := 0
	for ; i+32 <= len(p); i += 32 {
		q := p[i : i+32 : i+32]
		acc |= binary.LittleEndian.Uint64(q)&exp + one
		acc |= binary.LittleEndian.Uint64(q[8:])&exp + one
		acc |= binary.LittleEndian.Uint64(q[16:])&exp + one
		acc |= binary.LittleEndian.Uint64(q[24:])&exp + one
	}
	if acc&carry == 0 {
		p = p[i:] // the rest, 0 to 7 floats, is scanned below
	} else {
		i = 0
	}
	for j := 0; j+4 <= len(p); j += 4 {
		bits := binary.LittleEndian.Uint32(p[j:])
		if bits&0x7f800000 == 0x7f800000 {
			return (i + j) / 4, math.Float32frombits(bits)
		}
	}
	return -1, 0
}

// CopyFloats copies a float payload into dst and returns the number of
// floats copied, min(len(dst), len(p)/4).
func CopyFloats(dst []float32, p []byte) int {
	n := min(len(dst), len(p)/4)
	if littleEndian {
		return copy(floatBytes(dst[:n]), p) / 4
	}
	for i := range n {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
	}
	return n
}

// FloatWriter copies a little-endian float32 payload that arrives in pieces
// of any length, as received buffers split it, into a float32 slice.
type FloatWriter struct {
	dst   []float32
	n     int     // bytes written
	carry [4]byte // a float split between pieces, on a big-endian host
}

// Reset makes w write into dst from its start.
func (w *FloatWriter) Reset(dst []float32) { w.dst, w.n = dst, 0 }

// Write copies p after what was written before. Writing past the end of
// the destination is an error.
func (w *FloatWriter) Write(p []byte) (int, error) {
	if len(p) > 4*len(w.dst)-w.n {
		return 0, fmt.Errorf("wire: %d bytes written past a payload of %d floats", w.n+len(p)-4*len(w.dst), len(w.dst))
	}
	if littleEndian {
		copy(floatBytes(w.dst)[w.n:], p)
		w.n += len(p)
		return len(p), nil
	}
	for _, c := range p {
		w.carry[w.n%4] = c
		w.n++
		if w.n%4 == 0 {
			w.dst[w.n/4-1] = math.Float32frombits(binary.LittleEndian.Uint32(w.carry[:]))
		}
	}
	return len(p), nil
}

// Written returns the number of bytes written since Reset.
func (w *FloatWriter) Written() int { return w.n }

// littleEndian reports whether float32 memory is laid out as the wire's
// little-endian bytes, so that payloads copy with memmove.
var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// floatBytes views v's memory as bytes.
func floatBytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}
