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
// alpha·f(x)) looks like a buffer (an input normalisation's mean and std),
// and torch's constant folding renames it (onnx::Mul_86). The import
// therefore keeps such constants constant, except where the network's
// structure says otherwise (ConvNeXt's gamma, onnxchanlast.go), and
// ImportOptions.Trainable names the others.

// ImportOptions are the choices ImportONNXWith leaves to its caller.
type ImportOptions struct {
	// Trainable lists patterns (path.Match syntax) of initialiser names
	// that torch trains: a Mul of the network's data, an image [C,H,W],
	// by one of them, one value a channel ([C], [C,1,1] or [1,C,1,1]),
	// imports as LayerScale, trained from its values, not as the constant
	// MulConst. Every pattern must match such an initialiser.
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

// trainableScale imports x·c, the Mul n of the network's data x by the
// initialiser c, as LayerScale where c's name matches a pattern of
// ImportOptions.Trainable. It reports false, having added nothing, where
// none matches; a match that LayerScale cannot take is refused.
func (im *importer) trainableScale(n *onnx.Node, x ival, c *iconst) (bool, error) {
	label := c.name
	if label == "" {
		label = c.origin
	}
	if c.float && len(c.f) > 1 && label != "" {
		im.scaleNames = append(im.scaleNames, label)
	}
	var match string
	for _, p := range im.opt.Trainable {
		if ok, _ := path.Match(p, label); ok && label != "" {
			im.matched[p], match = true, p
		}
	}
	if match == "" {
		return false, nil
	}
	s := im.net.Shape(x.t)
	dims := c.dims
	for len(dims) > 1 && dims[len(dims)-1] == 1 {
		dims = dims[:len(dims)-1]
	}
	if len(dims) == 2 && dims[0] == 1 {
		dims = dims[1:]
	}
	switch {
	case len(s) != 3:
		return true, fmt.Errorf("trainable %q (pattern %s) scales [N,%s]; the import trains a scale a channel of an image [N,C,H,W] only", label, match, joinInts(x.view))
	case !c.float || len(dims) != 1 || dims[0] != s[0] || s[0] < 2:
		return true, fmt.Errorf("trainable %q (pattern %s) has shape %v; the import trains one value a channel of the image [N,%s]: [%d], [%d,1,1] or [1,%d,1,1] (a trainable scalar is not supported)",
			label, match, c.dims, joinInts(x.view), s[0], s[0], s[0])
	case slices.ContainsFunc(c.f, func(v float32) bool { return v != v }):
		return true, fmt.Errorf("scales by %q, which holds NaN", label)
	}
	name := im.layerName(n, label)
	t := im.net.LayerScale(name, x.t)
	im.params[name+".g"] = slices.Clone(c.f)
	return true, im.set(n, ival{kind: ivAct, t: t, view: slices.Clone(x.view)})
}

// checkTrainable refuses a pattern of ImportOptions.Trainable that
// matched no Mul of the network's data by an initialiser, naming those
// the file has.
func (im *importer) checkTrainable() error {
	for _, p := range im.opt.Trainable {
		if im.matched[p] {
			continue
		}
		names := "none"
		if len(im.scaleNames) > 0 {
			names = strings.Join(slices.Compact(slices.Sorted(slices.Values(im.scaleNames))), ", ")
		}
		return fmt.Errorf("trainable %q matches no initialiser that multiplies the network's data; the file's: %s", p, names)
	}
	return nil
}
