package models

import (
	"slices"
	"strings"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// Scale multiplies every value of x by one trainable value name.s,
// starting at 1: ReZero's alpha·f(x), SkipInit's, Fixup's scale. Its
// gradient is summed in float64 in a fixed order: the same bits on every
// kernel set and architecture.
func (n *Net) Scale(name string, x Tensor) Tensor {
	if !n.reads(name, x) || !n.named(name) {
		return Tensor{-1}
	}
	n.addInit(name+".s", 1, initOnes, 1)
	return n.record(netLayer{kind: kindScale, name: name}, n.shapes[x.id], x)
}

// Shift adds one trainable value name.b, starting at 0, to every value of
// x: Fixup's scalar biases (x + bias1a). Its gradient is summed in float64
// in a fixed order.
func (n *Net) Shift(name string, x Tensor) Tensor {
	if !n.reads(name, x) || !n.named(name) {
		return Tensor{-1}
	}
	n.addInit(name+".b", 1, initZeros, 1)
	return n.record(netLayer{kind: kindShift, name: name}, n.shapes[x.id], x)
}

// ScaleLike multiplies x by the value of the Scale layer owner again: one
// parameter that two places read, as torch shares an nn.Parameter, its
// gradient the sum of both uses.
func (n *Net) ScaleLike(owner string, x Tensor) Tensor {
	return n.scalarLike(kindScale, "scale", owner, x)
}

// ShiftLike adds the value of the Shift layer owner to x again (Fixup's
// bias1a, added before a block's first convolution and before its
// downsample), its gradient the sum of both uses.
func (n *Net) ShiftLike(owner string, x Tensor) Tensor {
	return n.scalarLike(kindShift, "shift", owner, x)
}

// scalarLike records a layer of kind (Scale or Shift) that uses the value
// of the layer owner, of that kind and with a value of its own.
func (n *Net) scalarLike(kind layerKind, prefix, owner string, x Tensor) Tensor {
	name := n.autoName(prefix)
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	if !slices.ContainsFunc(n.layers, func(l netLayer) bool { return l.name == owner && l.kind == kind && l.owner == "" }) {
		return n.fail(name, "uses the value of %q, want a %s layer with a value of its own", owner, prefix)
	}
	return n.record(netLayer{kind: kind, name: name, owner: owner}, n.shapes[x.id], x)
}

// param returns the name of the parameter the Scale or Shift layer l
// reads: its own, or its owner's.
func (l netLayer) param() string {
	name, suffix := l.name, ".s"
	if l.owner != "" {
		name = l.owner
	}
	if l.kind == kindShift {
		suffix = ".b"
	}
	return name + suffix
}

// trainableKey is the metadata key of gtstorm's ONNX export that lists,
// comma-separated, the initialisers of its scalar layers (Scale, Shift)
// and of ChannelShift, which the file's structure cannot show trainable;
// the import trains them as if ImportOptions.Trainable named them.
const trainableKey = "gtstorm.trainable"

// addScalar appends Scale (Mul by name.s [1]) or Shift (Add of name.b
// [1]), and notes the initialiser for the trainableKey metadata.
func (g *onnxGraph) addScalar(l netLayer, x, out string) {
	op, p, what := "Mul", l.param(), "Scale, Mul by a trainable [1]"
	if l.kind == kindShift {
		op, what = "Add", "Shift, Add of a trainable [1]"
	}
	if l.owner != "" {
		what += ", " + l.owner + "'s"
	} else {
		g.trainable = append(g.trainable, p)
	}
	g.node(l.name, op, []string{x, p}, out)
	g.describe("%s: %s", l.name, what)
}

// trainableMetadata returns the metadata naming the scalar layers'
// initialisers, or nil where the network has none.
func (g *onnxGraph) trainableMetadata() []onnx.Property {
	if len(g.trainable) == 0 {
		return nil
	}
	return []onnx.Property{{Key: trainableKey, Value: strings.Join(g.trainable, ",")}}
}
