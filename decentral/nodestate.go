package decentral

import (
	"fmt"
	"math"
	"slices"
)

// NodeState is what a process running some of the nodes (a rank) reports
// about one of them so that another can measure the whole run: the node's
// parameters and its counters. A rank gathers its nodes' states with
// [Optimizer.ExportNode]; the rank that measures imports them with
// [Optimizer.ImportNode], after which Mean, ConsensusError, GradNormSq,
// Loss and Counters cover every node.
type NodeState struct {
	Node                  int
	X                     []float32 // x_i, p floats
	Samples, Evals, Bytes int64
	Loss                  float64 // the loss of the node's last evaluation; NaN for none
}

// ExportNode returns node i's state, its X copied into dst's buffer when
// that is large enough.
func (o *Optimizer) ExportNode(i int, dst NodeState) NodeState {
	dst.Node = i
	dst.X = append(dst.X[:0], o.row(o.x, i)...)
	dst.Samples, dst.Evals, dst.Bytes = o.samples[i], o.evals[i], o.bytes[i]
	dst.Loss = o.loss[i]
	return dst
}

// ImportNode sets the parameters and counters of a node another process
// runs, as it reported them. It refuses one of this optimizer's own nodes,
// a node out of range, parameters of another length or not finite.
func (o *Optimizer) ImportNode(s NodeState) error {
	switch {
	case s.Node < 0 || s.Node >= o.m:
		return fmt.Errorf("node state of node %d: want a node of [0, %d)", s.Node, o.m)
	case o.runs(s.Node):
		return fmt.Errorf("node state of node %d: the node runs here", s.Node)
	case len(s.X) != o.p:
		return fmt.Errorf("node state of node %d: %d parameters, want %d", s.Node, len(s.X), o.p)
	case !finite(s.X):
		return fmt.Errorf("node state of node %d: %w: x has a NaN or Inf value", s.Node, ErrDiverged)
	case s.Samples < 0 || s.Evals < 0 || s.Bytes < 0 || math.IsInf(s.Loss, 0):
		return fmt.Errorf("node state of node %d: counters %d samples, %d evaluations, %d bytes, loss %v", s.Node, s.Samples, s.Evals, s.Bytes, s.Loss)
	}
	copy(o.row(o.x, s.Node), s.X)
	o.samples[s.Node], o.evals[s.Node], o.bytes[s.Node] = s.Samples, s.Evals, s.Bytes
	o.loss[s.Node] = s.Loss
	return nil
}

// runs reports whether node i is one of the optimizer's own nodes.
func (o *Optimizer) runs(i int) bool {
	_, found := slices.BinarySearch(o.local, i)
	return found
}
