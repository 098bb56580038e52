package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// denseLayer is y = x·w + bias, optionally followed by ReLU, for x [n,in]
// (or any [n,…] with in values per sample, read flat), w [in,out], bias
// [out].
type denseLayer struct {
	name       string
	n, in, out int
	relu       bool
	y          tensor.Tensor // output [n,out]
	g          tensor.Tensor // gradient at the pre-activation [n,out] (relu only)
	dx, dw, db tensor.Tensor // gradients [n,…], [in,out], [out]
}

// denseOp is the forward pass: (x, w, bias) → y.
type denseOp struct {
	kop
	l *denseLayer
}

// reluGradOp is (y, dy) → dy·[y > 0].
type reluGradOp struct {
	kop
	l *denseLayer
}

// denseWeightGradOp is (x, g) → xᵀ·g.
type denseWeightGradOp struct {
	kop
	l *denseLayer
}

// denseBiasGradOp is g → Σ_rows g.
type denseBiasGradOp struct {
	kop
	l *denseLayer
}

// denseInputGradOp is (g, w) → g·wᵀ.
type denseInputGradOp struct {
	kop
	l *denseLayer
}

// Dense adds the fully connected layer x·w + bias for x [n,in] (or any
// [n,…] with in values per sample, read flat in row-major order, as a
// flattened [n,C,H,W]), w [in,out] and bias [out]: [n,out]. The layer is
// named after w ("fc.w" → "fc").
func (g *Graph) Dense(x, w, bias *G.Node) *G.Node { return g.dense(x, w, bias, false) }

// DenseReLU adds ReLU(x·w + bias), a Dense layer followed by ReLU, fused.
func (g *Graph) DenseReLU(x, w, bias *G.Node) *G.Node { return g.dense(x, w, bias, true) }

func (g *Graph) dense(x, w, bias *G.Node, relu bool) *G.Node {
	if !g.ok("dense layer", x, w, bias) {
		return nil
	}
	name := layerName(w, ".w")
	xs, wsh := x.Shape(), w.Shape()
	if len(xs) < 2 || len(wsh) != 2 || xs.TotalSize() != xs[0]*wsh[0] || bias.Shape().TotalSize() != wsh[1] {
		g.err = fmt.Errorf("%s: input %v, weights %v and bias %v do not make a dense layer", name, xs, wsh, bias.Shape())
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	n, in, out := xs[0], wsh[0], wsh[1]
	l := &denseLayer{name: name, n: n, in: in, out: out, relu: relu,
		y: g.ws.tensor(name+".y", n, out)}
	if g.training {
		if relu {
			l.g = g.ws.tensor(name+".g", n, out)
		}
		l.dx = g.ws.tensor(name+".dx", xs...)
		l.dw = g.ws.tensor(name+".dw", in, out)
		l.db = g.ws.tensor(name+".db", out)
	}
	return g.apply(&denseOp{kop{name + ".forward", l, dims(x, w, bias), l.y.Shape()}, l}, name, x, w, bias)
}

func (op *denseOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.in, l.in*l.out, l.out)
	if err != nil {
		return nil, err
	}
	y := f32(l.y)
	kernels.Sgemm(false, false, l.n, l.out, l.in, 1, a[0], l.in, a[1], l.out, 0, y, l.out)
	kernels.AddBiasRows(y, a[2], l.n, l.relu)
	return l.y, nil
}

func (op *denseOp) DiffWRT(int) []bool { return []bool{true, true, true} }

func (op *denseOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dw == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", l.name)
	}
	x, w := inputs[0], inputs[1]
	g := grad
	var err error
	if l.relu {
		if g, err = G.ApplyOp(&reluGradOp{kop{l.name + ".relu'", l, dims(output, grad), l.g.Shape()}, l}, output, grad); err != nil {
			return nil, err
		}
	}
	dx, err := G.ApplyOp(&denseInputGradOp{kop{l.name + ".dx", l, dims(g, w), l.dx.Shape()}, l}, g, w)
	if err != nil {
		return nil, err
	}
	dw, err := G.ApplyOp(&denseWeightGradOp{kop{l.name + ".dw", l, dims(x, g), l.dw.Shape()}, l}, x, g)
	if err != nil {
		return nil, err
	}
	db, err := G.ApplyOp(&denseBiasGradOp{kop{l.name + ".db", l, dims(g), l.db.Shape()}, l}, g)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dx, dw, db}, nil
}

func (op *reluGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.out, l.n*l.out)
	if err != nil {
		return nil, err
	}
	kernels.ReLUBackward(f32(l.g), a[1], a[0])
	return l.g, nil
}

func (op *denseInputGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.out, l.in*l.out)
	if err != nil {
		return nil, err
	}
	kernels.Sgemm(false, true, l.n, l.in, l.out, 1, a[0], l.out, a[1], l.out, 0, f32(l.dx), l.in)
	return l.dx, nil
}

func (op *denseWeightGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.in, l.n*l.out)
	if err != nil {
		return nil, err
	}
	kernels.Sgemm(true, false, l.in, l.out, l.n, 1, a[0], l.in, a[1], l.out, 0, f32(l.dw), l.out)
	return l.dw, nil
}

func (op *denseBiasGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.out)
	if err != nil {
		return nil, err
	}
	db := f32(l.db)
	clear(db)
	kernels.BiasGradRows(db, a[0], l.n)
	return l.db, nil
}
