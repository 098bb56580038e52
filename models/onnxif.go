package models

import (
	"fmt"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// ifConst imports the If n of a constant condition, which torch writes
// where a traced shape decides (squeeze(1) of a dimension that may not be
// 1, in nn.LocalResponseNorm): the nodes of the branch the condition
// takes, in order, whose outputs become n's.
func (im *importer) ifConst(n *onnx.Node) error {
	c, err := im.konst(n, 0, "condition", false)
	if err != nil {
		return err
	}
	if c.size() != 1 {
		return fmt.Errorf("If of a condition of shape %v; want one value", c.dims)
	}
	branch := "else_branch"
	if c.float && c.f[0] != 0 || !c.float && c.i[0] != 0 {
		branch = "then_branch"
	}
	a := attr(n, branch)
	if a == nil || a.G == nil {
		return fmt.Errorf("If without its %s", branch)
	}
	g := a.G
	if len(g.Outputs) != len(n.Outputs) {
		return fmt.Errorf("If's %s has %d outputs, the If %d", branch, len(g.Outputs), len(n.Outputs))
	}
	if err := im.initialisers(g.Initializers); err != nil {
		return fmt.Errorf("%s's %w", branch, err)
	}
	for i := range g.Nodes {
		b := &g.Nodes[i]
		if err := im.node(b); err != nil {
			return fmt.Errorf("%s's node %q (%s): %w", branch, b.Name, b.OpType, err)
		}
	}
	for i, o := range g.Outputs {
		v, ok := im.vals[o.Name]
		if !ok {
			return fmt.Errorf("If's %s does not compute its output %q", branch, o.Name)
		}
		im.vals[n.Outputs[i]] = v
	}
	return im.net.Err()
}
