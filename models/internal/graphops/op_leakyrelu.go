package graphops

import (
	G "gorgonia.org/gorgonia"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// LeakyReLU adds x where x > 0 and alpha·x elsewhere, elementwise, for x of
// any shape (torch's nn.LeakyReLU(alpha)). Its gradient, dy where x > 0
// and alpha·dy elsewhere, reads the input, not the output: for a negative
// alpha the output's sign does not tell the two sides apart. A pointwise
// layer (see pointwise): parameter-free, the layer takes name, unique
// within the graph, for its buffers and ops, and forms the gradient with
// respect to x only when x is computed by another op.
func (g *Graph) LeakyReLU(name string, x *G.Node, alpha float32) *G.Node {
	return g.pointwise(name, x, func(y, x []float32) { kernels.LeakyReLU(y, x, alpha) },
		func(dx, dy, x []float32) { kernels.LeakyReLUBackward(dx, dy, x, alpha) })
}
