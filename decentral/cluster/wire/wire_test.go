package wire

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestRoundTripFloats(t *testing.T) {
	tests := []struct {
		name    string
		h       Header
		payload []float32
	}{
		{"empty vector", Header{Kind: Data, Total: 0}, nil},
		{"whole vector", Header{Kind: Data, Round: 7, From: 3, To: 4, Total: 3}, []float32{1, -2.5, 3e-38}},
		{"last chunk", Header{Kind: Data, K: 1, Round: 1 << 40, From: 1<<32 - 1, To: 0, Offset: 62000, Total: 62006}, []float32{0, 1, 2, 3, 4, 5}},
		{"gather", Header{Kind: Gather, K: 255, Offset: 1, Total: 3}, []float32{math.SmallestNonzeroFloat32, math.MaxFloat32}},
		{"negative zero", Header{Kind: Data, Total: 1}, []float32{float32(math.Copysign(0, -1))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := AppendFloats([]byte("prefix"), tt.h, tt.payload)
			if string(b[:6]) != "prefix" {
				t.Fatalf("AppendFloats overwrote the buffer's prefix: %q", b[:6])
			}
			f, err := Decode(b[6:], true)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if f.Header != tt.h {
				t.Errorf("header %+v, want %+v", f.Header, tt.h)
			}
			if f.Len() != len(tt.payload) {
				t.Fatalf("%d floats, want %d", f.Len(), len(tt.payload))
			}
			got := make([]float32, f.Len())
			if n := CopyFloats(got, f.Payload); n != len(got) {
				t.Fatalf("CopyFloats copied %d, want %d", n, len(got))
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(tt.payload[i]) {
					t.Errorf("float %d = %v, want %v bit for bit", i, got[i], tt.payload[i])
				}
			}
		})
	}
}

func TestRoundTripText(t *testing.T) {
	for _, h := range []Header{
		{Kind: Hello, From: 2, To: 9, Round: 3},
		{Kind: Error, K: 1, Offset: 5, Total: 9}, // offset and total are zeroed
		{Kind: Bye, From: 1, To: 6, Round: 12},
	} {
		text := "sha256:" + strings.Repeat("ab", 32)
		f, err := Decode(AppendText(nil, h, text), false)
		if err != nil {
			t.Fatalf("%s: Decode: %v", h.Kind, err)
		}
		want := h
		want.Offset, want.Total = 0, 0
		if f.Header != want || string(f.Payload) != text {
			t.Errorf("%s: got %+v %q, want %+v %q", h.Kind, f.Header, f.Payload, want, text)
		}
	}
}

// TestEncodedRoundTrip: an ENCODED frame carries any bytes, of any length,
// NaN patterns included, and decodes to its header and payload.
func TestEncodedRoundTrip(t *testing.T) {
	nan := []byte{0, 0, 0xc0, 0x7f, 5}
	for _, h := range []Header{
		{Round: 3, From: 1, To: 2, Total: 5},
		{K: 1, Round: 1 << 40, From: 7, To: 0, Offset: 1000, Total: 1005},
	} {
		b := AppendBytes(nil, h, nan)
		f, err := Decode(b, true)
		if err != nil {
			t.Fatalf("%+v: Decode: %v", h, err)
		}
		h.Kind = Encoded
		if f.Header != h || !bytes.Equal(f.Payload, nan) || f.Kind.Floats() {
			t.Errorf("got %+v %x, want %+v %x", f.Header, f.Payload, h, nan)
		}
	}
	if f, err := Decode(AppendBytes(nil, Header{}, nil), true); err != nil || len(f.Payload) != 0 {
		t.Errorf("empty message: %+v, %v", f, err)
	}
}

