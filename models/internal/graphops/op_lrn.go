package graphops

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// lrnLayer is torch's local response normalisation across channels:
// y_c = x_c / (k + α/n · Σ_{c'∈W(c)} x_{c'}²)^β, W(c) the channels
// [c − ⌊n/2⌋, c + ⌊(n−1)/2⌋] that exist (AlexNet's, the TensorFlow
// tutorial's CIFAR-10 CNN's).
type lrnLayer struct {
	name           string
	n, c, plane    int // samples, channels, values a channel
	size           int
	alpha, beta, k float64
	y, dx          tensor.Tensor // dx nil outside training graphs or for the graph's input
	base, den      []float64     // k + α/n·Σx² and its power β, a value each, written by the forward op
	squares        []float64     // x² of one sample, the forward op's
	terms          []float64     // dy·x/(base·den) of one sample, the backward op's
}

// lrnOp is x → y, the sums of squares, the base and its power in float64
// (detmath.Pow) in a fixed order: the same bits on every kernel set and
// architecture.
type lrnOp struct {
	kop
	l *lrnLayer
}

// lrnDXOp is (dy, x) → dx_j = dy_j/den_j − (2αβ/n)·x_j·Σ_{c: j∈W(c)}
// dy_c·x_c/(base_c·den_c), in float64.
type lrnDXOp struct {
	kop
	l *lrnLayer
}

// LRN adds torch's nn.LocalResponseNorm(size, alpha, beta, k) of x
// [n,C,…]: each value divided by (k + α/size · the sum of the squares of
// the size channels around it)^β. Parameter-free, the layer takes name,
// unique within the graph, for its buffers and ops; the input gradient is
// formed only where another op computes x.
func (g *Graph) LRN(name string, x *G.Node, size int, alpha, beta, k float64) *G.Node {
	if !g.ok(name, x) {
		return nil
	}
	xs := x.Shape()
	if len(xs) < 3 {
		g.err = fmt.Errorf("%s: input of shape %v, want maps [n,C,…]", name, xs)
		return nil
	}
	if size < 1 || math.IsNaN(alpha+beta+k) || math.IsInf(alpha+beta+k, 0) || !(k > 0) {
		g.err = fmt.Errorf("%s: size %d, α %g, β %g, k %g: want a size from 1, finite α and β and k above 0", name, size, alpha, beta, k)
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	total := xs.TotalSize()
	l := &lrnLayer{name: name, n: xs[0], c: xs[1], plane: total / xs[0] / xs[1], size: size, alpha: alpha, beta: beta, k: k,
		y: g.ws.tensor(name+".y", xs...), base: make([]float64, total), den: make([]float64, total), squares: make([]float64, total/xs[0])}
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(name+".dx", xs...)
		l.terms = make([]float64, xs[1]*l.plane)
	}
	return g.apply(&lrnOp{kop{name + ".forward", l, dims(x), l.y.Shape()}, l}, name, x)
}

// window returns the channels [lo, hi] whose squares the value of channel
// c sums.
func (l *lrnLayer) window(c int) (lo, hi int) {
	return max(c-l.size/2, 0), min(c+(l.size-1)/2, l.c-1)
}

func (op *lrnOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.c*l.plane)
	if err != nil {
		return nil, err
	}
	y := f32(l.y)
	for s := range l.n {
		x := a[0][s*l.c*l.plane : (s+1)*l.c*l.plane]
		for i, v := range x {
			// Exact: a float32's square fits a float64's significand, so
			// no fusing with the sums below can change a bit.
			l.squares[i] = float64(v) * float64(v)
		}
		for c := range l.c {
			lo, hi := l.window(c)
			for p := range l.plane {
				var sq float64
				for w := lo; w <= hi; w++ {
					sq += l.squares[w*l.plane+p]
				}
				i := c*l.plane + p
				base := l.k + float64(l.alpha*(sq/float64(l.size)))
				den := detmath.Pow(base, l.beta)
				o := s*l.c*l.plane + i
				l.base[o], l.den[o] = base, den
				y[o] = float32(float64(x[i]) / den)
			}
		}
	}
	return l.y, nil
}

func (op *lrnOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil} }

func (op *lrnOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dx == nil {
		return G.Nodes{nil}, nil
	}
	dx, err := G.ApplyOp(&lrnDXOp{kop{l.name + ".dx", l, dims(grad, inputs[0]), l.dx.Shape()}, l}, grad, inputs[0])
	if err != nil {
		return nil, fmt.Errorf("%s: input gradient: %w", l.name, err)
	}
	return G.Nodes{dx}, nil
}

func (op *lrnDXOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.c*l.plane, l.n*l.c*l.plane)
	if err != nil {
		return nil, err
	}
	dx, coef := f32(l.dx), 2*l.alpha*l.beta/float64(l.size)
	for s := range l.n {
		off := s * l.c * l.plane
		dy, x := a[0][off:off+l.c*l.plane], a[1][off:off+l.c*l.plane]
		for i := range l.terms {
			l.terms[i] = float64(dy[i]) * float64(x[i]) / float64(l.base[off+i]*l.den[off+i])
		}
		for j := range l.c {
			// The channels c whose windows hold j.
			lo, hi := max(j-(l.size-1)/2, 0), min(j+l.size/2, l.c-1)
			for p := range l.plane {
				var t float64
				for c := lo; c <= hi; c++ {
					t += l.terms[c*l.plane+p]
				}
				i := j*l.plane + p
				dx[off+i] = float32(float64(dy[i])/l.den[off+i] - float64(coef*float64(x[i])*t))
			}
		}
	}
	return l.dx, nil
}
