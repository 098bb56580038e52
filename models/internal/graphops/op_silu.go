package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// siluLayer is y = x·σ(x), elementwise, for x of any shape.
type siluLayer struct {
	name  string
	size  int
	y, dx tensor.Tensor // output and input gradient, of x's shape
}

// siluOp is the forward pass: x → y.
type siluOp struct {
	kop
	l *siluLayer
}

// siluInputGradOp is (x, dy) → dx = dy·(σ(x) + x·σ(x)·(1 − σ(x))). It
// reads the input: the output does not determine it (SiLU is not
// one-to-one below its minimum near x = −1.28).
type siluInputGradOp struct {
	kop
	l *siluLayer
}

// SiLU adds the sigmoid-weighted linear unit x·σ(x) = x/(1 + e⁻ˣ) (Swish),
// elementwise, for x of any shape (torch's nn.SiLU). Parameter-free, the
// layer takes name, unique within the graph, for its buffers and ops. The
// gradient with respect to x is formed only when x is computed by another
// op. Both passes are kernels.SiLU and SiLUBackward, pure Go in float64
// from detmath.Exp, rounded to float32 once: the same bits on every kernel set and architecture.
func (g *Graph) SiLU(name string, x *G.Node) *G.Node {
	if !g.ok(name, x) || !g.claim(name) {
		return nil
	}
	xs := x.Shape()
	l := &siluLayer{name: name, size: xs.TotalSize(), y: g.ws.tensor(name+".y", xs...)}
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(name+".dx", xs...)
	}
	return g.apply(&siluOp{kop{name + ".forward", l, dims(x), l.y.Shape()}, l}, name, x)
}

func (op *siluOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size)
	if err != nil {
		return nil, err
	}
	kernels.SiLU(f32(op.l.y), a[0])
	return op.l.y, nil
}

func (op *siluOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil} }

func (op *siluOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dx == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", l.name)
	}
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%s: %d inputs, want 1", l.name, len(inputs))
	}
	dx, err := G.ApplyOp(&siluInputGradOp{kop{l.name + ".dx", l, dims(inputs[0], grad), l.dx.Shape()}, l}, inputs[0], grad)
	if err != nil {
		return nil, fmt.Errorf("%s: input gradient: %w", l.name, err)
	}
	return G.Nodes{dx}, nil
}

func (op *siluInputGradOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size, op.l.size)
	if err != nil {
		return nil, err
	}
	kernels.SiLUBackward(f32(op.l.dx), a[1], a[0])
	return op.l.dx, nil
}
