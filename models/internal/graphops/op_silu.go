package graphops

import (
	G "gorgonia.org/gorgonia"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// SiLU adds the sigmoid-weighted linear unit x·σ(x) = x/(1 + e⁻ˣ) (Swish),
// elementwise, for x of any shape (torch's nn.SiLU). Its gradient,
// dy·(σ(x) + x·σ(x)·(1 − σ(x))), reads the input: the output does not
// determine it (SiLU is not one-to-one below its minimum near x = −1.28).
// A pointwise layer (see pointwise); both passes are kernels.SiLU and
// SiLUBackward, pure Go in float64 from detmath.Exp, rounded to float32
// once: the same bits on every kernel set and architecture.
func (g *Graph) SiLU(name string, x *G.Node) *G.Node {
	return g.pointwise(name, x, kernels.SiLU, kernels.SiLUBackward)
}
