package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// leakyReLULayer is y = x where x > 0, alpha·x elsewhere, elementwise, for
// x of any shape.
type leakyReLULayer struct {
	name  string
	size  int
	alpha float32
	y, dx tensor.Tensor // output and input gradient, of x's shape
}

// leakyReLUOp is the forward pass: x → y.
type leakyReLUOp struct {
	kop
	l *leakyReLULayer
}

// leakyReLUInputGradOp is (x, dy) → dx = dy·[x > 0] + alpha·dy·[x ≤ 0]. It
// reads the input, not the output: for a negative alpha the output's sign
// does not tell the two sides apart.
type leakyReLUInputGradOp struct {
	kop
	l *leakyReLULayer
}

// LeakyReLU adds x where x > 0 and alpha·x elsewhere, elementwise, for x of
// any shape (torch's nn.LeakyReLU(alpha)). Parameter-free, the layer takes
// name, unique within the graph, for its buffers and ops. The gradient
// with respect to x is formed only when x is computed by another op.
func (g *Graph) LeakyReLU(name string, x *G.Node, alpha float32) *G.Node {
	if !g.ok(name, x) || !g.claim(name) {
		return nil
	}
	xs := x.Shape()
	l := &leakyReLULayer{name: name, size: xs.TotalSize(), alpha: alpha, y: g.ws.tensor(name+".y", xs...)}
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(name+".dx", xs...)
	}
	return g.apply(&leakyReLUOp{kop{name + ".forward", l, dims(x), l.y.Shape()}, l}, name, x)
}

func (op *leakyReLUOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size)
	if err != nil {
		return nil, err
	}
	kernels.LeakyReLU(f32(op.l.y), a[0], op.l.alpha)
	return op.l.y, nil
}

func (op *leakyReLUOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil} }

func (op *leakyReLUOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dx == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", l.name)
	}
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%s: %d inputs, want 1", l.name, len(inputs))
	}
	dx, err := G.ApplyOp(&leakyReLUInputGradOp{kop{l.name + ".dx", l, dims(inputs[0], grad), l.dx.Shape()}, l}, inputs[0], grad)
	if err != nil {
		return nil, fmt.Errorf("%s: input gradient: %w", l.name, err)
	}
	return G.Nodes{dx}, nil
}

func (op *leakyReLUInputGradOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size, op.l.size)
	if err != nil {
		return nil, err
	}
	kernels.LeakyReLUBackward(f32(op.l.dx), a[1], a[0], op.l.alpha)
	return op.l.dx, nil
}
