package models

import (
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// patchesNet is a small lucidrains-style patch embedding on 3×8×12: 4×3
// patches in the given order (8 tokens of 36 features), ChannelNorm (the
// LayerNorm of the patches), a Linear 36→8 (a 1×1 Conv), the position
// embedding, GELU, the mean over the tokens and a Dense head.
func patchesNet(order PatchOrder) func() (Model, error) {
	return func() (Model, error) {
		name := map[PatchOrder]string{PatchesPixelMajor: "patches", PatchesChannelMajor: "patches_cm"}[order]
		n := NewNet(name, []int{3, 8, 12}, 4)
		h := n.ChannelNorm("norm_in", n.Patches(n.Input(), 4, 3, order), 1e-5)
		h = n.PositionEmbedding("pos", n.Conv2D("linear", h, Conv{Out: 8, Kernel: 1, Bias: true}))
		return n.Model(n.Dense("head", n.GlobalAvgPool(n.GELU(h)), 4))
	}
}

// TestPatchesLayer checks Net.Patches' shapes, its spec and its
// refusals, each one line naming the layer.
func TestPatchesLayer(t *testing.T) {
	for _, c := range []struct {
		name          string
		shape         []int
		height, width int
		order         PatchOrder
		want          []int  // the output's shape
		err           string // the refusal
	}{
		{"lucidrains' CIFAR ViT", []int{3, 32, 32}, 4, 4, PatchesPixelMajor, []int{48, 64, 1}, ""},
		{"channel-major, non-square", []int{3, 8, 12}, 4, 3, PatchesChannelMajor, []int{36, 8, 1}, ""},
		{"gray", []int{1, 28, 28}, 7, 7, PatchesPixelMajor, []int{49, 16, 1}, ""},
		{"one patch", []int{2, 3, 5}, 3, 5, PatchesChannelMajor, []int{30, 1, 1}, ""},
		{"height not dividing", []int{3, 32, 32}, 5, 4, PatchesPixelMajor, nil, "net: patches#1: patches 5×4 do not tile the 32×32 image"},
		{"width not dividing", []int{3, 8, 12}, 4, 5, PatchesPixelMajor, nil, "patches 4×5 do not tile"},
		{"no patch", []int{3, 8, 8}, 0, 4, PatchesPixelMajor, nil, "patches 0×4 do not tile"},
		{"unknown order", []int{3, 8, 8}, 4, 4, PatchOrder(2), nil, "patch order 2, want PatchesPixelMajor or PatchesChannelMajor"},
		{"a vector", []int{12}, 2, 2, PatchesPixelMajor, nil, "reads a tensor of shape [12], want an image [C,H,W]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := NewNet("net", c.shape, 3)
			y := n.Patches(n.Input(), c.height, c.width, c.order)
			if c.err != "" {
				if err := n.Err(); err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), "\n") {
					t.Errorf("error %v, want one line containing %q", err, c.err)
				}
				return
			}
			if got := n.Shape(y); !slices.Equal(got, c.want) {
				t.Fatalf("shape %v (%v), want %v", got, n.Err(), c.want)
			}
			m, err := n.Model(n.Dense("fc", y, 3))
			if err != nil {
				t.Fatal(err)
			}
			s, err := Spec(m)
			if err != nil {
				t.Fatal(err)
			}
			want := LayerSpec{Op: "patches", In: []int{0}, PatchH: c.height, PatchW: c.width, ChannelMajor: c.order == PatchesChannelMajor}
			if l := s.Layers[0]; l.Op != want.Op || l.PatchH != want.PatchH || l.PatchW != want.PatchW || l.ChannelMajor != want.ChannelMajor {
				t.Errorf("spec %+v, want %+v", l, want)
			}
			r, err := NetFromSpec(s)
			if err != nil {
				t.Fatal(err)
			}
			if s2, _ := Spec(r); s2.Layers[0].PatchH != c.height || s2.Layers[0].ChannelMajor != want.ChannelMajor {
				t.Errorf("the rebuilt spec %+v, want %+v", s2.Layers[0], want)
			}
		})
	}
}

// setIntConstant sets the value of the Constant node writing out, an
// int64 scalar or vector of one value, to v.
func setIntConstant(m *onnx.Model, out string, v int64) bool {
	for i, n := range m.Graph.Nodes {
		if n.OpType == "Constant" && len(n.Outputs) == 1 && n.Outputs[0] == out && len(n.Attrs) == 1 && n.Attrs[0].T != nil && len(n.Attrs[0].T.Int64s) == 1 {
			m.Graph.Nodes[i].Attrs[0].T.Int64s = []int64{v}
			return true
		}
	}
	return false
}

// setInput makes input k of the node named node read in.
func setInput(m *onnx.Model, node string, k int, in string) bool {
	for i, n := range m.Graph.Nodes {
		if n.Name == node && k < len(n.Inputs) {
			m.Graph.Nodes[i].Inputs[k] = in
			return true
		}
	}
	return false
}
