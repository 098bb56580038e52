package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// ConstOp is the arithmetic of a ChannelConst layer: y = x op c.
type ConstOp int

// The arithmetic of ChannelConst, each one float32 operation per value, as
// torch's x + c, x − c, x·c and x / c compute it.
const (
	ConstAdd ConstOp = iota // y = x + c
	ConstSub                // y = x − c
	ConstMul                // y = x · c
	ConstDiv                // y = x / c
)

var constOpNames = [...]string{ConstAdd: "+", ConstSub: "−", ConstMul: "·", ConstDiv: "/"}

func (o ConstOp) String() string {
	if o < 0 || int(o) >= len(constOpNames) {
		return fmt.Sprintf("ConstOp(%d)", int(o))
	}
	return constOpNames[o]
}

// constLayer is y = x op c_k for the values of block k of each sample of
// x: with K = len(c) values, a sample is K equal blocks (the channels of
// an NCHW map, the features of a vector), or one where K is 1.
type constLayer struct {
	name   string
	op     ConstOp
	c      []float32
	size   int // values of x
	block  int // values per block
	y, dx  tensor.Tensor
	formed bool // the gradient with respect to x is formed
}

// constOp is the forward pass: x → y.
type constOp struct {
	kop
	l *constLayer
}

// constGradOp is dy → dx = dy·c_k (ConstMul) or dy / c_k (ConstDiv), as
// torch's backward of x·c and x / c computes it.
type constGradOp struct {
	kop
	l *constLayer
}

// ChannelConst adds x op c, elementwise, for x [n,…] and constants c that
// are no parameters: one value for every element, or one per channel
// (c_k for the k-th of len(c) equal blocks of each sample: channel k of
// an NCHW map, feature k of a vector [n,F]), such as the mean and standard
// deviation of an input normalisation, (x − mean) / std. Parameter-free,
// the layer takes name, unique within the graph, for its buffers and ops.
// The gradient with respect to x, formed only when x is computed by
// another op, is the upstream gradient itself for ConstAdd and ConstSub,
// and the upstream gradient times or divided by c for ConstMul and
// ConstDiv.
func (g *Graph) ChannelConst(name string, x *G.Node, op ConstOp, c []float32) *G.Node {
	if !g.ok(name, x) {
		return nil
	}
	xs := x.Shape()
	switch {
	case op < ConstAdd || op > ConstDiv:
		g.err = fmt.Errorf("%s: unknown arithmetic %v", name, op)
		return nil
	case len(xs) < 2 || len(c) == 0 || xs.TotalSize()/xs[0]%len(c) != 0:
		g.err = fmt.Errorf("%s: %d constants for an input of shape %v, want 1 or one per channel", name, len(c), xs)
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	l := &constLayer{name: name, op: op, c: append([]float32(nil), c...), size: xs.TotalSize(),
		block: xs.TotalSize() / xs[0] / len(c), y: g.ws.tensor(name+".y", xs...), formed: g.training && x.Op() != nil}
	if l.formed && (op == ConstMul || op == ConstDiv) {
		l.dx = g.ws.tensor(name+".dx", xs...)
	}
	return g.apply(&constOp{kop{name + ".forward", l, dims(x), l.y.Shape()}, l}, name, x)
}

func (op *constOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.size)
	if err != nil {
		return nil, err
	}
	y := f32(l.y)
	x := a[0]
	for s := 0; s < l.size; s += l.block * len(l.c) {
		for k, c := range l.c {
			lo := s + k*l.block
			xb, yb := x[lo:lo+l.block], y[lo:lo+l.block]
			switch l.op {
			case ConstAdd:
				for i, v := range xb {
					yb[i] = v + c
				}
			case ConstSub:
				for i, v := range xb {
					yb[i] = v - c
				}
			case ConstMul:
				for i, v := range xb {
					yb[i] = v * c
				}
			case ConstDiv:
				for i, v := range xb {
					yb[i] = v / c
				}
			}
		}
	}
	return l.y, nil
}

func (op *constOp) DiffWRT(int) []bool { return []bool{op.l.formed} }

func (op *constOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if !l.formed {
		return nil, fmt.Errorf("%s: graph built without gradients", l.name)
	}
	if l.dx == nil { // x + c, x − c: the gradient passes unchanged
		return G.Nodes{grad}, nil
	}
	dx, err := G.ApplyOp(&constGradOp{kop{l.name + ".dx", l, dims(grad), l.dx.Shape()}, l}, grad)
	if err != nil {
		return nil, fmt.Errorf("%s: input gradient: %w", l.name, err)
	}
	return G.Nodes{dx}, nil
}

func (op *constGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.size)
	if err != nil {
		return nil, err
	}
	dx, dy := f32(l.dx), a[0]
	for s := 0; s < l.size; s += l.block * len(l.c) {
		for k, c := range l.c {
			lo := s + k*l.block
			gb, db := dy[lo:lo+l.block], dx[lo:lo+l.block]
			if l.op == ConstMul {
				for i, v := range gb {
					db[i] = v * c
				}
			} else {
				for i, v := range gb {
					db[i] = v / c
				}
			}
		}
	}
	return l.dx, nil
}
