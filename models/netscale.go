package models

import (
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// The excitation of a squeeze-and-excitation block (SENet, MobileNetV3,
// EfficientNet): each channel of an image scaled by a gate the network
// computes from the sample itself. Parameter-free; computed alike on every
// kernel set and architecture (float32 products, and the gate's gradient
// summed in float64 in a fixed order).

// ChannelScale adds x·gate per channel: channel c of the image x [C,H,W]
// multiplied by gate[c], for a gate of the same sample of shape [C] (or
// its [C,1,1] view), as torch's x * gate with gate [N,C,1,1] computes it:
// y[c,h,w] = x[c,h,w]·gate[c]. Its gradient is dy·gate[c] for x and
// Σ_{h,w} dy·x for gate[c].
func (n *Net) ChannelScale(x, gate Tensor) Tensor {
	name := n.autoName("chanscale")
	if !n.reads(name, x, gate) {
		return Tensor{-1}
	}
	s, ok := n.image(name, x)
	if !ok {
		return Tensor{-1}
	}
	if gs := n.shapes[gate.id]; !slices.Equal(gs, []int{s[0]}) && !slices.Equal(gs, []int{s[0], 1, 1}) {
		return n.fail(name, "scales an image of shape %v by a gate of shape %v, want [%d] or [%d,1,1] (one value per channel)", s, gs, s[0], s[0])
	}
	return n.record(netLayer{kind: kindChannelScale, name: name}, s, x, gate)
}

// addChannelScale appends the export of a ChannelScale layer: the gate,
// [N,C] in the file where the Net holds it as a vector, reshaped to
// [N,C,1,1], then Mul of the image and it, broadcast over the maps.
func (g *onnxGraph) addChannelScale(l netLayer) {
	net := g.cm.net
	x, gate, out := g.names[l.in[0]], g.names[l.in[1]], g.names[l.out]
	c := net.shapes[l.in[0]][0]
	if len(net.shapes[l.in[1]]) == 1 {
		shape := l.name + ".gateshape"
		g.inits = append(g.inits, onnx.Int64Tensor(shape, []int64{0, int64(c), 1, 1}, 4))
		g.node(l.name+".gate", "Reshape", []string{gate, shape}, l.name+".gate")
		gate = l.name + ".gate"
	}
	g.node(l.name, "Mul", []string{x, gate}, out)
	g.describe("%s: Mul of the image [N,%s] and a gate [N,%d,1,1] (channel scale, squeeze-and-excitation) → [N,%s]",
		l.name, joinInts(net.shapes[l.in[0]]), c, joinInts(net.shapes[l.out]))
}
