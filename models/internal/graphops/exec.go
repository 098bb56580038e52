package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
)

// Program runs a Gorgonia graph without Gorgonia's TapeMachine. It executes
// the same op nodes in the same order as the TapeMachine (the graph's
// topological order from G.Sort, reversed), calling each op's Do, so its
// results are the TapeMachine's bit for bit. Everything a run needs — the
// value of each node, each op's input list — is laid out when the program
// is compiled, so a run allocates nothing of its own: a run costs one Do per
// op and nothing more when the ops return buffers they own, as this
// package's ops do.
//
// What the TapeMachine does on top is of no use here: register allocation
// (the ops own their outputs), a goroutine and channels per run (for
// batched cuBLAS/cgo calls, which no op makes), per-instruction logging
// arguments and binding each result to its node.
//
// G.Grad sums the gradient terms of a node read by several ops with
// Gorgonia's Add, which allocates its result on every run: a residual
// network's block input, read by the block's convolution and by its
// shortcut, has two. The program runs each such sum of two float32 tensors
// of one shape with a kernel-backed add instead (gradSums), which writes the
// same float32 sums into a buffer of the workspace; the TapeMachine still
// runs Gorgonia's op, and the two agree bit for bit.
//
// A Program is not safe for concurrent use, and its graph's ops share
// buffers with the other programs built on the same Workspace: run one of
// them at a time.
type Program struct {
	g     *G.ExprGraph // the graph, for TapeValues
	steps []step
	vals  []G.Value // value of each node after a run, by slot
	nodes []*G.Node // node of each slot
	slots map[*G.Node]int
}

// step runs one op node: in is filled from the slots args, then Do's result
// is stored in slot out.
type step struct {
	op   G.Op
	node *G.Node
	args []int
	in   []G.Value
	out  int
}

// compile lays out the program of g, whose gradient sums take their
// buffers from ws. Input nodes must have their values bound already
// (Graph.Input binds views of buffers): the program reads each once, here.
func compile(g *G.ExprGraph, ws *Workspace) (*Program, error) {
	sorted, err := G.Sort(g)
	if err != nil {
		return nil, err
	}
	p := &Program{g: g, slots: make(map[*G.Node]int, len(sorted))}
	sums := &gradSums{ws: ws, names: map[*G.Node]string{}, stock: map[int]G.Op{}}
	hashes := make(map[uint32]*G.Node, len(sorted))
	for i := len(sorted) - 1; i >= 0; i-- { // inputs first, as the TapeMachine runs them
		n := sorted[i]
		// The TapeMachine runs only the first of nodes that hash alike and
		// lets the others read its value; graph construction merges such
		// nodes, so a program has none.
		h := n.Hashcode()
		if other, ok := hashes[h]; ok {
			return nil, fmt.Errorf("nodes %v and %v hash alike", other, n)
		}
		hashes[h] = n
		slot := len(p.nodes)
		p.slots[n] = slot
		p.nodes = append(p.nodes, n)
		p.vals = append(p.vals, nil)
		if n.Op() == nil {
			if n.Value() == nil {
				return nil, fmt.Errorf("input %v has no value", n)
			}
			p.vals[slot] = n.Value()
			continue
		}
		s := step{op: n.Op(), node: n, out: slot}
		for it := g.From(n.ID()); it.Next(); {
			c, ok := p.slots[it.Node().(*G.Node)]
			if !ok {
				return nil, fmt.Errorf("%v reads a node not sorted before it", n)
			}
			s.args = append(s.args, c)
		}
		if a := s.op.Arity(); a >= 0 && a != len(s.args) {
			return nil, fmt.Errorf("%v has %d inputs, its op takes %d", n, len(s.args), a)
		}
		s.in = make([]G.Value, len(s.args))
		if s.op, err = sums.replace(p, n, s); err != nil {
			return nil, err
		}
		p.steps = append(p.steps, s)
	}
	return p, nil
}

// Run executes every op of the graph once, in the TapeMachine's order.
func (p *Program) Run() error {
	for i := range p.steps {
		s := &p.steps[i]
		for j, a := range s.args {
			s.in[j] = p.vals[a]
		}
		v, err := s.op.Do(s.in...)
		if err != nil {
			return fmt.Errorf("%v: %w", s.node, err)
		}
		p.vals[s.out] = v
	}
	return nil
}

// slot returns where the value of n is kept.
func (p *Program) slot(n *G.Node) (int, error) {
	s, ok := p.slots[n]
	if !ok {
		return 0, fmt.Errorf("node %v is not in the program", n)
	}
	return s, nil
}

// Float32s returns the float32 values in slot s after a run. The slice is
// the op's own buffer: the next run overwrites it.
func (p *Program) Float32s(s int) ([]float32, error) {
	v := p.vals[s]
	if v == nil {
		return nil, fmt.Errorf("node %v has no value", p.nodes[s].Name())
	}
	if d, ok := floatData(v); ok {
		return d, nil
	}
	return nil, fmt.Errorf("node %v holds %T, want []float32", p.nodes[s].Name(), v)
}

// Scalar returns the float32 scalar in slot s after a run.
func (p *Program) Scalar(s int) (float32, error) {
	v := p.vals[s]
	if v == nil {
		return 0, fmt.Errorf("node %v has no value", p.nodes[s].Name())
	}
	if d, ok := scalarData(v); ok {
		return d, nil
	}
	if d, ok := floatData(v); ok && len(d) == 1 {
		return d[0], nil
	}
	return 0, fmt.Errorf("node %v holds %T, want a float32 scalar", p.nodes[s].Name(), v)
}

// TapeValues runs the program's graph once on a fresh Gorgonia TapeMachine,
// the reference the Program reproduces bit for bit, and returns a copy of
// the values of the given slots (a scalar as one value). The graph's ops
// write into the same buffers as the Program's run, so it serves tests
// comparing the two, not concurrent use.
func (p *Program) TapeValues(slots ...int) (out [][]float32, err error) {
	err = catch(func() error {
		vm := G.NewTapeMachine(p.g)
		defer vm.Close()
		if err := vm.RunAll(); err != nil {
			return fmt.Errorf("TapeMachine: %w", err)
		}
		out = make([][]float32, len(slots))
		for i, s := range slots {
			if s < 0 || s >= len(p.nodes) {
				return fmt.Errorf("slot %d out of range [0, %d)", s, len(p.nodes))
			}
			v := p.nodes[s].Value()
			if d, ok := floatData(v); ok {
				out[i] = append([]float32(nil), d...)
			} else if d, ok := scalarData(v); ok {
				out[i] = []float32{d}
			} else {
				return fmt.Errorf("TapeMachine: node %v holds %T", p.nodes[s], v)
			}
		}
		return nil
	})
	return out, err
}
