package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// siluLayer is y = x·σ(x), elementwise, for x of any shape.
type siluLayer struct {
	name  string
	size  int
	y, dx tensor.Tensor // output and input gradient, of x's shape
}

// siluOp is the forward pass: x → y.
type siluOp struct {
	kop
	l *siluLayer
}

// siluInputGradOp is (x, dy) → dx = dy·(σ(x) + x·σ(x)·(1 − σ(x))). It
// reads the input: the output does not determine it (SiLU is not
// one-to-one below its minimum near x = −1.28).
type siluInputGradOp struct {
	kop
	l *siluLayer
}

// SiLU adds the sigmoid-weighted linear unit x·σ(x) = x/(1 + e⁻ˣ) (Swish),
// elementwise, for x of any shape (torch's nn.SiLU). Parameter-free, the
// layer takes name, unique within the graph, for its buffers and ops. The
// gradient with respect to x is formed only when x is computed by another
// op. Both passes are pure Go in float64 from detmath.Exp, rounded to
// float32 once: the same bits on every kernel set and architecture.
func (g *Graph) SiLU(name string, x *G.Node) *G.Node {
	if !g.ok(name, x) || !g.claim(name) {
		return nil
	}
	xs := x.Shape()
	l := &siluLayer{name: name, size: xs.TotalSize(), y: g.ws.tensor(name+".y", xs...)}
	if g.training && x.Op() != nil {
		l.dx = g.ws.tensor(name+".dx", xs...)
	}
	return g.apply(&siluOp{kop{name + ".forward", l, dims(x), l.y.Shape()}, l}, name, x)
}

func (op *siluOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size)
	if err != nil {
		return nil, err
	}
	silu(f32(op.l.y), a[0])
	return op.l.y, nil
}

func (op *siluOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil} }

func (op *siluOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dx == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", l.name)
	}
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%s: %d inputs, want 1", l.name, len(inputs))
	}
	dx, err := G.ApplyOp(&siluInputGradOp{kop{l.name + ".dx", l, dims(inputs[0], grad), l.dx.Shape()}, l}, inputs[0], grad)
	if err != nil {
		return nil, fmt.Errorf("%s: input gradient: %w", l.name, err)
	}
	return G.Nodes{dx}, nil
}

func (op *siluInputGradOp) Do(inputs ...G.Value) (G.Value, error) {
	a, err := op.args(inputs, op.l.size, op.l.size)
	if err != nil {
		return nil, err
	}
	siluBackward(f32(op.l.dx), a[1], a[0])
	return op.l.dx, nil
}

// silu sets y = x·σ(x), computed in float64 and rounded to float32; y and
// x may be the same slice. NaN stays NaN; +Inf gives +Inf, −Inf NaN
// (−∞·0, as torch's x/(1 + e⁻ˣ) gives).
func silu(y, x []float32) {
	y = y[:len(x)]
	for i, v := range x {
		x64 := float64(v)
		y[i] = float32(float64(x64 * sigmoid64(x64)))
	}
}

// siluBackward sets dx = dy·(σ(x) + x·σ(x)·(1 − σ(x))), x being the
// SiLU's input, computed in float64 and rounded to float32; dx and dy may
// be the same slice. Every product is rounded before it meets a sum, so
// that no architecture fuses them.
func siluBackward(dx, dy, x []float32) {
	dx = dx[:len(dy)]
	x = x[:len(dy)]
	for i, g := range dy {
		v := float64(x[i])
		s := sigmoid64(v)
		xs := float64(v * s)
		d := float64(s + float64(xs*float64(1-s)))
		dx[i] = float32(float64(float64(g) * d))
	}
}

// sigmoid64 is 1/(1 + e⁻ˣ) for x ≥ 0 and eˣ/(1 + eˣ) below, as the
// Sigmoid kernel computes it: the exponential is of −|x|, so it never
// overflows, and the result keeps its relative precision as it nears 0.
// NaN stays NaN.
func sigmoid64(x float64) float64 {
	if x >= 0 {
		return 1 / float64(1+detmath.Exp(-x))
	}
	e := detmath.Exp(x)
	return e / float64(1+e)
}
