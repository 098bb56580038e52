package models

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"github.com/gtstorm/gtstorm/models/internal/graphops"
)

// nodes are a network's parameter nodes by name ("conv1.w", "fc.b", …).
type nodes map[string]*G.Node

// paramNodes adds one input node per parameter tensor of l, each a view of
// its slice of the flat vector backing, in layout order, and returns them
// as a list and by name.
func paramNodes(g *graphops.Graph, l *layout, backing []float32) ([]*G.Node, nodes) {
	list := make([]*G.Node, len(l.params))
	byName := make(nodes, len(l.params))
	for i, p := range l.params {
		list[i] = g.Input(p.Name, backing[p.Offset:p.Offset+p.Size()], p.Shape...)
		byName[p.Name] = list[i]
	}
	return list, byName
}

// copyGrads copies the value of each gradient (slots grads of prog, in
// layout order) into its place in the flat gradient vector grad.
func copyGrads(l *layout, prog *graphops.Program, grads []int, grad []float32) error {
	for i, p := range l.params {
		v, err := prog.Float32s(grads[i])
		if err != nil {
			return fmt.Errorf("gradient of %s: %w", p.Name, err)
		}
		if len(v) != p.Size() {
			return fmt.Errorf("gradient of %s has %d values, want %d", p.Name, len(v), p.Size())
		}
		copy(grad[p.Offset:p.Offset+p.Size()], v)
	}
	return nil
}
