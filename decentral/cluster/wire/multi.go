package wire

import (
	"encoding/binary"
	"math"
)

// Multicast kinds: one chunk for several receiving nodes of one rank.
const (
	// Multi carries a chunk of a shared vector of a round, as DATA does,
	// to several nodes: To is their number n ≥ 1, and the payload is the
	// n destination nodes, uint32 little-endian each, then the chunk's
	// floats. Offset and Total count floats of the vector.
	Multi Kind = 7
	// MultiEncoded is Multi for a chunk of an encoded message (ENCODED):
	// the destination list, then the chunk's bytes; Offset and Total
	// count bytes of the message.
	MultiEncoded Kind = 8
)

// MaxDests is the most destinations a MULTI or MULTIENC frame may name.
const MaxDests = 1 << 20

// Unicast returns the kind of the frame a multicast frame of kind k
// stands for to each destination: DATA for MULTI, ENCODED for MULTIENC,
// and k itself otherwise.
func (k Kind) Unicast() Kind {
	switch k {
	case Multi:
		return Data
	case MultiEncoded:
		return Encoded
	}
	return k
}

// AppendMulti appends a multicast frame: h's header with To set to
// len(dests), then dests, then payload — little-endian float32s for
// Multi, or, with h.Kind MultiEncoded, the bytes of raw (payload unused).
// It does not check that the chunk lies within h.Total; Decode does.
func AppendMulti(dst []byte, h Header, dests []int, payload []float32, raw []byte) []byte {
	h.To = uint32(len(dests))
	dst = AppendHeader(dst, h)
	for _, d := range dests {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(d))
	}
	if h.Kind == MultiEncoded {
		return append(dst, raw...)
	}
	if littleEndian {
		return append(dst, floatBytes(payload)...)
	}
	for _, v := range payload {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(v))
	}
	return dst
}

// checkMulti checks the header of a multicast frame of n payload bytes.
func checkMulti(h Header, n int) error {
	d := uint64(h.To)
	switch {
	case d == 0 || d > MaxDests:
		return malformed("%s frame with %d destinations, want 1 to %d", h.Kind, d, MaxDests)
	case 4*d > uint64(n):
		return malformed("%s payload of %d bytes, shorter than its %d destinations", h.Kind, n, d)
	}
	rest := uint64(n) - 4*d
	if h.Kind == Multi {
		if rest%4 != 0 {
			return malformed("%s chunk of %d bytes, not a multiple of 4", h.Kind, rest)
		}
		rest /= 4
	}
	if end := uint64(h.Offset) + rest; end > uint64(h.Total) {
		return malformed("%s chunk past the end: [%d, %d) of %d", h.Kind, h.Offset, end, h.Total)
	}
	return nil
}
