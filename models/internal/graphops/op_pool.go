package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// poolLayer is max-pool 2×2 (stride 2) of relu(z + bias) for z [n,C,H,W]
// and a per-channel bias [C], computed as relu(pool(z) + bias)
// (kernels.MaxPool2x2BiasReLU): the same values, at a quarter of the
// additions. The argmax codes of the forward pass serve the backward pass.
type poolLayer struct {
	name  string
	shape kernels.PoolShape // n·C planes of H×W
	c     int
	y     tensor.Tensor // output [n,C,H/2,W/2]
	code  []uint8       // argmax (0–3) of each output's window
	dz    tensor.Tensor // input gradient [n,C,H,W]
	db    tensor.Tensor // bias gradient [C]
}

// poolOp is the forward pass: (z, bias) → y.
type poolOp struct {
	kop
	l *poolLayer
}

// poolInputGradOp is the input gradient (y, dy) → dz. It also forms the
// bias gradient, which poolBiasGradOp hands on.
type poolInputGradOp struct {
	kop
	l *poolLayer
}

// poolBiasGradOp returns the bias gradient computed by poolInputGradOp; its
// input is that op's output, so the tape runs it after.
type poolBiasGradOp struct {
	kop
	l *poolLayer
}

// BiasReLUMaxPool2x2 adds the per-channel bias [C] to z [n,C,H,W], then
// ReLU, then max-pooling over 2×2 windows with stride 2: [n,C,H/2,W/2].
// It computes relu(pool(z) + bias), the same values at a quarter of the
// additions (both are monotone, so they commute with the maximum). The
// layer is named after bias ("conv1.b" → "conv1.pool"). When z is a
// convolution's output, which nothing reads after this pooling, the input
// gradient overwrites it.
func (g *Graph) BiasReLUMaxPool2x2(z, bias *G.Node) *G.Node {
	if !g.ok("pooling", z, bias) {
		return nil
	}
	name := layerName(bias, ".b") + ".pool"
	zs := z.Shape()
	if len(zs) != 4 || bias.Shape().TotalSize() != zs[1] {
		g.err = fmt.Errorf("%s: input %v and bias %v do not match", name, zs, bias.Shape())
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	s := kernels.PoolShape{Planes: zs[0] * zs[1], H: zs[2], W: zs[3]}
	l := &poolLayer{
		name: name, shape: s, c: zs[1],
		y:    g.ws.tensor(name+".y", zs[0], zs[1], s.OH(), s.OW()),
		code: g.ws.Bytes(name+".code", s.Out()),
	}
	if g.training {
		if conv, ok := z.Op().(*convOp); ok {
			l.dz = conv.l.z
		} else {
			l.dz = g.ws.tensor(name+".dz", zs...)
		}
		l.db = g.ws.tensor(name+".db", zs[1])
	}
	return g.apply(&poolOp{kop{name + ".forward", l, dims(z, bias), l.y.Shape()}, l}, name, z, bias)
}

func (op *poolOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	in, err := op.args(inputs, l.shape.In(), l.c)
	if err != nil {
		return nil, err
	}
	kernels.MaxPool2x2BiasReLU(f32(l.y), l.code, in[0], l.shape, in[1], true)
	return l.y, nil
}

func (op *poolOp) DiffWRT(int) []bool { return []bool{true, true} }

func (op *poolOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dz == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", l.name)
	}
	dz, err := G.ApplyOp(&poolInputGradOp{kop{l.name + ".dz", l, dims(output, grad), l.dz.Shape()}, l}, output, grad)
	if err != nil {
		return nil, err
	}
	db, err := G.ApplyOp(&poolBiasGradOp{kop{l.name + ".db", l, dims(dz), l.db.Shape()}, l}, dz)
	if err != nil {
		return nil, err
	}
	return G.Nodes{dz, db}, nil
}

func (op *poolInputGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	in, err := op.args(inputs, l.shape.Out(), l.shape.Out())
	if err != nil {
		return nil, err
	}
	db := f32(l.db)
	clear(db)
	kernels.MaxPool2x2BiasReLUBackward(f32(l.dz), db, in[1], in[0], l.code, l.shape, true)
	return l.dz, nil
}

func (op *poolBiasGradOp) Do(inputs ...G.Value) (G.Value, error) {
	if _, err := op.args(inputs, op.l.shape.In()); err != nil {
		return nil, err
	}
	return op.l.db, nil
}
