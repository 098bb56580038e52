package models

import (
	"strings"
	"testing"
)

// fixupNet is a Fixup residual block (Zhang et al. 2019) with its
// downsample of x + bias1a (bias1a read twice: ShiftLike), and ReZero's
// alpha on a second branch: the scalar layers Scale and Shift.
func fixupNet() (Model, error) {
	n := NewNet("fixup", []int{3, 8, 8}, 4)
	x := n.Conv2D("stem", n.Input(), Conv{Out: 4, Kernel: 3, Pad: 1, Bias: true})
	h := n.ReLU(n.Conv2D("conv1", n.Shift("bias1a", x), Conv{Out: 4, Kernel: 3, Stride: 2, Pad: 1}))
	h = n.Shift("bias2b", n.Scale("scale", n.Conv2D("conv2", n.Shift("bias2a", h), Conv{Out: 4, Kernel: 3, Pad: 1})))
	x = n.Conv2D("downsample", n.ShiftLike("bias1a", x), Conv{Out: 4, Kernel: 1, Stride: 2})
	h = n.Add(n.Add(x, h), n.Scale("alpha", n.Tanh(n.Conv2D("branch", x, Conv{Out: 4, Kernel: 1}))))
	return n.Model(n.Dense("fc", n.Shift("bias3", n.GlobalAvgPool(n.ReLU(h))), 4))
}

// TestScalarLayers checks Scale's and Shift's parameters (one value each,
// starting at 1 and 0) and their refusals, and ChannelShift's,
// L2Normalize's and LocalResponseNorm's.
func TestScalarLayers(t *testing.T) {
	m, err := fixupNet()
	if err != nil {
		t.Fatal(err)
	}
	x0 := m.Init(1)
	want := map[string]float32{"bias1a.b": 0, "bias2a.b": 0, "scale.s": 1, "bias2b.b": 0, "alpha.s": 1, "bias3.b": 0}
	for _, p := range m.Params() {
		if v, ok := want[p.Name]; ok {
			if p.Size() != 1 || x0[p.Offset] != v {
				t.Errorf("%s: %d values starting at %g, want one at %g", p.Name, p.Size(), x0[p.Offset], v)
			}
			delete(want, p.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing parameters %v", want)
	}
	for _, c := range []struct {
		name  string
		build func(n *Net)
		want  string
	}{
		{"two layers named s", func(n *Net) { n.Shift("s", n.Scale("s", n.Input())) }, "s: two layers"},
		{"a shift like a scale", func(n *Net) { n.ShiftLike("s", n.Scale("s", n.Input())) }, `uses the value of "s", want a shift layer with a value of its own`},
		{"like no layer", func(n *Net) { n.ScaleLike("t", n.Input()) }, `uses the value of "t", want a scale layer`},
		{"a shift a channel of a vector", func(n *Net) { n.ChannelShift("cs", n.Flatten(n.Input())) }, "cs: reads a tensor of shape [16], want an image [C,H,W]"},
		{"a normalised image", func(n *Net) { n.L2Normalize(n.Input(), 1e-12) }, "l2normalize#1: reads a tensor of shape [1 4 4], want a vector [F]"},
		{"a normalisation of ε 0", func(n *Net) { n.L2Normalize(n.Flatten(n.Input()), 0) }, "ε 0, want a finite number above 0"},
		{"a response normalisation of no channel", func(n *Net) { n.LocalResponseNorm(n.Input(), LRN{Alpha: 1, Beta: 1, K: 1}) }, "lrn#1: size 0, alpha 1, beta 1, k 1: want a size from 1"},
		{"a response normalisation of k 0", func(n *Net) { n.LocalResponseNorm(n.Input(), LRN{Size: 3, Alpha: 1, Beta: 1}) }, "k above 0"},
		{"a response normalisation of a vector", func(n *Net) { n.LocalResponseNorm(n.Flatten(n.Input()), LRN{Size: 3, Alpha: 1, Beta: 1, K: 1}) }, "want an image [C,H,W]"},
		{"like a shared one", func(n *Net) {
			h := n.ShiftLike("s", n.Shift("s", n.Input()))
			n.ShiftLike("shift#2", h)
		}, `uses the value of "shift#2", want a shift layer with a value of its own`},
	} {
		n := NewNet("bad", []int{1, 4, 4}, 2)
		c.build(n)
		if err := n.Err(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}
