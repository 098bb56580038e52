package graphops

import (
	"fmt"
	"reflect"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// gradSums replaces, while a program is compiled, each of Gorgonia's
// elementwise adds of two float32 tensors of one shape — how G.Grad sums
// the gradient terms of a node read by several ops — with an addOp that
// computes the same float32 sums into a buffer of the workspace instead of
// a tensor allocated on every run.
type gradSums struct {
	ws    *Workspace
	names map[*G.Node]string // the buffer name of each sum replaced so far
	stock map[int]G.Op       // Gorgonia's add of two float32 tensors, by dimensions
}

// namedOp is implemented by this package's ops (through kop).
type namedOp interface{ opName() string }

func (op *kop) opName() string { return op.name }

// replace returns the op that step s of node n runs: an addOp when n is a
// sum that gradSums replaces, n's own op otherwise.
func (gs *gradSums) replace(p *Program, n *G.Node, s step) (G.Op, error) {
	if _, ours := n.Op().(namedOp); ours || len(s.args) != 2 || n.Dtype() != tensor.Float32 || n.Dims() == 0 {
		return n.Op(), nil
	}
	a, b := p.nodes[s.args[0]], p.nodes[s.args[1]]
	for _, c := range []*G.Node{a, b} {
		if c.Dtype() != tensor.Float32 || !c.Shape().Eq(n.Shape()) {
			return n.Op(), nil
		}
	}
	if stock, err := gs.isStockAdd(n.Op(), n.Dims()); err != nil || !stock {
		return n.Op(), err
	}
	name := fmt.Sprintf("sum(%s,%s)", gs.name(a), gs.name(b))
	gs.names[n] = name
	return newAddOp(gs.ws, name, n.Shape(), dims(a, b)), nil
}

// name returns the name of the value of node n: its op's, for this
// package's ops and the sums replaced, or the node's ID.
func (gs *gradSums) name(n *G.Node) string {
	if s, ok := gs.names[n]; ok {
		return s
	}
	if op, ok := n.Op().(namedOp); ok {
		return op.opName()
	}
	return fmt.Sprintf("node%d", n.ID())
}

// isStockAdd reports whether op is Gorgonia's a + b for two float32 tensors
// of d dimensions: the op of G.Add on such tensors of a scratch graph, of
// the same type and hash (Gorgonia's identity of ops).
func (gs *gradSums) isStockAdd(op G.Op, d int) (bool, error) {
	ref, ok := gs.stock[d]
	if !ok {
		g := G.NewGraph()
		shape := make([]int, d)
		for i := range shape {
			shape[i] = 2
		}
		a := G.NewTensor(g, tensor.Float32, d, G.WithShape(shape...), G.WithName("a"))
		b := G.NewTensor(g, tensor.Float32, d, G.WithShape(shape...), G.WithName("b"))
		sum, err := G.Add(a, b)
		if err != nil {
			return false, fmt.Errorf("compile: Gorgonia's add of two tensors: %w", err)
		}
		ref = sum.Op()
		gs.stock[d] = ref
	}
	return reflect.TypeOf(op) == reflect.TypeOf(ref) && op.Hashcode() == ref.Hashcode() && op.String() == ref.String(), nil
}
