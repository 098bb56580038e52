package models

import "github.com/gtstorm/gtstorm/internal/onnx"

// LayerScale adds a trainable scale a channel of an image x [C,H,W]:
// y[c,h,w] = x[c,h,w]·name.g[c], name.g [C] starting at 1, ConvNeXt's
// layer scale (its gamma · x of x.permute(0, 2, 3, 1), whose file gives
// the scales). Its scales' gradient is summed in float64 in a fixed order:
// the same bits on every kernel set and architecture.
func (n *Net) LayerScale(name string, x Tensor) Tensor {
	if !n.reads(name, x) || !n.named(name) {
		return Tensor{-1}
	}
	s, ok := n.image(name, x)
	if !ok {
		return Tensor{-1}
	}
	n.addInit(name+".g", s[0], initOnes, s[0])
	return n.record(netLayer{kind: kindLayerScale, name: name}, s, x)
}

// ChannelShift adds a trainable shift a channel of an image x [C,H,W]:
// y[c,h,w] = x[c,h,w] + name.b[c], name.b [C] starting at 0 (ResMLP's
// Affine, α·x + β, is LayerScale then ChannelShift). Its gradient is
// summed in float64 in a fixed order: the same bits on every kernel set
// and architecture.
func (n *Net) ChannelShift(name string, x Tensor) Tensor {
	if !n.reads(name, x) || !n.named(name) {
		return Tensor{-1}
	}
	s, ok := n.image(name, x)
	if !ok {
		return Tensor{-1}
	}
	n.addInit(name+".b", s[0], initZeros, s[0])
	return n.record(netLayer{kind: kindChannelShift, name: name}, s, x)
}

// addChannelShift appends ChannelShift: Add of the shifts [C,1,1], which
// the file's metadata names trainable (trainableKey), so that the import
// reads it as ChannelShift again rather than as the constant AddConst.
func (g *onnxGraph) addChannelShift(l netLayer, x, out string) {
	g.trainable = append(g.trainable, l.name+".b")
	g.node(l.name, "Add", []string{x, l.name + ".b"}, out)
	g.describe("%s: ChannelShift, Add of a trainable [C,1,1]", l.name)
}

// addLayerScale appends LayerScale as torch writes ConvNeXt's layer scale:
// Transpose to channels-last [N,H,W,C], Mul by the scales [C], Transpose
// back, which the import reads as LayerScale again (a Mul of a
// channels-first image by a constant is MulConst, which training does not
// change).
func (g *onnxGraph) addLayerScale(l netLayer, x, out string) {
	nm := func(s string) string { return l.name + "." + s }
	g.node(nm("last"), "Transpose", []string{x}, nm("last"), onnx.IntsAttr("perm", 0, 2, 3, 1))
	g.node(nm("mul"), "Mul", []string{nm("last"), nm("g")}, nm("scaled"))
	g.node(nm("first"), "Transpose", []string{nm("scaled")}, out, onnx.IntsAttr("perm", 0, 3, 1, 2))
	g.describe("%s: LayerScale (Transpose to channels-last, Mul by [C], Transpose back)", l.name)
}
