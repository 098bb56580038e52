package graphops

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// globalMaxLayer is the maximum of each map of x [n,C,H,W], y [n,C], as
// PyTorch's adaptive_max_pool2d(x, 1) computes it: the first largest value
// of the map in row order, a NaN (the last one) where the map holds any.
// The forward pass keeps each map's index, where the backward pass puts
// the map's gradient. Pure Go: the same bits on every kernel set.
type globalMaxLayer struct {
	name   string
	planes int // n·C maps
	size   int // H·W values a map
	y      tensor.Tensor
	index  []int         // each map's argmax, from the forward pass
	dx     tensor.Tensor // input gradient; nil where it is not formed
}

// globalMaxOp is the forward pass: x → y.
type globalMaxOp struct {
	kop
	l *globalMaxLayer
}

// globalMaxDXOp is dy → dx, dy at each map's argmax and 0 elsewhere.
type globalMaxDXOp struct {
	kop
	l *globalMaxLayer
}

// GlobalMaxPool adds the maximum of each map of x [n,C,H,W], writing
// [n,C] (PyTorch's nn.AdaptiveMaxPool2d(1) then flatten). The layer takes
// name, unique within the graph, for its buffers and ops. Its gradient
// goes to each map's first largest value, as torch's does; it is formed
// only where x is computed by another op.
func (g *Graph) GlobalMaxPool(name string, x *G.Node) *G.Node {
	if !g.ok(name, x) {
		return nil
	}
	xs := x.Shape()
	if len(xs) != 4 || xs.TotalSize() == 0 {
		g.err = fmt.Errorf("%s: input %v: want [n,C,H,W]", name, xs)
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	l := &globalMaxLayer{name: name, planes: xs[0] * xs[1], size: xs[2] * xs[3], y: g.ws.tensor(name+".y", xs[0], xs[1])}
	l.index = make([]int, l.planes)
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(name+".dx", xs...)
	}
	return g.apply(&globalMaxOp{kop{name + ".forward", l, dims(x), l.y.Shape()}, l}, name, x)
}

func (op *globalMaxOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.planes*l.size)
	if err != nil {
		return nil, err
	}
	x, y := a[0], f32(l.y)
	for p := range l.planes {
		m, at := float32(math.Inf(-1)), 0
		for i, v := range x[p*l.size : (p+1)*l.size] {
			if v > m || v != v {
				m, at = v, i
			}
		}
		y[p], l.index[p] = m, at
	}
	return l.y, nil
}

func (op *globalMaxOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil} }

func (op *globalMaxOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%s: %d inputs, want 1", l.name, len(inputs))
	}
	if l.dx == nil {
		return G.Nodes{nil}, nil
	}
	d, err := G.ApplyOp(&globalMaxDXOp{kop{l.name + ".dx", l, dims(grad), l.dx.Shape()}, l}, grad)
	if err != nil {
		return nil, fmt.Errorf("%s: input gradient: %w", l.name, err)
	}
	return G.Nodes{d}, nil
}

func (op *globalMaxDXOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.planes)
	if err != nil {
		return nil, err
	}
	dy, dx := a[0], f32(l.dx)
	clear(dx)
	for p, at := range l.index {
		dx[p*l.size+at] = dy[p]
	}
	return l.dx, nil
}
