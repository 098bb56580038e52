package models

// Parametric ReLU (PyTorch's nn.PReLU): a ReLU whose slope below 0 is a
// parameter, one a channel or one for all. Computed alike on every kernel
// set and architecture (float32 products; the slopes' gradient summed in
// float64 in a fixed order).

// preluInit is torch's initial slope, nn.PReLU(init=0.25).
const preluInit = 0.25

// PReLU adds nn.PReLU(num_parameters=slopes): y = x for x > 0 and a·x
// elsewhere, a the slope of x's channel (dimension 1 of an image [C,H,W]
// or of features [F]) where slopes is that channel count, or one slope for
// every value where slopes is 1. The slopes, name.a [slopes], start at
// torch's 0.25.
func (n *Net) PReLU(name string, x Tensor, slopes int) Tensor {
	if !n.reads(name, x) || !n.named(name) {
		return Tensor{-1}
	}
	s := n.shapes[x.id]
	if slopes != 1 && slopes != s[0] {
		return n.fail(name, "%d slopes for a tensor of shape %v, want 1 or %d (one a channel)", slopes, s, s[0])
	}
	n.addInit(name+".a", slopes, initPReLU, slopes)
	return n.record(netLayer{kind: kindPReLU, name: name, units: slopes}, s, x)
}

// addPReLU appends PReLU as torch writes it: PRelu of x and the slopes,
// which the initialiser holds as [C,1,1] for an image so that they
// broadcast over the maps (perChannelOfMaps).
func (g *onnxGraph) addPReLU(l netLayer, x, out string, in []int) {
	g.node(l.name, "PRelu", []string{x, l.name + ".a"}, out)
	g.describe("%s: PRelu of [N,%s] with %d slope(s)", l.name, joinInts(in), l.units)
}