func TestDecodeMalformed(t *testing.T) {
	good := AppendFloats(nil, Header{Kind: Data, Total: 4}, []float32{1, 2, 3, 4})
	edit := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	nan := AppendFloats(nil, Header{Kind: Data, Offset: 8, Total: 10}, []float32{1, float32(math.NaN())})
	inf := AppendFloats(nil, Header{Kind: Data, Total: 1}, []float32{float32(math.Inf(-1))})
	tests := []struct {
		name   string
		b      []byte
		finite bool
		want   string
	}{
		{"empty", nil, false, "short frame: 0 bytes"},
		{"short", good[:31], false, "short frame: 31 bytes"},
		{"bad magic", edit(func(b []byte) []byte { b[0] = 'X'; return b }), false, "bad magic"},
		{"bad version", edit(func(b []byte) []byte { b[2] = 9; return b }), false, "version 9"},
		{"reserved", edit(func(b []byte) []byte { b[6] = 1; return b }), false, "reserved bytes"},
		{"unknown kind", edit(func(b []byte) []byte { b[3] = 77; return b }), false, "unknown kind 77"},
		{"zero kind", edit(func(b []byte) []byte { b[3] = 0; return b }), false, "unknown kind 0"},
		{"ragged payload", good[:len(good)-1], false, "not a multiple of 4"},
		{"past the end", edit(func(b []byte) []byte { b[24] = 1; return b }), false, "chunk past the vector's end: floats [1, 5) of 4"},
		{"offset overflow", edit(func(b []byte) []byte { copy(b[24:28], []byte{255, 255, 255, 255}); return b }), false, "chunk past the vector's end"},
		{"NaN", nan, true, "non-finite payload: NaN at float 9"},
		{"Inf", inf, true, "non-finite payload: -Inf at float 0"},
		{"text with total", AppendHeader(nil, Header{Kind: Hello, Total: 1}), false, "HELLO frame with offset 0 and total 1"},
		{"long text", append(AppendHeader(nil, Header{Kind: Error}), make([]byte, MaxText+1)...), false, "ERROR payload of 4097 bytes"},
		{"encoded past the end", AppendBytes(nil, Header{Offset: 2, Total: 4}, []byte{1, 2, 3}), false, "chunk past the message's end: bytes [2, 5) of 4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.b, tt.finite)
			if err == nil {
				t.Fatalf("Decode accepted a malformed frame, want an error with %q", tt.want)
			}
			if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line wrapping ErrMalformed with %q", err, tt.want)
			}
		})
	}
	if _, err := Decode(nan, false); err != nil {
		t.Errorf("Decode without the finite check: %v", err)
	}
}

func TestAppendNoAlloc(t *testing.T) {
	payload := make([]float32, 18378)
	buf := make([]byte, 0, HeaderSize+4*len(payload))
	h := Header{Kind: Data, Total: uint32(len(payload))}
	allocs := testing.AllocsPerRun(100, func() {
		buf = AppendFloats(buf[:0], h, payload)
	})
	if allocs != 0 {
		t.Errorf("AppendFloats into a large enough buffer: %v allocations, want 0", allocs)
	}
	b := AppendFloats(nil, h, payload)
	if !bytes.Equal(b, buf) {
		t.Error("AppendFloats into nil and into a buffer differ")
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{Data: "DATA", Gather: "GATHER", Hello: "HELLO", Error: "ERROR", Bye: "BYE", Encoded: "ENCODED", 9: "kind 9"} {
		if k.String() != want {
			t.Errorf("Kind(%d).String() = %q, want %q", uint8(k), k.String(), want)
		}
	}
}

func TestFirstNonFinite(t *testing.T) {
	bad := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), math.Float32frombits(0xffffffff)}
	for n := range 70 {
		v := make([]float32, n)
		for i := range v {
			v[i] = math.Float32frombits(uint32(i) * 0x9e3779b9 &^ 0x00800000) // finite
		}
		b := AppendFloats(nil, Header{Kind: Data, Total: uint32(n)}, v)[HeaderSize:]
		if i, _ := firstNonFinite(b); i != -1 {
			t.Fatalf("%d finite floats: non-finite found at %d", n, i)
		}
		for pos := range n {
			for _, x := range bad {
				w := append([]float32(nil), v...)
				w[pos] = x
				if pos+1 < n {
					w[n-1] = float32(math.NaN()) // a later one must not be reported first
				}
				b := AppendFloats(nil, Header{Kind: Data, Total: uint32(n)}, w)[HeaderSize:]
				if i, got := firstNonFinite(b); i != pos || math.Float32bits(got) != math.Float32bits(x) {
					t.Fatalf("%d floats, %v at %d: found %v at %d", n, x, pos, got, i)
				}
			}
		}
	}
}

// TestFloatWriterPieces: a payload split anywhere, even inside a float,
// arrives whole; writing past the end is an error.
func TestFloatWriterPieces(t *testing.T) {
	want := []float32{1.5, -2, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, 3e38, 7}
	b := AppendFloats(nil, Header{Kind: Data, Total: 6}, want)[HeaderSize:]
	for cut1 := 0; cut1 <= len(b); cut1++ {
		for cut2 := cut1; cut2 <= len(b); cut2 += 3 {
			got := make([]float32, len(want))
			var w FloatWriter
			w.Reset(got)
			for _, piece := range [][]byte{b[:cut1], b[cut1:cut2], b[cut2:]} {
				if _, err := w.Write(piece); err != nil {
					t.Fatal(err)
				}
			}
			if w.Written() != len(b) {
				t.Fatalf("wrote %d bytes, want %d", w.Written(), len(b))
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("cuts %d, %d: float %d = %v, want %v", cut1, cut2, i, got[i], want[i])
				}
			}
			if _, err := w.Write([]byte{0}); err == nil {
				t.Fatal("a write past the end accepted")
			}
		}
	}
	if err := CheckFinite([]float32{1, 2, float32(math.Inf(-1))}, 10); err == nil || !strings.Contains(err.Error(), "-Inf at float 12") {
		t.Errorf("CheckFinite: %v, want -Inf at float 12", err)
	}
	if err := CheckFinite(want, 0); err != nil {
		t.Errorf("CheckFinite of finite floats: %v", err)
	}
}
