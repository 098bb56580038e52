package models

import (
	"strings"
	"testing"
)

// TestGroupNormOneChannelAGroupRoundTrip exports a GroupNorm of one
// channel a group (nn.GroupNorm(C, C), the usual swap for a BatchNorm of
// 32 channels or fewer: nn.GroupNorm(min(32, C), C)) and imports it: its
// Reshape [N,C,−1] reads like a patch embedding's flatten(2), and the
// import takes it, and the InstanceNormalization after it, as the
// GroupNorm it is. The import trains as the original, bit for bit.
func TestGroupNormOneChannelAGroupRoundTrip(t *testing.T) {
	n := NewNet("gnc", []int{3, 8, 8}, 3)
	h := n.ReLU(n.GroupNorm("gn1", n.Conv2D("c1", n.Input(), Conv{Out: 4, Kernel: 3, Pad: 1}), 4))
	h = n.ReLU(n.GroupNorm("gn2", n.Conv2D("c2", h, Conv{Out: 6, Kernel: 3, Stride: 2, Pad: 1}), 2))
	m, err := n.Model(n.Dense("fc", n.GlobalAvgPool(h), 3))
	if err != nil {
		t.Fatal(err)
	}
	params := onnxrtParams(m, 4) // scales and shifts off 1 and 0
	_, enc := marshalONNX(t, m, params)
	im, _ := roundTrips(t, "gnc", m, params, enc, batchOf(imageSet(23, 5, 3, true, 3, 8, 8), seq(5)...))
	ispec, _ := specJSON(t, im)
	var got []string
	for _, l := range ispec.Layers {
		got = append(got, l.Op)
		if l.Op == "groupnorm" && l.Groups != map[string]int{"gn1": 4, "gn2": 2}[l.Name] {
			t.Errorf("imported groupnorm %s of %d groups, want the export's", l.Name, l.Groups)
		}
	}
	if want := "conv groupnorm relu conv groupnorm relu globalavgpool dense"; strings.Join(got, " ") != want {
		t.Errorf("the imported export's layers %v, want %s", got, want)
	}
}
