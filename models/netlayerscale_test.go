package models

import (
	"strings"
	"testing"
)

// TestNewLayersRoundTrip exports a network of this session's layers —
// PReLU (a slope a channel, and one for all), LayerScale and
// GlobalMaxPool — to ONNX and imports it, and stores it as a NetSpec and
// rebuilds it: each trains as the original, bit for bit, and the import
// gives the same layers back (LayerScale trainable, not a constant).
func TestNewLayersRoundTrip(t *testing.T) {
	n := NewNet("newlayers", []int{3, 8, 8}, 3)
	h := n.PReLU("act1", n.Conv2D("c1", n.Input(), Conv{Out: 6, Kernel: 3, Pad: 1, Bias: true}), 6)
	r := n.LayerScale("ls", n.Conv2D("c2", h, Conv{Out: 6, Kernel: 1}))
	h = n.PReLU("act2", n.Add(h, r), 1)
	m, err := n.Model(n.Dense("fc", n.Concat(n.GlobalMaxPool(h), n.GlobalAvgPool(h)), 3))
	if err != nil {
		t.Fatal(err)
	}
	params := onnxrtParams(m, 4) // slopes and scales off their starts
	_, enc := marshalONNX(t, m, params)
	im, _ := roundTrips(t, "newlayers", m, params, enc, batchOf(imageSet(29, 5, 3, true, 3, 8, 8), seq(5)...))
	if ops, want := specOps(t, im), "conv prelu conv layerscale add prelu globalmaxpool globalavgpool concat dense"; ops != want {
		t.Errorf("the imported export's layers %s, want %s", ops, want)
	}
	for _, c := range []struct {
		name string
		add  func(n *Net)
		want string
	}{
		{"layer scale of a vector", func(n *Net) { n.LayerScale("ls", n.Flatten(n.Input())) }, "want an image [C,H,W]"},
		{"global max pool of a vector", func(n *Net) { n.GlobalMaxPool(n.Flatten(n.Input())) }, "want an image [C,H,W]"},
	} {
		n := NewNet("e", []int{2, 3, 3}, 2)
		if c.add(n); n.Err() == nil || !strings.Contains(n.Err().Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, n.Err(), c.want)
		}
	}
}
