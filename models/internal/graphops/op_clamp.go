package graphops

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// clampLayer is y = min(max(x, lo), hi), elementwise, for x of any shape.
// Comparisons and copies only (kernels.Clamp): the same bits on every
// kernel set and architecture.
type clampLayer struct {
	name   string
	size   int
	lo, hi float32
	y, dx  tensor.Tensor // output and input gradient, of x's shape
}

// clampOp is the forward pass: x → y.
type clampOp struct {
	kop
	l *clampLayer
}

// clampInputGradOp is (x, dy) → dx = dy where lo < x < hi, 0 elsewhere.
type clampInputGradOp struct {
	kop
	l *clampLayer
}

// Clamp adds min(max(x, lo), hi), elementwise, for x of any shape
// (torch's nn.Hardtanh(lo, hi); nn.ReLU6 is Clamp(x, 0, 6)); lo < hi, both
// finite. NaN passes through. Its gradient is dy where lo < x < hi and 0
// elsewhere, at the bounds included, as torch's hardtanh_backward (which
// nn.ReLU6 and F.hardtanh use; torch.clamp's own backward passes the
// gradient at the bounds too). Parameter-free, the layer takes name,
// unique within the graph, for its buffers and ops. The gradient with
// respect to x is formed only when x is computed by another op.
func (g *Graph) Clamp(name string, x *G.Node, lo, hi float32) *G.Node {
	if !g.ok(name, x) {
		return nil
	}
	if !(lo < hi) || math.IsInf(float64(lo), 0) || math.IsInf(float64(hi), 0) {
		g.err = fmt.Errorf("%s: bounds [%g, %g], want finite lo < hi", name, lo, hi)
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	xs := x.Shape()
	l := &clampLayer{name: name, size: xs.TotalSize(), lo: lo, hi: hi, y: g.ws.tensor(name+".y", xs...)}
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(name+".dx", xs...)
	}
	return g.apply(&clampOp{kop{name + ".forward", l, dims(x), l.y.Shape()}, l}, name, x)
}

func (op *clampOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size)
	if err != nil {
		return nil, err
	}
	kernels.Clamp(f32(op.l.y), a[0], op.l.lo, op.l.hi)
	return op.l.y, nil
}

func (op *clampOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil} }

func (op *clampOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dx == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", l.name)
	}
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%s: %d inputs, want 1", l.name, len(inputs))
	}
	dx, err := G.ApplyOp(&clampInputGradOp{kop{l.name + ".dx", l, dims(inputs[0], grad), l.dx.Shape()}, l}, inputs[0], grad)
	if err != nil {
		return nil, fmt.Errorf("%s: input gradient: %w", l.name, err)
	}
	return G.Nodes{dx}, nil
}

func (op *clampInputGradOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size, op.l.size)
	if err != nil {
		return nil, err
	}
	kernels.ClampBackward(f32(op.l.dx), a[1], a[0], op.l.lo, op.l.hi)
	return op.l.dx, nil
}
