package models

import (
	"fmt"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// prelu imports PRelu(x, slope) as Net.PReLU, the slopes its x⁰: torch's
// nn.PReLU writes one slope ([1]) or one a channel ([C,1,1] for an image,
// [F] for features), broadcast against x [N,C,…] from the right. Slopes
// that would broadcast along another axis (a [W] slope of an image) are
// refused, as are slopes that are not one value or one a channel.
func (im *importer) prelu(n *onnx.Node) error {
	x, err := im.data(n, 0)
	if err != nil {
		return err
	}
	a, err := im.konst(n, 1, "slope", false)
	if err != nil {
		return err
	}
	if !a.float {
		return fmt.Errorf("slope %q is not a float tensor", a.name)
	}
	s := im.net.Shape(x.t)
	c := s[0]
	dims := a.dims
	for len(dims) > 0 && dims[0] == 1 && len(dims) > len(x.view) {
		dims = dims[1:] // leading 1s broadcast over the batch
	}
	perChannel := len(x.view) > 0 && x.view[0] == c && len(dims) == len(x.view) && dims[0] == c &&
		product(dims[1:]) == 1
	if a.size() != 1 && !perChannel {
		return fmt.Errorf("slope %q of shape %v for data [N,%s]: want one slope, or one a channel ([%d] followed by 1s to the data's rank, as torch's nn.PReLU(%d) writes)",
			a.name, a.dims, joinInts(x.view), c, c)
	}
	for _, v := range a.f {
		if v != v {
			return fmt.Errorf("slope %q holds NaN", a.name)
		}
	}
	name := im.layerName(n, a.name)
	t := im.net.PReLU(name, x.t, a.size())
	im.params[name+".a"] = slices.Clone(a.f)
	return im.set(n, ival{kind: ivAct, t: t, view: x.view})
}
