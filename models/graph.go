package models

import (
	"fmt"
	"hash"
	"hash/fnv"
	"sync"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// builder adds layers to a Gorgonia graph and keeps the first error: once
// one step fails every later step returns nil, so a network reads as a plain
// chain of calls with one error check at the end.
//
// The kernel-backed layers (conv, poolBiasReLU, dense, crossEntropy) take
// their buffers from ws, and those of their gradients only when training
// is set.
type builder struct {
	g        *G.ExprGraph
	err      error
	ws       *workspace
	training bool
}

func newBuilder() *builder { return &builder{g: G.NewGraph(), ws: newWorkspace()} }

// keep records err (wrapped with what) unless an error is already recorded.
func (b *builder) keep(n *G.Node, err error, what string) *G.Node {
	if b.err != nil {
		return nil
	}
	if err != nil {
		b.err = fmt.Errorf("%s: %w", what, err)
		return nil
	}
	return n
}

// view returns a float32 tensor of the given shape backed by buf (no copy).
func view(buf []float32, shape ...int) tensor.Tensor {
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(buf[:len(buf):len(buf)]))
}

// input adds a float32 input node whose value is a view of buf: writing into
// buf before a run binds the node's value without allocating.
func (b *builder) input(name string, buf []float32, shape ...int) *G.Node {
	if b.err != nil {
		return nil
	}
	return G.NewTensor(b.g, tensor.Float32, len(shape), G.WithShape(shape...), G.WithName(name), G.WithValue(view(buf, shape...)))
}

// params adds one input node per parameter tensor of l, each a view of its
// slice of the flat vector backing.
func (b *builder) params(l *layout, backing []float32) []*G.Node {
	nodes := make([]*G.Node, len(l.params))
	for i, p := range l.params {
		nodes[i] = b.input(p.Name, backing[p.Offset:p.Offset+p.Size()], p.Shape...)
	}
	return nodes
}

// gradients adds the symbolic gradient of loss with respect to each of wrt.
func (b *builder) gradients(loss *G.Node, wrt []*G.Node) G.Nodes {
	if b.err != nil {
		return nil
	}
	grads, err := G.Grad(loss, wrt...)
	if err != nil {
		b.err = fmt.Errorf("gradient: %w", err)
		return nil
	}
	return grads
}

// program compiles the graph (see exec.go) and returns it with the slots
// of outs, whose values are read after each run.
func (b *builder) program(outs ...*G.Node) (*program, []int, error) {
	if b.err != nil {
		return nil, nil, b.err
	}
	p, err := compile(b.g)
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

// buildGraph runs build under buildMu, turning a panic into an error.
func buildGraph(build func() error) error {
	buildMu.Lock()
	defer buildMu.Unlock()
	return catch(build)
}

// catch runs f and turns a panic inside Gorgonia (which panics on some
// shape and compile errors) into an error.
func catch(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gorgonia panicked: %v", r)
		}
	}()
	return f()
}

// copyGrads copies the value of each gradient (slots grads of prog, in
// layout order) into its place in the flat gradient vector grad.
func copyGrads(l *layout, prog *program, grads []int, grad []float32) error {
	for i, p := range l.params {
		v, err := prog.float32s(grads[i])
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

// writeHash and hashOf implement the hashing methods of this package's
// custom ops from their String, which must tell distinct instances apart:
// Gorgonia merges nodes whose op and children hash the same.
func writeHash(h hash.Hash, s fmt.Stringer) { fmt.Fprint(h, s.String()) }

func hashOf(s fmt.Stringer) uint32 {
	h := fnv.New32a()
	writeHash(h, s)
	return h.Sum32()
}
