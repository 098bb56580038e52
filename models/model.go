// Package models holds the networks gtstorm trains — the MNIST and CIFAR-10
// CNNs and the non-convex logistic regression of the paper — as Gorgonia
// graphs. From outside a model is a loss of ONE flat float32 parameter
// vector: a [Worker] takes the vector and a minibatch and returns the
// batch-mean loss and its gradient, so the optimizer layer never sees layers.
//
// Each network is one short builder: [NewMNISTCNN] (mnist.go),
// [NewCIFARCNN] (cifar.go) and [NewLogReg] (logreg.go) declare the
// parameter tensors in the order they lie in the flat vector ([Model.Params])
// and write the forward pass as a chain of layer calls, as in Gorgonia's
// convnet example; Gorgonia differentiates it symbolically. The layers are
// custom Gorgonia ops on the AVX-512 kernels of internal/kernels, and the
// graphs run on a small executor instead of Gorgonia's TapeMachine, with
// the TapeMachine's results bit for bit; both live in models/internal/graphops.
// One MNIST CNN gradient at batch 64 costs about 2.5 ms on one core.
//
// Each Worker owns compiled graph instances (one per batch size, built
// lazily) and is not safe for concurrent use; a [Pool] holds one Worker per
// goroutine. The ops compute into buffers that all graphs of a worker
// share, so a steady-state Grad, GradPair or Eval allocates nothing, and a
// worker holds about 5 MB for the MNIST CNN at batch 64 and 7.5 MB for the
// CIFAR CNN at batch 128 ([WorkerBytes] estimates it). Eval runs its batch
// through the network in pieces of at most 64 samples, so evaluation chunks
// add nothing to that.
package models

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/gtstorm/gtstorm/data"
)

// Model is a loss as a function of one flat float32 parameter vector.
type Model interface {
	// Name identifies the model, e.g. "mnist-cnn".
	Name() string
	// NumParams returns p, the length of the flat parameter vector.
	NumParams() int
	// Params lists the parameter tensors in the order they lie in the flat vector.
	Params() []Param
	// Init returns a fresh parameter vector drawn with fan-in scaled uniform
	// initialisation (PyTorch's default for Conv2d and Linear); the same seed
	// gives the same vector.
	Init(seed uint64) []float32
	// NewWorker returns one independent graph instance.
	NewWorker() (Worker, error)
}

// Param names one parameter tensor and where it lies in the flat vector.
type Param struct {
	Name   string
	Shape  []int
	Offset int
}

// Size returns the number of values of the tensor.
func (p Param) Size() int {
	n := 1
	for _, s := range p.Shape {
		n *= s
	}
	return n
}

// Worker evaluates a model on minibatches. A Worker is NOT safe for
// concurrent use: give each goroutine its own (see Pool).
type Worker interface {
	// Grad writes the gradient of the batch-mean loss at params into grad
	// (length NumParams) and returns the loss.
	Grad(params []float32, b data.Batch, grad []float32) (loss float32, err error)
	// Eval returns the summed loss and the number of correct predictions over
	// the batch, without a gradient. lossSum/b.Len() is the loss Grad
	// returns for the same batch (computed in float64).
	Eval(params []float32, b data.Batch) (lossSum float64, correct int, err error)
}

// layout lays parameter tensors out one after another in a flat vector.
// fanIn[i] is the fan-in used to scale the initialisation of tensor i.
type layout struct {
	params []Param
	fanIn  []int
	size   int
}

// add appends a tensor of the given shape and fan-in.
func (l *layout) add(name string, fanIn int, shape ...int) {
	p := Param{Name: name, Shape: shape, Offset: l.size}
	l.params = append(l.params, p)
	l.fanIn = append(l.fanIn, fanIn)
	l.size += p.Size()
}

// conv appends the filters name.w [out,in,k,k] and bias name.b [out] of a
// k×k convolution from in to out channels, both of fan-in in·k·k.
func (l *layout) conv(name string, in, out, k int) {
	l.add(name+".w", in*k*k, out, in, k, k)
	l.add(name+".b", in*k*k, out)
}

// dense appends the weights name.w [in,out] and bias name.b [out] of a
// fully connected layer from in to out units, both of fan-in in.
func (l *layout) dense(name string, in, out int) {
	l.add(name+".w", in, in, out)
	l.add(name+".b", in, out)
}

// Params returns a copy of the tensor list.
func (l *layout) Params() []Param {
	out := make([]Param, len(l.params))
	for i, p := range l.params {
		p.Shape = append([]int(nil), p.Shape...)
		out[i] = p
	}
	return out
}

// NumParams returns the length of the flat vector.
func (l *layout) NumParams() int { return l.size }

// Init draws every tensor from U(-1/√fanIn, 1/√fanIn), which is what
// PyTorch's kaiming_uniform_(a=√5) default gives for weights and biases.
func (l *layout) Init(seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 0x6d6f64656c73)) // "models"
	x := make([]float32, l.size)
	for i, p := range l.params {
		bound := 1 / math.Sqrt(float64(l.fanIn[i]))
		for k := p.Offset; k < p.Offset+p.Size(); k++ {
			x[k] = float32((float64(2*float64(rng.Float64())) - 1) * bound)
		}
	}
	return x
}

// checkBatch validates a batch against what a model expects: dim features
// per sample and labels below classes.
func checkBatch(b data.Batch, dim, classes int) error {
	if b.Data == nil {
		return fmt.Errorf("batch has no dataset")
	}
	if b.Len() == 0 {
		return fmt.Errorf("%v: empty batch", b)
	}
	if got := b.Data.Dim(); got != dim {
		return fmt.Errorf("%v: samples have %d features (shape %v), model expects %d", b, got, b.Data.Shape, dim)
	}
	n := b.Data.Len()
	for _, i := range b.Index {
		if i < 0 || i >= n {
			return fmt.Errorf("%v: sample index %d out of range [0, %d)", b, i, n)
		}
		if l := int(b.Data.Labels[i]); l >= classes {
			return fmt.Errorf("%v: sample %d has label %d, model has %d classes", b, i, l, classes)
		}
	}
	return nil
}

// checkVec reports an error unless v has length p.
func checkVec(what string, v []float32, p int) error {
	if len(v) != p {
		return fmt.Errorf("%s has length %d, model has %d parameters", what, len(v), p)
	}
	return nil
}
