package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// outputActivation is an elementwise function whose derivative is a
// function of its output: tanh (1 − y²) and the logistic sigmoid
// (y·(1 − y)).
type outputActivation struct {
	forward  func(y, x []float32)      // y = f(x)
	backward func(dx, dy, y []float32) // dx = dy·f′ written from y
}

var (
	tanhActivation    = outputActivation{kernels.Tanh, kernels.TanhBackward}
	sigmoidActivation = outputActivation{kernels.Sigmoid, kernels.SigmoidBackward}
)

// outputActLayer is y = f(x), elementwise, for x of any shape.
type outputActLayer struct {
	name  string
	size  int
	f     outputActivation
	y, dx tensor.Tensor // output and input gradient, of x's shape
}

// outputActOp is the forward pass: x → y.
type outputActOp struct {
	kop
	l *outputActLayer
}

// outputActInputGradOp is (y, dy) → dx = dy·f′, f′ computed from y.
type outputActInputGradOp struct {
	kop
	l *outputActLayer
}

// Tanh adds tanh(x), elementwise, for x of any shape (torch's nn.Tanh).
// Parameter-free, the layer takes name, unique within the graph, for its
// buffers and ops. The gradient with respect to x is formed only when x is
// computed by another op.
func (g *Graph) Tanh(name string, x *G.Node) *G.Node {
	return g.outputActivation(name, x, tanhActivation)
}

// Sigmoid adds the logistic sigmoid 1/(1 + e⁻ˣ), elementwise, for x of any
// shape (torch's nn.Sigmoid); name and the gradient are as Tanh's.
func (g *Graph) Sigmoid(name string, x *G.Node) *G.Node {
	return g.outputActivation(name, x, sigmoidActivation)
}

func (g *Graph) outputActivation(name string, x *G.Node, f outputActivation) *G.Node {
	if !g.ok(name, x) || !g.claim(name) {
		return nil
	}
	xs := x.Shape()
	l := &outputActLayer{name: name, size: xs.TotalSize(), f: f, y: g.ws.tensor(name+".y", xs...)}
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(name+".dx", xs...)
	}
	return g.apply(&outputActOp{kop{name + ".forward", l, dims(x), l.y.Shape()}, l}, name, x)
}

func (op *outputActOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size)
	if err != nil {
		return nil, err
	}
	op.l.f.forward(f32(op.l.y), a[0])
	return op.l.y, nil
}

func (op *outputActOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil} }

func (op *outputActOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dx == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", l.name)
	}
	dx, err := G.ApplyOp(&outputActInputGradOp{kop{l.name + ".dx", l, dims(output, grad), l.dx.Shape()}, l}, output, grad)
	if err != nil {
		return nil, fmt.Errorf("%s: input gradient: %w", l.name, err)
	}
	return G.Nodes{dx}, nil
}

func (op *outputActInputGradOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size, op.l.size)
	if err != nil {
		return nil, err
	}
	op.l.f.backward(f32(op.l.dx), a[1], a[0])
	return op.l.dx, nil
}
