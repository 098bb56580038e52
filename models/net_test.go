package models

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestNetRefuses checks that every description a Net cannot make is
// refused with an error naming the network, the layer and what it needs.
func TestNetRefuses(t *testing.T) {
	img := []int{3, 16, 16}
	conv := func(c Conv) func(n *Net) Tensor {
		return func(n *Net) Tensor { return n.Conv2D("c", n.Input(), c) }
	}
	for _, c := range []struct {
		name  string
		shape []int
		build func(n *Net) Tensor
		want  string
	}{
		{"zero out channels", img, conv(Conv{Kernel: 3}), "c: 0 output channels"},
		{"zero kernel", img, conv(Conv{Out: 4}), "c: kernel 0"},
		{"negative stride", img, conv(Conv{Out: 4, Kernel: 3, Stride: -1}), "stride -1"},
		{"negative padding", img, conv(Conv{Out: 4, Kernel: 3, Pad: -1}), "padding -1"},
		{"kernel too large", img, conv(Conv{Out: 4, Kernel: 17}), "does not fit the 16×16 input"},
		{"unknown init", img, conv(Conv{Out: 4, Kernel: 3, Init: 7}), "unknown initialisation"},
		{"conv on flat samples", []int{48}, conv(Conv{Out: 4, Kernel: 3}), "want an image [C,H,W]"},
		{"groups do not divide", img, func(n *Net) Tensor { return n.GroupNorm("gn", n.Input(), 2) }, "2 groups do not divide 3 channels"},
		{"zero groups", img, func(n *Net) Tensor { return n.GroupNorm("gn", n.Input(), 0) }, "0 groups"},
		{"pool too large", img, func(n *Net) Tensor { return n.MaxPool(n.Input(), 17, 1) }, "does not fit"},
		{"zero stride pool", img, func(n *Net) Tensor { return n.AvgPool(n.Input(), 2, 0) }, "stride 0"},
		{"pool padding over half the window", img, func(n *Net) Tensor { return n.MaxPoolPadded(n.Input(), 2, 2, 2) }, "padding ≤ window/2"},
		{"dropout rate 1", img, func(n *Net) Tensor { return n.Dropout(n.Input(), 1) }, "rate 1, want 0 ≤ p < 1"},
		{"dropout rate NaN", img, func(n *Net) Tensor { return n.Dropout(n.Input(), float32(math.NaN())) }, "want 0 ≤ p < 1"},
		{"add of two shapes", img, func(n *Net) Tensor {
			return n.Add(n.Input(), n.MaxPool(n.Input(), 2, 2))
		}, "adds tensors of shapes [3 16 16] and [3 8 8]"},
		{"sub of two shapes", img, func(n *Net) Tensor {
			return n.Sub(n.Input(), n.MaxPool(n.Input(), 2, 2))
		}, "sub#2: subtracts tensors of shapes [3 16 16] and [3 8 8]"},
		{"token range past the tokens", img, func(n *Net) Tensor { return n.TokenRange(n.Input(), 250, 7) }, "positions [250,257) of 256"},
		{"scores of a pool of another length", img, func(n *Net) Tensor {
			return n.AttentionPool(n.Input(), n.MaxPool(n.Conv2D("s", n.Input(), Conv{Out: 1, Kernel: 1}), 2, 2))
		}, "scores of shape [1 8 8] for tokens [3 16 16], want [1,16,16]"},
		{"zero units", img, func(n *Net) Tensor { return n.Dense("fc", n.Input(), 0) }, "0 units"},
		{"name taken", img, func(n *Net) Tensor {
			return n.Dense("fc", n.Dense("fc", n.Input(), 4), 10)
		}, "two layers have this name"},
		{"empty name", img, func(n *Net) Tensor { return n.Dense("", n.Input(), 10) }, "non-empty word"},
		{"name with #", img, func(n *Net) Tensor { return n.Dense("relu#1", n.Input(), 10) }, "without '#'"},
		{"reserved name", img, func(n *Net) Tensor { return n.Dense(ONNXOutput, n.Input(), 10) }, "input or output"},
		{"foreign tensor", img, func(n *Net) Tensor { return n.ReLU(Tensor{5}) }, "not of this network"},
		{"output not the logits", img, func(n *Net) Tensor { return n.Dense("fc", n.Input(), 4) }, "want the 10 class logits"},
		{"output not last", img, func(n *Net) Tensor {
			out := n.Dense("fc", n.Input(), 10)
			n.ReLU(out)
			return out
		}, "not the last layer"},
		{"first error kept", img, func(n *Net) Tensor {
			n.Conv2D("bad", n.Input(), Conv{Out: 4})
			return n.Dense("fc", n.Input(), 0)
		}, "bad: kernel 0"},
		{"no features", []int{3, 0, 16}, func(n *Net) Tensor { return n.Dense("fc", n.Input(), 10) }, "want at least one feature"},
	} {
		n := NewNet("net", c.shape, 10)
		_, err := n.Model(c.build(n))
		if err == nil || !strings.HasPrefix(err.Error(), "net: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// TestNetShapes checks the shapes a Net infers against PyTorch's rules:
// padded and strided convolutions and pools round down.
func TestNetShapes(t *testing.T) {
	n := NewNet("net", []int{3, 9, 7}, 5)
	a := n.Conv2D("a", n.Input(), Conv{Out: 4, Kernel: 3, Stride: 2, Pad: 1}) // (9+2−3)/2+1, (7+2−3)/2+1
	b := n.Conv2D("b", n.Input(), Conv{Out: 2, Kernel: 5, Pad: 2, Bias: true})
	c := n.AvgPool(b, 3, 2)
	d := n.GlobalAvgPool(a)
	e := n.Flatten(c)
	for _, w := range []struct {
		t    Tensor
		want []int
	}{{a, []int{4, 5, 4}}, {b, []int{2, 9, 7}}, {c, []int{2, 4, 3}}, {d, []int{4}}, {e, []int{24}}} {
		if got := n.Shape(w.t); !slices.Equal(got, w.want) {
			t.Errorf("shape %v, want %v", got, w.want)
		}
	}
	if _, err := n.Model(n.Dense("fc", e, 5)); err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, p := range n.Params() {
		names = append(names, p.Name)
	}
	if got := strings.Join(names, " "); got != "a.w b.w b.b fc.w fc.b" {
		t.Errorf("parameters %s", got)
	}
}
