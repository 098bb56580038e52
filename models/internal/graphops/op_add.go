package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// addLayer is y = a + b for two float32 tensors of one shape: a residual
// connection, or (made by compile, not by a Graph call) the sum of two
// gradient terms that G.Grad forms with Gorgonia's Add for a node read by
// two ops.
type addLayer struct {
	name string
	size int
	y    tensor.Tensor
}

// addOp is (a, b) → a + b, in float32 as Gorgonia's Add computes it. Its
// gradient passes the upstream gradient to both terms, as Add's does.
type addOp struct {
	kop
	l *addLayer
}

// Add adds a + b for a and b of the same shape: the sum of a residual
// block's branch and its shortcut. Parameter-free, the layer takes name,
// unique within the graph, for its buffer and op. Its gradient is the
// upstream gradient itself, for both terms.
func (g *Graph) Add(name string, a, b *G.Node) *G.Node {
	if !g.ok(name, a, b) {
		return nil
	}
	if !a.Shape().Eq(b.Shape()) {
		g.err = fmt.Errorf("%s: %v + %v: want the same shapes", name, a.Shape(), b.Shape())
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	op := newAddOp(g.ws, name, a.Shape(), dims(a, b))
	return g.apply(op, name, a, b)
}

// newAddOp returns an add op named name whose output, of the given shape,
// is the workspace's buffer name.y.
func newAddOp(ws *Workspace, name string, shape tensor.Shape, in []int) *addOp {
	l := &addLayer{name: name, size: shape.TotalSize(), y: ws.tensor(name+".y", shape...)}
	return &addOp{kop{name, l, in, l.y.Shape()}, l}
}

func (op *addOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size, op.l.size)
	if err != nil {
		return nil, err
	}
	kernels.Add(f32(op.l.y), a[0], a[1])
	return op.l.y, nil
}

func (op *addOp) DiffWRT(int) []bool { return []bool{true, true} }

func (op *addOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return G.Nodes{grad, grad}, nil
}
