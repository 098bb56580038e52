package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// scalarSumOp is a + b for two float32 scalars, the logistic regression's
// loss as data term plus regulariser. Gorgonia's Add does the same float32
// addition but returns a new scalar on every run; this op reuses one. Its
// gradient passes the upstream gradient to both terms, as Add's does.
type scalarSumOp struct {
	kop
	out *G.F32
}

// AddScalars adds x + y for float32 scalar nodes x and y (Gorgonia's Add
// without its allocation per run).
func (g *Graph) AddScalars(x, y *G.Node) *G.Node {
	const name = "add"
	if !g.ok(name, x, y) {
		return nil
	}
	if !x.IsScalar() || !y.IsScalar() {
		g.err = fmt.Errorf("%s: %v + %v: want scalars", name, x.Shape(), y.Shape())
		return nil
	}
	op := &scalarSumOp{out: G.NewF32(0)}
	op.kop = kop{name, op.out, dims(x, y), nil}
	return g.apply(op, name, x, y)
}

func (op *scalarSumOp) Do(inputs ...G.Value) (G.Value, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%s: %d inputs, want 2", op.name, len(inputs))
	}
	x, ok := scalarData(inputs[0])
	y, ok2 := scalarData(inputs[1])
	if !ok || !ok2 {
		return nil, fmt.Errorf("%s: inputs hold %T and %T, want float32 scalars", op.name, inputs[0], inputs[1])
	}
	*op.out = G.F32(x + y)
	return op.out, nil
}

func (op *scalarSumOp) DiffWRT(int) []bool { return []bool{true, true} }

func (op *scalarSumOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	return G.Nodes{grad, grad}, nil
}
