package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// preluLayer is y = x where x > 0 and slope[c]·x elsewhere, c the channel
// of x [n,C,…] (every value's one slope where slope has one value).
// Forward and the input's gradient are one float32 product per value at
// most; the slope's gradient sums dy·x over the values at or below 0, in
// float64 in a fixed order (sample by sample, position by position). Pure
// Go: the same bits on every kernel set and architecture.
type preluLayer struct {
	name    string
	n, c    int // batch and channels
	plane   int // values per channel of a sample of x
	slopes  int // 1 or c
	y       tensor.Tensor
	dx      tensor.Tensor // gradient of x; nil where it is not formed
	dslope  tensor.Tensor // gradient of the slopes; nil where it is not formed
	perSlot int           // values of one sample each slope covers in a row: plane, or c·plane for one slope
	sums    []float64     // the slopes' gradient sums, kept between batches
}

// preluOp is the forward pass: (x, slope) → y.
type preluOp struct {
	kop
	l *preluLayer
}

// preluDXOp is (dy, x, slope) → dx.
type preluDXOp struct {
	kop
	l *preluLayer
}

// preluDSOp is (dy, x) → dslope.
type preluDSOp struct {
	kop
	l *preluLayer
}

// PReLU adds PyTorch's nn.PReLU: y = x for x > 0 and slope·x elsewhere,
// for x [n,C,…] (maps, or features [n,C]) and slope of C values, one a
// channel, or of one value for all. The layer takes name, unique within
// the graph, for its buffers and ops. The gradient with respect to x is dy
// or slope·dy; with respect to a slope, the sum of dy·x over its values at
// or below 0 (torch's), in float64 in order, formed in a training graph;
// the input's, only where x is computed by another op.
func (g *Graph) PReLU(name string, x, slope *G.Node) *G.Node {
	if !g.ok(name, x, slope) {
		return nil
	}
	xs, ss := x.Shape(), slope.Shape()
	if len(xs) < 2 {
		g.err = fmt.Errorf("%s: input of shape %v, want [n,C,…]", name, xs)
		return nil
	}
	if k := ss.TotalSize(); k != 1 && k != xs[1] {
		g.err = fmt.Errorf("%s: %d slopes for an input of shape %v, want 1 or %d", name, k, xs, xs[1])
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	plane := xs.TotalSize() / xs[0] / xs[1]
	l := &preluLayer{name: name, n: xs[0], c: xs[1], plane: plane, slopes: ss.TotalSize(), y: g.ws.tensor(name+".y", xs...), perSlot: plane}
	if l.slopes == 1 {
		l.perSlot = l.c * plane
	}
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(name+".dx", xs...)
	}
	if g.training {
		l.dslope = g.ws.tensor(name+".dslope", ss...)
		l.sums = make([]float64, l.slopes)
	}
	return g.apply(&preluOp{kop{name + ".forward", l, dims(x, slope), l.y.Shape()}, l}, name, x, slope)
}

// rows calls f for each run of x's values that one slope covers: the
// run's offset and its slope's index.
func (l *preluLayer) rows(f func(lo, s int)) {
	for k := range l.n * l.slopes {
		f(k*l.perSlot, k%l.slopes)
	}
}

func (op *preluOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.c*l.plane, l.slopes)
	if err != nil {
		return nil, err
	}
	x, slope, y := a[0], a[1], f32(l.y)
	l.rows(func(lo, s int) {
		a := slope[s]
		yb := y[lo : lo+l.perSlot]
		for i, v := range x[lo : lo+l.perSlot] {
			if v > 0 {
				yb[i] = v
			} else {
				yb[i] = a * v
			}
		}
	})
	return l.y, nil
}

func (op *preluOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil, op.l.dslope != nil} }

func (op *preluOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%s: %d inputs, want 2", l.name, len(inputs))
	}
	d := make(G.Nodes, 2)
	var err error
	if l.dx != nil {
		if d[0], err = G.ApplyOp(&preluDXOp{kop{l.name + ".dx", l, dims(grad, inputs[0], inputs[1]), l.dx.Shape()}, l}, grad, inputs[0], inputs[1]); err != nil {
			return nil, fmt.Errorf("%s: input gradient: %w", l.name, err)
		}
	}
	if l.dslope != nil {
		if d[1], err = G.ApplyOp(&preluDSOp{kop{l.name + ".dslope", l, dims(grad, inputs[0]), l.dslope.Shape()}, l}, grad, inputs[0]); err != nil {
			return nil, fmt.Errorf("%s: slope gradient: %w", l.name, err)
		}
	}
	return d, nil
}

func (op *preluDXOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	size := l.n * l.c * l.plane
	a, err := op.args(inputs, size, size, l.slopes)
	if err != nil {
		return nil, err
	}
	dy, x, slope, dx := a[0], a[1], a[2], f32(l.dx)
	l.rows(func(lo, s int) {
		a := slope[s]
		xb, db := x[lo:lo+l.perSlot], dx[lo:lo+l.perSlot]
		for i, v := range dy[lo : lo+l.perSlot] {
			if xb[i] > 0 {
				db[i] = v
			} else {
				db[i] = a * v
			}
		}
	})
	return l.dx, nil
}

func (op *preluDSOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	size := l.n * l.c * l.plane
	a, err := op.args(inputs, size, size)
	if err != nil {
		return nil, err
	}
	dy, x := a[0], a[1]
	sums := l.sums
	clear(sums)
	l.rows(func(lo, s int) {
		xb := x[lo : lo+l.perSlot]
		sum := sums[s]
		for i, v := range dy[lo : lo+l.perSlot] {
			if xb[i] <= 0 {
				// The explicit conversion rounds the product (exact in
				// float64 anyway), so that no architecture fuses it with
				// the sum.
				sum += float64(float64(v) * float64(xb[i]))
			}
		}
		sums[s] = sum
	})
	ds := f32(l.dslope)
	for s, v := range sums {
		ds[s] = float32(v)
	}
	return l.dslope, nil
}
