package graphops

import (
	"fmt"
	"hash"
	"hash/fnv"
	"strings"
	"sync"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Graph adds layers to one Gorgonia graph and keeps the first error: once
// one call fails every later call returns nil, so a network reads as a
// plain chain of calls with one error check at the end (Err or Compile).
//
// The kernel-backed layers take their buffers from the graph's Workspace,
// and those of their gradients only when the graph is built for training.
type Graph struct {
	eg       *G.ExprGraph
	err      error
	ws       *Workspace
	training bool
	layers   map[string]bool // names claimed by layers (claim)
}

// New returns an empty graph whose layers take their buffers from ws (a
// fresh workspace when nil). With training set the layers also lay out
// their gradients, which Gradients then adds; without it the graph is
// forward only.
func New(ws *Workspace, training bool) *Graph {
	if ws == nil {
		ws = NewWorkspace()
	}
	return &Graph{eg: G.NewGraph(), ws: ws, training: training, layers: map[string]bool{}}
}

// claim records name as a layer's, which prefixes its buffers and its ops'
// names, and reports false (recording an error) when another layer of the
// graph has it already: the two would share buffers.
func (g *Graph) claim(name string) bool {
	if g.layers[name] {
		g.err = fmt.Errorf("%s: two layers of the graph have this name", name)
		return false
	}
	if g.layers == nil {
		g.layers = map[string]bool{}
	}
	g.layers[name] = true
	return true
}

// Err returns the first error of the graph's calls.
func (g *Graph) Err() error { return g.err }

// keep records err (wrapped with what) unless an error is already recorded.
func (g *Graph) keep(n *G.Node, err error, what string) *G.Node {
	if g.err != nil {
		return nil
	}
	if err != nil {
		g.err = fmt.Errorf("%s: %w", what, err)
		return nil
	}
	return n
}

// ok reports whether a layer may be added: no error yet and none of its
// inputs nil (a nil input records an error).
func (g *Graph) ok(what string, inputs ...*G.Node) bool {
	if g.err != nil {
		return false
	}
	for i, n := range inputs {
		if n == nil {
			g.err = fmt.Errorf("%s: input %d is nil", what, i)
			return false
		}
	}
	return true
}

// view returns a float32 tensor of the given shape backed by buf (no copy).
func view(buf []float32, shape ...int) tensor.Tensor {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(buf[:len(buf):len(buf)]))
}

// Input adds a float32 input node whose value is a view of buf: writing
// into buf before a run binds the node's value without allocating.
func (g *Graph) Input(name string, buf []float32, shape ...int) *G.Node {
	if g.err != nil {
		return nil
	}
	if n := tensor.Shape(shape).TotalSize(); len(buf) != n {
		g.err = fmt.Errorf("input %s: %d values for shape %v", name, len(buf), shape)
		return nil
	}
	return G.NewTensor(g.eg, tensor.Float32, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(view(buf, shape...)))
}

// Gradients adds the symbolic gradient of loss with respect to each of wrt
// (Gorgonia's G.Grad) and returns them in the order of wrt.
func (g *Graph) Gradients(loss *G.Node, wrt ...*G.Node) G.Nodes {
	if !g.ok("gradient", append([]*G.Node{loss}, wrt...)...) {
		return nil
	}
	grads, err := G.Grad(loss, wrt...)
	if err != nil {
		g.err = fmt.Errorf("gradient: %w", err)
		return nil
	}
	return grads
}

// Compile lays the graph out as a Program and returns it with the slots of
// outs, whose values are read after each run (Program.Float32s,
// Program.Scalar).
func (g *Graph) Compile(outs ...*G.Node) (*Program, []int, error) {
	if !g.ok("compile", outs...) {
		return nil, nil, g.err
	}
	p, err := compile(g.eg, g.ws)
	if err != nil {
		return nil, nil, err
	}
	slots := make([]int, len(outs))
	for i, n := range outs {
		if slots[i], err = p.slot(n); err != nil {
			return nil, nil, err
		}
	}
	return p, slots, nil
}

// buildMu serialises graph construction. Gorgonia's graph builders write
// package-level state (group counters in internal/encoding, lazily cached
// hashes of shared constant nodes), so two graphs may not be built at the
// same time, even in different workers. Running compiled graphs needs no lock.
var buildMu sync.Mutex

// Build runs build, which builds and compiles graphs, under a lock that
// serialises all graph construction in the process (Gorgonia's builders
// share package-level state), turning a panic inside Gorgonia (which panics
// on some shape and compile errors) into an error. Running compiled
// programs needs no lock.
func Build(build func() error) error {
	buildMu.Lock()
	defer buildMu.Unlock()
	return catch(build)
}

// catch runs f and turns a panic into an error.
func catch(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gorgonia panicked: %v", r)
		}
	}()
	return f()
}

// apply adds op to the graph with the given inputs.
func (g *Graph) apply(op G.Op, what string, inputs ...*G.Node) *G.Node {
	if g.err != nil {
		return nil
	}
	n, err := G.ApplyOp(op, inputs...)
	return g.keep(n, err, what)
}

// dims returns the number of dimensions of each node.
func dims(nodes ...*G.Node) []int {
	d := make([]int, len(nodes))
	for i, n := range nodes {
		d[i] = n.Dims()
	}
	return d
}

// layerName names a layer after its parameter node: "conv1.w" → "conv1".
// The name prefixes the layer's buffers in the workspace and its ops' names.
func layerName(param *G.Node, suffix string) string {
	return strings.TrimSuffix(param.Name(), suffix)
}

// writeHash and hashOf implement the hashing methods of this package's
// custom ops from their String, which must tell distinct instances apart:
// Gorgonia merges nodes whose op and children hash the same.
func writeHash(h hash.Hash, s fmt.Stringer) { fmt.Fprint(h, s.String()) }

func hashOf(s fmt.Stringer) uint32 {
	h := fnv.New32a()
	writeHash(h, s)
	return h.Sum32()
}
