package models

import (
	"math"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// TestImportPReLURefusals checks that PRelu slopes which are neither one
// value nor one a channel, or hold NaN, are refused in one line naming
// the slope, and that torch's spellings import.
func TestImportPReLURefusals(t *testing.T) {
	conv := onnx.FloatTensor("k", ramp(3*1*1*1, 1), 3, 1, 1, 1) // 1 → 3 channels, 1×1
	cases := []struct {
		name  string
		slope onnx.Tensor
		want  string // "" for an import
	}{
		{"one a channel, [C,1,1]", onnx.FloatTensor("a", []float32{0.1, 0.2, 0.3}, 3, 1, 1), ""},
		{"one, [1]", onnx.FloatTensor("a", []float32{0.1}, 1), ""},
		{"one, [1,1,1]", onnx.FloatTensor("a", []float32{0.1}, 1, 1, 1), ""},
		{"one a channel with the batch's 1, [1,C,1,1]", onnx.FloatTensor("a", []float32{0.1, 0.2, 0.3}, 1, 3, 1, 1), ""},
		{"[C] of an image: one a column", onnx.FloatTensor("a", []float32{0.1, 0.2, 0.3}, 3), `slope "a" of shape [3] for data [N,3,4,4]`},
		{"two for three channels", onnx.FloatTensor("a", []float32{0.1, 0.2}, 2, 1, 1), `slope "a" of shape [2 1 1]`},
		{"one a value", onnx.FloatTensor("a", ramp(48, 1), 3, 4, 4), `slope "a" of shape [3 4 4]`},
		{"NaN", onnx.FloatTensor("a", []float32{0.1, float32(math.NaN()), 0.3}, 3, 1, 1), `slope "a" holds NaN`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nodes := []onnx.Node{node("Conv", []string{"x", "k"}, "c"), node("PRelu", []string{"c", "a"}, "p"), node("Flatten", []string{"p"}, "y")}
			m, x0, err := ImportONNX("prelu", tinyONNX(t, 13, batchN, []onnx.Tensor{conv, c.slope}, nodes...), []int{1, 4, 4}, 48)
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("%v, want one line naming %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var slopes []float32
			for _, p := range m.Params() {
				if strings.HasSuffix(p.Name, ".a") {
					slopes = x0[p.Offset : p.Offset+p.Size()]
				}
			}
			if len(slopes) != len(c.slope.Floats) || slopes[0] != 0.1 {
				t.Fatalf("slopes %v in x⁰, want the file's", slopes)
			}
		})
	}
}

// TestPReLUSlopes checks the layer's slope count: one, or one a channel,
// and a one-line error otherwise; and torch's initial slope 0.25.
func TestPReLUSlopes(t *testing.T) {
	for _, c := range []struct {
		shape  []int
		slopes int
		want   string
	}{
		{[]int{3, 4, 4}, 3, ""},
		{[]int{3, 4, 4}, 1, ""},
		{[]int{5}, 5, ""},
		{[]int{3, 4, 4}, 4, "4 slopes for a tensor of shape [3 4 4], want 1 or 3"},
		{[]int{3, 4, 4}, 0, "0 slopes"},
	} {
		n := NewNet("p", c.shape, 2)
		h := n.PReLU("act", n.Input(), c.slopes)
		m, err := n.Model(n.Dense("fc", n.Flatten(h), 2))
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v slopes %d: %v, want an error naming %q", c.shape, c.slopes, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v slopes %d: %v", c.shape, c.slopes, err)
		}
		x0 := m.Init(1)
		p := m.Params()[0]
		if p.Name != "act.a" || p.Size() != c.slopes || x0[p.Offset] != 0.25 {
			t.Errorf("%v slopes %d: first tensor %s of %d values starting at %g, want act.a of %d at 0.25", c.shape, c.slopes, p.Name, p.Size(), x0[p.Offset], c.slopes)
		}
	}
}
