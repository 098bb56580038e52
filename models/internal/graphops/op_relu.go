package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// reluLayer is y = max(x, 0), elementwise, for x of any shape.
type reluLayer struct {
	name  string
	size  int
	y, dx tensor.Tensor // output and input gradient, of x's shape
}

// reluOp is the forward pass: x → y.
type reluOp struct {
	kop
	l *reluLayer
}

// reluInputGradOp is (y, dy) → dx = dy·[y > 0].
type reluInputGradOp struct {
	kop
	l *reluLayer
}

// ReLU adds max(x, 0), elementwise, for x of any shape (a ReLU after a
// convolution's bias, a GroupNorm or a residual Add). Parameter-free, the
// layer takes name, unique within the graph, for its buffers and ops. The
// gradient with respect to x is formed only when x is computed by another
// op.
func (g *Graph) ReLU(name string, x *G.Node) *G.Node {
	if !g.ok(name, x) || !g.claim(name) {
		return nil
	}
	xs := x.Shape()
	l := &reluLayer{name: name, size: xs.TotalSize(), y: g.ws.tensor(name+".y", xs...)}
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(name+".dx", xs...)
	}
	return g.apply(&reluOp{kop{name + ".forward", l, dims(x), l.y.Shape()}, l}, name, x)
}

func (op *reluOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size)
	if err != nil {
		return nil, err
	}
	kernels.ReLU(f32(op.l.y), a[0])
	return op.l.y, nil
}

func (op *reluOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil} }

func (op *reluOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dx == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", l.name)
	}
	dx, err := G.ApplyOp(&reluInputGradOp{kop{l.name + ".dx", l, dims(output, grad), l.dx.Shape()}, l}, output, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx}, nil
}

func (op *reluInputGradOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size, op.l.size)
	if err != nil {
		return nil, err
	}
	kernels.ReLUBackward(f32(op.l.dx), a[1], a[0])
	return op.l.dx, nil
}
