package models

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// An ONNX file does not say which of its initialisers torch trains: a
// parameter used only through arithmetic (PoolFormer's layer scale
// ls.unsqueeze(-1).unsqueeze(-1) * x, timm's LayerScale2d, ReZero's
// alpha·f(x), Fixup's x + bias) looks like a buffer (an input
// normalisation's mean and std), and torch's constant folding renames it
// (onnx::Mul_86). The import therefore keeps such constants constant,
// except where the network's structure says otherwise (ConvNeXt's gamma,
// onnxchanlast.go), and ImportOptions.Trainable names the others.

// ImportOptions are the choices ImportONNXWith leaves to its caller.
type ImportOptions struct {
	// Trainable lists patterns (path.Match syntax) of initialiser names
	// that torch trains. A Mul of the network's data by one of them
	// imports as Scale (one value: ReZero's alpha) or LayerScale (one
	// value a channel of an image: [C,1,1] or [1,C,1,1]), an Add of
	// one value as Shift (Fixup's biases) and of one a channel as
	// ChannelShift (an image's [C,1,1], a channels-last tensor's [C]:
	// ResMLP's β), each trained from the file's values, not as the
	// constant MulConst or AddConst. Every pattern must match such an
	// initialiser.
	Trainable []string
}

// CheckTrainable reports the first pattern of patterns that path.Match
// cannot read, as an error naming it.
func CheckTrainable(patterns []string) error {
	for _, p := range patterns {
		if _, err := path.Match(p, ""); err != nil || p == "" {
			return fmt.Errorf("trainable %q: want an initialiser's name or a path.Match pattern (onnx::Mul_*, blocks.*.alpha)", p)
		}
	}
	return nil
}

