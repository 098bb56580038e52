package graphops

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// pointwiseLayer is y = f(x), elementwise, for x of any shape, f one of
// the kernels' pointwise activations (LeakyReLU, SiLU, Clamp, ELU,
// Softplus, Hardsigmoid, Hardswish, GELU), its gradient computed from the
// input x.
type pointwiseLayer struct {
	name  string
	size  int
	fwd   func(y, x []float32)
	bwd   func(dx, dy, x []float32)
	y, dx tensor.Tensor // output and input gradient, of x's shape
}

// pointwiseOp is the forward pass: x → y.
type pointwiseOp struct {
	kop
	l *pointwiseLayer
}

// pointwiseInputGradOp is (x, dy) → dx = dy·f′(x).
type pointwiseInputGradOp struct {
	kop
	l *pointwiseLayer
}

// ELU adds x where x > 0 and alpha·(eˣ − 1) elsewhere, elementwise, for x
// of any shape (torch's nn.ELU(alpha)); alpha finite. Its gradient is dy
// where x > 0 and dy·alpha·eˣ elsewhere (torch's elu_backward).
// Parameter-free, like every layer of this file: the layer takes name,
// unique within the graph, for its buffers and ops; the gradient with
// respect to x is formed only when x is computed by another op; both
// passes are the kernels' pure Go in float64 from detmath, rounded to
// float32 once: the same bits on every kernel set and architecture.
func (g *Graph) ELU(name string, x *G.Node, alpha float32) *G.Node {
	if !g.ok(name, x) {
		return nil
	}
	if math.IsNaN(float64(alpha)) || math.IsInf(float64(alpha), 0) {
		g.err = fmt.Errorf("%s: alpha %g, want a finite number", name, alpha)
		return nil
	}
	return g.pointwise(name, x, func(y, x []float32) { kernels.ELU(y, x, alpha) },
		func(dx, dy, x []float32) { kernels.ELUBackward(dx, dy, x, alpha) })
}

// Softplus adds log(1 + eˣ), and x where x > 20, elementwise (torch's
// nn.Softplus() with its defaults beta 1 and threshold 20); its gradient
// is dy·σ(x), and dy where x > 20.
func (g *Graph) Softplus(name string, x *G.Node) *G.Node {
	return g.pointwise(name, x, kernels.Softplus, kernels.SoftplusBackward)
}

// Hardsigmoid adds min(max(x + 3, 0), 6)/6, elementwise (torch's
// nn.Hardsigmoid); its gradient is dy/6 where −3 < x < 3, 0 elsewhere.
func (g *Graph) Hardsigmoid(name string, x *G.Node) *G.Node {
	return g.pointwise(name, x, kernels.Hardsigmoid, kernels.HardsigmoidBackward)
}

// Hardswish adds x·min(max(x + 3, 0), 6)/6, elementwise (torch's
// nn.Hardswish); its gradient is 0 where x < −3, dy·(x/3 + 1/2) where
// −3 ≤ x ≤ 3 and dy where x > 3 (torch's hardswish_backward).
func (g *Graph) Hardswish(name string, x *G.Node) *G.Node {
	return g.pointwise(name, x, kernels.Hardswish, kernels.HardswishBackward)
}

// GELU adds x·Φ(x) = x·(1 + erf(x/√2))/2, elementwise (torch's nn.GELU(),
// the exact form); its gradient is dy·(Φ(x) + x·e^(−x²/2)/√(2π)).
func (g *Graph) GELU(name string, x *G.Node) *G.Node {
	return g.pointwise(name, x, kernels.GELU, kernels.GELUBackward)
}

// pointwise adds the layer y = fwd(x), whose input gradient is bwd.
func (g *Graph) pointwise(name string, x *G.Node, fwd func(y, x []float32), bwd func(dx, dy, x []float32)) *G.Node {
	if !g.ok(name, x) || !g.claim(name) {
		return nil
	}
	xs := x.Shape()
	l := &pointwiseLayer{name: name, size: xs.TotalSize(), fwd: fwd, bwd: bwd, y: g.ws.tensor(name+".y", xs...)}
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(name+".dx", xs...)
	}
	return g.apply(&pointwiseOp{kop{name + ".forward", l, dims(x), l.y.Shape()}, l}, name, x)
}

func (op *pointwiseOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size)
	if err != nil {
		return nil, err
	}
	op.l.fwd(f32(op.l.y), a[0])
	return op.l.y, nil
}

func (op *pointwiseOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil} }

func (op *pointwiseOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dx == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", l.name)
	}
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%s: %d inputs, want 1", l.name, len(inputs))
	}
	dx, err := G.ApplyOp(&pointwiseInputGradOp{kop{l.name + ".dx", l, dims(inputs[0], grad), l.dx.Shape()}, l}, inputs[0], grad)
	if err != nil {
		return nil, fmt.Errorf("%s: input gradient: %w", l.name, err)
	}
	return G.Nodes{dx}, nil
}

func (op *pointwiseInputGradOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size, op.l.size)
	if err != nil {
		return nil, err
	}
	op.l.bwd(f32(op.l.dx), a[1], a[0])
	return op.l.dx, nil
}
