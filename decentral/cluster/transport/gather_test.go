package transport

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
)

// TestStateRoundTrip: a node state survives its GATHER payload bit for bit.
func TestStateRoundTrip(t *testing.T) {
	for _, s := range []decentral.NodeState{
		{Node: 3, X: []float32{1, -2.5, float32(math.SmallestNonzeroFloat32)}, Samples: 1 << 40, Evals: 7, Bytes: 99, Loss: 0.25},
		{Node: 0, X: []float32{}, Loss: math.NaN()},
	} {
		got, err := DecodeState(AppendState(nil, s), len(s.X))
		if err != nil {
			t.Fatal(err)
		}
		if got.Node != s.Node || !slices.Equal(got.X, s.X) || got.Samples != s.Samples || got.Evals != s.Evals ||
			got.Bytes != s.Bytes || math.Float64bits(got.Loss) != math.Float64bits(s.Loss) {
			t.Errorf("state %+v came back as %+v", s, got)
		}
	}
}

// TestStateRefused: a malformed GATHER payload is refused, naming the fault.
func TestStateRefused(t *testing.T) {
	good := AppendState(nil, decentral.NodeState{Node: 1, X: []float32{1, 2}})
	nan := AppendState(nil, decentral.NodeState{Node: 1, X: []float32{1, float32(math.NaN())}})
	neg := AppendState(nil, decentral.NodeState{Node: 1, X: []float32{1, 2}, Samples: -4})
	inf := AppendState(nil, decentral.NodeState{Node: 1, X: []float32{1, 2}, Loss: math.Inf(1)})
	for _, tc := range []struct {
		name string
		b    []byte
		p    int
		want string
	}{
		{"short", good[:10], 2, "bytes"},
		{"ragged", good[:len(good)-1], 2, "bytes"},
		{"wrong length", good, 3, "2 parameters, want 3"},
		{"NaN", nan, 2, "parameter 1"},
		{"negative counter", neg, 2, "-4 samples"},
		{"infinite loss", inf, 2, "loss +Inf"},
	} {
		if _, err := DecodeState(tc.b, tc.p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
}

// FuzzDecodeState: no payload makes DecodeState panic, and what it accepts
// encodes back to the same bytes.
func FuzzDecodeState(f *testing.F) {
	f.Add(AppendState(nil, decentral.NodeState{Node: 2, X: []float32{1, 2, 3}, Loss: 1}), 3)
	f.Add([]byte{1, 2, 3}, 0)
	f.Fuzz(func(t *testing.T, b []byte, p int) {
		s, err := DecodeState(b, p)
		if err != nil {
			return
		}
		if again := AppendState(nil, s); !slices.Equal(again, b) {
			t.Fatalf("accepted %x, which encodes back as %x", b, again)
		}
	})
}