// trainableConst imports x·c or x + c (op kindMulConst or kindAddConst),
// the Mul or Add n of the network's data x and the initialiser c, as a
// trained layer where c is named trainable (ImportOptions.Trainable, or
// the trainableKey metadata of gtstorm's own export): one value as Scale
// or Shift, one value a channel of an image as LayerScale or
// ChannelShift, and one added to each channel of a channels-last tensor
// (ResMLP's β) as ChannelShift. It reports false, having added nothing,
// where c is not named; a named c that those layers cannot take is
// refused.
func (im *importer) trainableConst(n *onnx.Node, x ival, c *iconst, op layerKind) (bool, error) {
	label := c.name
	if label == "" {
		label = c.origin
	}
	if c.float && label != "" {
		im.scaleNames = append(im.scaleNames, label)
	}
	match := ""
	if im.exact[label] {
		match = label
	}
	for _, p := range im.opt.Trainable {
		if ok, _ := path.Match(p, label); ok && label != "" {
			im.matched[p], match = true, p
		}
	}
	if match == "" {
		return false, nil
	}
	if !c.float {
		return true, fmt.Errorf("trainable %q (pattern %s) is not float", label, match)
	}
	verb := map[layerKind]string{kindMulConst: "scales by", kindAddConst: "adds"}[op]
	if first, ok := im.trainedAt[label]; ok {
		// A parameter torch reads twice (Fixup's bias1a, before conv1 and
		// before the downsample): one value, two layers.
		if first.kind != op || c.size() != 1 {
			return true, fmt.Errorf("trainable %q (pattern %s) is read here and by node %q; the import shares one value between a Mul and a Mul, or an Add and an Add, not %s", label, match, first.node, map[bool]string{true: "a scale a channel", false: "a Mul and an Add"}[c.size() != 1])
		}
		v := x
		if op == kindMulConst {
			v.t = im.net.ScaleLike(first.layer, x.t)
		} else {
			v.t = im.net.ShiftLike(first.layer, x.t)
		}
		return true, im.set(n, v)
	}
	// add makes the layer of initial values: one value as Scale or Shift,
	// else LayerScale or ChannelShift.
	add := func(suffix string, values []float32, build func(name string) Tensor) (bool, error) {
		t, name, err := im.fileLayer(n, label, suffix, verb, values, build)
		if err != nil {
			return true, err
		}
		im.trainedAt[label] = trainedUse{node: n.Name, layer: name, kind: op}
		v := x
		v.t = t
		return true, im.set(n, v)
	}
	switch {
	case c.size() == 1 && op == kindMulConst:
		return add(".s", c.f, func(name string) Tensor { return im.net.Scale(name, x.t) })
	case c.size() == 1:
		return add(".b", c.f, func(name string) Tensor { return im.net.Shift(name, x.t) })
	}
	s := im.net.Shape(x.t)
	if len(s) != 3 {
		return true, fmt.Errorf("trainable %q (pattern %s) of shape %v %s [N,%s]; the import trains one value, or one a channel of an image [N,C,H,W] or of a channels-last tensor", label, match, c.dims, verb, joinInts(x.view))
	}
	values := c.f
	if x.last {
		// A channels-last tensor (ResMLP's tokens): ONNX broadcasts a [C]
		// along its channels. (Its Mul by a [C] is LayerScale, trained
		// without a name: lastBinary.)
		v, err := lastConsts(x, c)
		if err != nil {
			return true, fmt.Errorf("trainable %q (pattern %s) of shape %v %s the channels-last [N,%s]; the import trains there one value or one a channel ([C])", label, match, c.dims, verb, joinInts(x.view))
		}
		values = v
	} else if !slices.Equal(c.dims, []int{s[0], 1, 1}) && !slices.Equal(c.dims, []int{1, s[0], 1, 1}) {
		// ONNX broadcasts a [C] against [N,C,H,W] along W, not C.
		return true, fmt.Errorf("trainable %q (pattern %s) has shape %v; the import trains one value, or one a channel of the image [N,%s]: [%d,1,1] or [1,%d,1,1]",
			label, match, c.dims, joinInts(x.view), s[0], s[0])
	}
	if op == kindMulConst {
		return add(".g", values, func(name string) Tensor { return im.net.LayerScale(name, x.t) })
	}
	return add(".b", values, func(name string) Tensor { return im.net.ChannelShift(name, x.t) })
}

// constants returns the initialisers (not a node's output, which torch
// names /…) that multiply or are added to the network's data and that no
// pattern named: those ImportOptions.Trainable could train.
func (im *importer) constants() []string {
	var out []string
	for _, name := range im.scaleNames {
		if _, trained := im.trainedAt[name]; !trained && !strings.HasPrefix(name, "/") {
			out = append(out, name)
		}
	}
	return slices.Compact(slices.Sorted(slices.Values(out)))
}

// ConstantInitialisers returns the initialisers of m's ONNX file that
// multiply or are added to the network's data as constants, which
// training leaves as they are: the names ImportOptions.Trainable (train's
// --trainable) may give where torch trains them. It is nil for the other
// models.
func ConstantInitialisers(m Model) []string {
	c, ok := m.(*classifier)
	if !ok {
		return nil
	}
	return slices.Clone(c.constants)
}

// trainedUse is where a trainable initialiser is first read: the node, the
// layer it became, and the operation (kindMulConst or kindAddConst).
type trainedUse struct {
	node, layer string
	kind        layerKind
}

// checkTrainable refuses a pattern of ImportOptions.Trainable that
// matched no Mul or Add of the network's data by an initialiser, naming
// those the file has.
func (im *importer) checkTrainable() error {
	for _, p := range im.opt.Trainable {
		if im.matched[p] {
			continue
		}
		names := "none"
		if len(im.scaleNames) > 0 {
			names = strings.Join(slices.Compact(slices.Sorted(slices.Values(im.scaleNames))), ", ")
		}
		return fmt.Errorf("trainable %q matches no initialiser that multiplies or is added to the network's data; the file's: %s", p, names)
	}
	return nil
}
