package models

import (
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

// trainableKey is the metadata key of gtstorm's ONNX export that lists, comma-separated, the
// initialisers of scalar layers (Scale, Shift), which the file's structure
// cannot show trainable; the import trains them as if ImportOptions.Trainable
// named them.
const trainableKey = "gtstorm.trainable"

// addScalar appends Scale (Mul by name.s [1]) or Shift (Add of name.b
// [1]), and notes the initialiser for the trainableKey metadata.
func (g *onnxGraph) addScalar(l netLayer, x, out string) {
	op, p, what := "Mul", l.name+".s", "Scale, Mul by a trainable [1]"
	if l.kind == kindShift {
		op, p, what = "Add", l.name+".b", "Shift, Add of a trainable [1]"
	}
	g.node(l.name, op, []string{x, p}, out)
	g.trainable = append(g.trainable, p)
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
