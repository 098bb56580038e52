package wire

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"
)

// TestMulti: a MULTI frame decodes to its destination list and floats; a
// MULTIENC one to its list and bytes; bad lists and chunks are malformed.
func TestMulti(t *testing.T) {
	h := Header{Kind: Multi, K: 1, Round: 9, From: 4, Offset: 2, Total: 5}
	b := AppendMulti(nil, h, []int{7, 3}, []float32{1.5, -2, 3}, nil)
	f, err := Decode(b, true)
	if err != nil {
		t.Fatal(err)
	}
	if f.Kind != Multi || f.To != 2 || f.Kind.Unicast() != Data || f.Kind.String() != "MULTI" {
		t.Fatalf("decoded %+v", f.Header)
	}
	if binary.LittleEndian.Uint32(f.Payload) != 7 || binary.LittleEndian.Uint32(f.Payload[4:]) != 3 {
		t.Errorf("destinations % x", f.Payload[:8])
	}
	got := make([]float32, 3)
	if CopyFloats(got, f.Payload[8:]) != 3 || got[0] != 1.5 || got[1] != -2 || got[2] != 3 {
		t.Errorf("floats %v", got)
	}
	e := AppendMulti(nil, Header{Kind: MultiEncoded, Round: 1, Total: 3}, []int{1}, nil, []byte{9, 8, 7})
	if f, err := Decode(e, true); err != nil || f.Kind.Unicast() != Encoded || string(f.Payload[4:]) != "\x09\x08\x07" {
		t.Errorf("encoded: %+v %v", f, err)
	}
	for _, tt := range []struct {
		name string
		b    []byte
		want string
	}{
		{"no destination", AppendMulti(nil, h, nil, []float32{1}, nil), "0 destinations"},
		{"short list", b[:HeaderSize+4], "shorter than its 2 destinations"},
		{"ragged", append(AppendMulti(nil, h, []int{1}, []float32{1}, nil), 0), "not a multiple of 4"},
		{"past the end", AppendMulti(nil, h, []int{1}, []float32{1, 2, 3, 4}, nil), "past the end"},
		{"NaN", AppendMulti(nil, h, []int{1}, []float32{float32(math.NaN())}, nil), "non-finite payload: NaN at float 2"},
		{"too many", func() []byte {
			c := append([]byte(nil), b...)
			binary.LittleEndian.PutUint32(c[20:], math.MaxUint32)
			return c
		}(), "destinations, want 1 to"},
	} {
		if _, err := Decode(tt.b, true); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}
