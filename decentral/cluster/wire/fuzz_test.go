package wire

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
)

// FuzzDecode checks that Decode never panics, that every error is one line
// wrapping ErrMalformed, and that a frame it accepts encodes back to the same
// bytes and respects its invariants.
func FuzzDecode(f *testing.F) {
	f.Add(AppendFloats(nil, Header{Kind: Data, Round: 3, From: 1, To: 2, Total: 2}, []float32{1, 2}), true)
	f.Add(AppendFloats(nil, Header{Kind: Data, K: 1, Offset: 1, Total: 4}, []float32{1, 2, 3}), false)
	f.Add(AppendFloats(nil, Header{Kind: Gather, Total: 1}, []float32{float32(math.NaN())}), true)
	f.Add(AppendText(nil, Header{Kind: Hello, From: 4, To: 5}, "sha256:abc"), false)
	f.Add(AppendText(nil, Header{Kind: Error}, "refused"), false)
	f.Add(AppendText(nil, Header{Kind: Bye, Round: 12, From: 3, To: 4}, "interrupted"), false)
	f.Add(AppendBytes(nil, Header{Round: 5, From: 2, To: 1, Total: 7}, []byte{1, 2, 3, 4, 5, 6, 7}), true)
	f.Add(AppendBytes(nil, Header{K: 1, Offset: 4, Total: 6}, []byte{0xff, 0xff}), false)
	f.Add(AppendBytes(nil, Header{Offset: 3, Total: 4}, []byte{9, 9}), false)
	f.Add(AppendMulti(nil, Header{Kind: Multi, Round: 2, From: 1, Offset: 1, Total: 3}, []int{4, 5}, []float32{1, 2}, nil), true)
	f.Add(AppendMulti(nil, Header{Kind: MultiEncoded, Total: 2}, []int{7}, nil, []byte{1, 2}), false)
	f.Add([]byte("GT\x01"), false)
	f.Add(make([]byte, HeaderSize), false)
	f.Fuzz(func(t *testing.T, b []byte, finite bool) {
		fr, err := Decode(b, finite)
		if len(b) >= HeaderSize {
			h, herr := DecodeHeader(b[:HeaderSize], len(b)-HeaderSize)
			if herr == nil && err == nil && h != fr.Header {
				t.Fatalf("DecodeHeader %+v, Decode %+v", h, fr.Header)
			}
			if (herr != nil) && err == nil {
				t.Fatalf("DecodeHeader refused what Decode accepted: %v", herr)
			}
			if herr == nil && err != nil && !finite {
				t.Fatalf("Decode refused what DecodeHeader accepted: %v", err)
			}
		}
		if err != nil {
			if !errors.Is(err, ErrMalformed) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q: want one line wrapping ErrMalformed", err)
			}
			return
		}
		var again []byte
		if fr.Kind.Floats() {
			if uint64(fr.Offset)+uint64(fr.Len()) > uint64(fr.Total) || len(fr.Payload)%4 != 0 {
				t.Fatalf("accepted a chunk outside its vector: %+v, %d bytes", fr.Header, len(fr.Payload))
			}
			vals := make([]float32, fr.Len())
			CopyFloats(vals, fr.Payload)
			if finite {
				for i, v := range vals {
					if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
						t.Fatalf("accepted %v at float %d with the finite check", v, i)
					}
				}
			}
			again = AppendFloats(nil, fr.Header, vals)
		} else if fr.Kind == Encoded {
			if uint64(fr.Offset)+uint64(len(fr.Payload)) > uint64(fr.Total) {
				t.Fatalf("accepted a chunk outside its message: %+v, %d bytes", fr.Header, len(fr.Payload))
			}
			again = AppendBytes(nil, fr.Header, fr.Payload)
		} else if fr.Kind.Unicast() != fr.Kind {
			d, unit := uint64(fr.To), uint64(1)
			if fr.Kind == Multi {
				unit = 4
			}
			rest := uint64(len(fr.Payload)) - 4*d
			if d == 0 || 4*d > uint64(len(fr.Payload)) || rest%unit != 0 || uint64(fr.Offset)+rest/unit > uint64(fr.Total) {
				t.Fatalf("accepted a bad multicast frame: %+v, %d bytes", fr.Header, len(fr.Payload))
			}
			again = append(AppendHeader(nil, fr.Header), fr.Payload...)
		} else {
			again = AppendText(nil, fr.Header, string(fr.Payload))
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("re-encoding differs:\n got %x\nwant %x", again, b)
		}
	})
}
