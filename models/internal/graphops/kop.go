package graphops

import (
	"fmt"
	"hash"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// kop is the part common to this package's kernel-backed Gorgonia ops (the
// convolution, bias, group norm, ReLU, residual add, pooling, dense and
// cross-entropy layers, the logistic regression's scores, cross-entropy
// and sum, the program's gradient sums, and their gradients). Each
// op computes into buffers its layer owns and returns the same tensor on
// every run, so a compiled graph allocates nothing when it is rerun.
//
// A layer's forward op and its gradient ops share the layer: state that is
// not a Gorgonia value (the pooling's argmax codes, the batch's labels, a
// gradient computed as a by-product of another) passes through it. The
// Program (exec.go) runs the ops in the TapeMachine's order, a fixed
// topological order of the graph in which each forward op precedes its
// gradient ops: most gradient ops read the forward op's output or an
// upstream gradient that depends on it, and the cross-entropy's, which
// reads only the logits and the seed, follows it as well (the tests
// against the TapeMachine and the golden files would see otherwise).
type kop struct {
	name  string       // e.g. "conv1.forward"; unique within a graph
	layer any          // its pointer tells instances apart in hashes
	in    []int        // dimensions of each input (0: scalar)
	out   tensor.Shape // shape of the output (empty: scalar)
}

func (op *kop) Arity() int { return len(op.in) }

func (op *kop) Type() hm.Type {
	a := hm.TypeVariable('a')
	ts := make([]hm.Type, 0, len(op.in)+1)
	for _, d := range append(op.in[:len(op.in):len(op.in)], op.out.Dims()) {
		if d == 0 {
			ts = append(ts, a)
		} else {
			ts = append(ts, G.TensorType{Dims: d, Of: a})
		}
	}
	return hm.NewFnType(ts...)
}

func (op *kop) InferShape(...G.DimSizer) (tensor.Shape, error) {
	if op.out.Dims() == 0 {
		return tensor.ScalarShape(), nil
	}
	return op.out.Clone(), nil
}

func (op *kop) ReturnsPtr() bool      { return false }
func (op *kop) CallsExtern() bool     { return false }
func (op *kop) OverwritesInput() int  { return -1 }
func (op *kop) WriteHash(h hash.Hash) { writeHash(h, op) }
func (op *kop) Hashcode() uint32      { return hashOf(op) }
func (op *kop) String() string {
	return fmt.Sprintf("%s{%v→%v, %p}", op.name, op.in, op.out, op.layer)
}

// maxArity is the largest number of inputs of a kernel-backed op.
const maxArity = 4

// args returns the float32 data of the op's tensor inputs, checking each
// against the number of values it must hold. It returns an array, not a
// slice, so that nothing escapes to the heap.
func (op *kop) args(inputs []G.Value, want ...int) (out [maxArity][]float32, err error) {
	if len(inputs) != len(want) || len(want) > maxArity {
		return out, fmt.Errorf("%s: %d inputs, want %d", op.name, len(inputs), len(want))
	}
	for i, v := range inputs {
		d, ok := floatData(v)
		if !ok {
			return out, fmt.Errorf("%s: input %d holds %T, want []float32", op.name, i, v.Data())
		}
		if len(d) != want[i] {
			return out, fmt.Errorf("%s: input %d has %d values, want %d", op.name, i, len(d), want[i])
		}
		out[i] = d
	}
	return out, nil
}

// floatData returns the values of a float32 tensor. Unlike Data, it does
// not allocate for a *tensor.Dense.
func floatData(v G.Value) ([]float32, bool) {
	if d, ok := v.(*tensor.Dense); ok {
		if d.Dtype() != tensor.Float32 {
			return nil, false
		}
		return d.Float32s(), true
	}
	d, ok := v.Data().([]float32)
	return d, ok
}

// scalarData returns the value of a float32 scalar. Unlike Data, it does
// not allocate for a *G.F32.
func scalarData(v G.Value) (float32, bool) {
	if f, ok := v.(*G.F32); ok {
		return float32(*f), true
	}
	d, ok := v.Data().(float32)
	return d, ok
}

// f32 returns the values of one of the layers' own float32 tensors.
func f32(t tensor.Tensor) []float32 {
	d, _ := floatData(t)
	return d
}

// newVec returns a zeroed float32 vector of n values, an op's own output.
func newVec(n int) tensor.Tensor {
	return tensor.New(tensor.WithShape(n), tensor.Of(tensor.Float32))
}
