package graphops

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// Clamp adds min(max(x, lo), hi), elementwise, for x of any shape
// (torch's nn.Hardtanh(lo, hi); nn.ReLU6 is Clamp(x, 0, 6)); lo < hi, both
// finite. NaN passes through. Its gradient is dy where lo < x < hi and 0
// elsewhere, at the bounds included, as torch's hardtanh_backward (which
// nn.ReLU6 and F.hardtanh use; torch.clamp's own backward passes the
// gradient at the bounds too). A pointwise layer (see pointwise) of
// comparisons and copies only (kernels.Clamp): the same bits on every
// kernel set and architecture.
func (g *Graph) Clamp(name string, x *G.Node, lo, hi float32) *G.Node {
	if !g.ok(name, x) {
		return nil
	}
	if !(lo < hi) || math.IsInf(float64(lo), 0) || math.IsInf(float64(hi), 0) {
		g.err = fmt.Errorf("%s: bounds [%g, %g], want finite lo < hi", name, lo, hi)
		return nil
	}
	return g.pointwise(name, x, func(y, x []float32) { kernels.Clamp(y, x, lo, hi) },
		func(dx, dy, x []float32) { kernels.ClampBackward(dx, dy, x, lo, hi) })
}
