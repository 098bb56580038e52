package compress

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"
)

// put32 returns a copy of msg with the uint32 at byte off set to x.
func put32(off int, x uint32) func([]byte) []byte {
	return func(msg []byte) []byte {
		msg = slices.Clone(msg)
		binary.LittleEndian.PutUint32(msg[off:], x)
		return msg
	}
}

// orByte returns a copy of msg with byte off (from the end if negative)
// or-ed with x.
func orByte(off int, x byte) func([]byte) []byte {
	return func(msg []byte) []byte {
		msg = slices.Clone(msg)
		if off < 0 {
			off += len(msg)
		}
		msg[off] |= x
		return msg
	}
}

// TestDecodeRejects spoils valid messages and checks Decode returns a
// one-line error naming the compressor and the fault, and leaves out alone.
func TestDecodeRejects(t *testing.T) {
	const p = 13 // k = 4 for F = 0.3; qsgd:8 packs 13·5 = 65 bits, sign 13 bits
	short := func(msg []byte) []byte { return msg[:len(msg)-1] }
	long := func(msg []byte) []byte { return append(slices.Clone(msg), 0) }
	empty := func([]byte) []byte { return nil }
	nan, inf := math.Float32bits(float32(math.NaN())), math.Float32bits(float32(math.Inf(1)))
	neg := math.Float32bits(-1)
	tests := []struct {
		spec  string
		spoil func([]byte) []byte
		want  string
	}{
		{"none", short, "want 52 bytes"},
		{"none", long, "want 52 bytes"},
		{"none", empty, "want 52 bytes"},
		{"topk:0.3", short, "want 32 bytes"},
		{"topk:0.3", long, "want 32 bytes"},
		{"topk:0.3", put32(12, p), "want < p = 13"},
		{"topk:0.3", put32(0, math.MaxUint32), "want < p = 13"},
		{"topk:0.3", put32(4, 0), "want increasing"}, // index #0 is 0 or #1 goes to 0
		{"topk:0.3", func(m []byte) []byte { return put32(8, binary.LittleEndian.Uint32(m[4:]))(m) }, "want increasing"},
		{"randk:0.3", short, "want 24 bytes"},
		{"randk:0.3", long, "want 24 bytes"},
		{"qsgd:8", short, "want 13 bytes"},
		{"qsgd:8", long, "want 13 bytes"},
		{"qsgd:8", put32(0, nan), "norm is NaN"},
		{"qsgd:8", put32(0, inf), "norm is +Inf"},
		{"qsgd:8", put32(0, neg), "norm is -1"},
		{"qsgd:8", orByte(-1, 0x80), "pad bits"},
		{"qsgd:8", orByte(4, 0x1e), "has level 15: want ≤ 8"},
		{"qsgd:8", func(m []byte) []byte { return orByte(-1, 0x01)(orByte(-2, 0x20)(m)) }, "entry 12 has level"}, // straddles bytes
		{"qsgd:7", put32(0, nan), "norm is NaN"},
		{"qsgd:7", orByte(-1, 0xf0), "pad bits"},
		{"sign", short, "want 6 bytes"},
		{"sign", long, "want 6 bytes"},
		{"sign", put32(0, nan), "scale is NaN"},
		{"sign", put32(0, neg), "scale is -1"},
		{"sign", orByte(-1, 0x20), "pad bits"},
	}
	v := randVec(p, 1)
	v[0] = 2 // a large first entry so top-k keeps index 0
	for _, tt := range tests {
		c := mustParse(t, tt.spec)
		bad := tt.spoil(c.Encode(nil, v, 1))
		out := make([]float32, p)
		for i := range out {
			out[i] = 42
		}
		err := c.Decode(out, bad)
		if err == nil {
			t.Errorf("%s: Decode of % x: no error, want %q", tt.spec, bad, tt.want)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tt.want) || !strings.Contains(msg, tt.spec) || strings.Contains(msg, "\n") {
			t.Errorf("%s: Decode error %q, want one line naming %s and saying %q", tt.spec, msg, tt.spec, tt.want)
		}
		for i, x := range out {
			if x != 42 {
				t.Fatalf("%s: failed Decode changed out[%d] to %g", tt.spec, i, x)
			}
		}
	}
}

// TestEncodeNonFinite checks the norm-based compressors turn a vector with
// NaN or Inf into a message Decode rejects, without panicking.
func TestEncodeNonFinite(t *testing.T) {
	for _, spec := range []string{"qsgd:7", "qsgd:300", "sign"} {
		c := mustParse(t, spec)
		for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			v := []float32{1, float32(bad), -2}
			if err := c.Decode(make([]float32, 3), c.Encode(nil, v, 3)); err == nil {
				t.Errorf("%s: the message of %v decodes without error", spec, v)
			}
		}
	}
}

// FuzzDecode feeds arbitrary messages to every compressor's Decode for
// vectors of up to 300 floats: it must never panic, must reject a message
// of the wrong length, and what none accepts must encode back to itself.
// The seed corpus is valid messages of each compressor.
func FuzzDecode(f *testing.F) {
	for si, spec := range testSpecs {
		c := mustParse(f, spec)
		for _, p := range []int{0, 1, 7, 9, 33, 300} {
			f.Add(uint8(si), uint16(p), c.Encode(nil, randVec(p, uint64(p)), 5))
		}
	}
	f.Fuzz(func(t *testing.T, si uint8, p uint16, msg []byte) {
		c := mustParse(t, testSpecs[int(si)%len(testSpecs)])
		n := int(p) % 301
		out := make([]float32, n)
		err := c.Decode(out, msg)
		if len(msg) != c.Size(n) && err == nil {
			t.Fatalf("%s accepted a %d-byte message for p = %d, want %d bytes", c, len(msg), n, c.Size(n))
		}
		if err == nil && c.String() == "none" {
			if back := c.Encode(nil, out, 0); string(back) != string(msg) {
				t.Fatalf("none: % x decodes to %v, which encodes to % x", msg, out, back)
			}
		}
	})
}
