package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// biasLayer is y = x + b_c for x [n,C,H,W] and a per-channel bias b [C].
type biasLayer struct {
	name     string
	n, plane int
	c        int
	y        tensor.Tensor // output [n,C,H,W]
	db       tensor.Tensor // bias gradient [C]
}

// biasOp is the forward pass: (x, b) → y.
type biasOp struct {
	kop
	l *biasLayer
}

// biasGradOp is dy → db = Σ dy over each channel's planes
// (kernels.BiasGradPlanes).
type biasGradOp struct {
	kop
	l *biasLayer
}

// ChannelBias adds b [C] to every pixel of channel c of x [n,C,H,W]: a
// convolution's bias where no pooling follows (BiasReLUMaxPool2x2 fuses it
// otherwise). The layer is named after b ("conv1.b" → "conv1", its
// buffers "conv1.bias…"). The gradient with respect to x is the upstream
// gradient itself.
func (g *Graph) ChannelBias(x, b *G.Node) *G.Node {
	if !g.ok("channel bias", x, b) {
		return nil
	}
	name := layerName(b, ".b") + ".bias"
	xs := x.Shape()
	if len(xs) != 4 || b.Shape().TotalSize() != xs[1] {
		g.err = fmt.Errorf("%s: input %v and bias %v do not match", name, xs, b.Shape())
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	l := &biasLayer{name: name, n: xs[0], c: xs[1], plane: xs[2] * xs[3], y: g.ws.tensor(name+".y", xs...)}
	if g.training {
		l.db = g.ws.tensor(name+".db", xs[1])
	}
	return g.apply(&biasOp{kop{name + ".forward", l, dims(x, b), l.y.Shape()}, l}, name, x, b)
}

func (op *biasOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.c*l.plane, l.c)
	if err != nil {
		return nil, err
	}
	y := f32(l.y)
	copy(y, a[0])
	kernels.AddBiasPlanes(y, a[1], l.n, l.plane, false)
	return l.y, nil
}

func (op *biasOp) DiffWRT(int) []bool { return []bool{true, true} }

func (op *biasOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.db == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", l.name)
	}
	db, err := G.ApplyOp(&biasGradOp{kop{l.name + ".db", l, dims(grad), l.db.Shape()}, l}, grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{grad, db}, nil
}

func (op *biasGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.c*l.plane)
	if err != nil {
		return nil, err
	}
	db := f32(l.db)
	clear(db)
	kernels.BiasGradPlanes(db, a[0], l.n, l.plane)
	return l.db, nil
}
