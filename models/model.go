// Package models holds the networks gtstorm trains — the paper's MNIST and
// CIFAR-10 CNNs and non-convex logistic regression, the ResNet-GN family,
// the FedAvg CNN, MLPs, and any network a user describes — as Gorgonia
// graphs. From outside a model is a loss of ONE flat float32 parameter
// vector: a [Worker] takes the vector and a minibatch and returns the
// batch-mean loss and its gradient, so the optimizer layer never sees layers.
//
// An image network is a [Net]: a description written as a chain of layer
// calls — Conv2D, GroupNorm, ReLU, LeakyReLU, Tanh, Sigmoid, SiLU, ELU,
// Softplus, Hardsigmoid, Hardswish, GELU, MaxPool, AvgPool,
// GlobalAvgPool, Add, Flatten, Dense — the way a PyTorch
// module's forward reads. The description lays out the parameter tensors
// in the order they lie in the flat vector ([Model.Params]), and the
// forward pass, its symbolic
// gradient (Gorgonia's), the ONNX export ([ONNX]) and the memory estimate
// ([WorkerBytes]) all come from it. Each network of the zoo ([New]) is one
// short file: mnist.go, cifar.go, resnet.go, fedavg.go, mlp.go; the
// logistic regression (logreg.go) is a graph of its own. The layers are
// custom Gorgonia ops on the kernels of internal/kernels (AVX-512, AVX2,
// NEON or pure Go, the same bits on each), and the graphs run on a small
// executor instead of Gorgonia's TapeMachine, with the TapeMachine's
// results bit for bit; both live in models/internal/graphops. One MNIST
// CNN gradient at batch 64 costs about 2.5 ms on one core.
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
	"github.com/gtstorm/gtstorm/internal/detmath"
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
func (p Param) Size() int { return product(p.Shape) }

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
// fanIn[i] is the fan-in that scales the initialisation of tensor i, and
// init[i] how it is drawn.
type layout struct {
	params []Param
	fanIn  []int
	init   []Init
	size   int
}

// Initialisations of parameters that are not weights: GroupNorm's scale
// starts at 1 and its shift at 0.
const (
	initOnes Init = -1 - iota
	initZeros
	initPReLU       // PReLU's slopes: torch's 0.25
	initTokenNormal // a class token's and position embedding's values: N(0, 0.02²), timm's
)

// add appends a tensor of the given shape and fan-in, drawn uniformly.
func (l *layout) add(name string, fanIn int, shape ...int) {
	l.addInit(name, fanIn, InitUniform, shape...)
}

// addInit appends a tensor of the given shape, fan-in and initialisation.
func (l *layout) addInit(name string, fanIn int, init Init, shape ...int) {
	p := Param{Name: name, Shape: shape, Offset: l.size}
	l.params = append(l.params, p)
	l.fanIn = append(l.fanIn, fanIn)
	l.init = append(l.init, init)
	l.size += p.Size()
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

// Init draws the tensors in layout order from one seeded stream: those
// of InitUniform from U(-1/√fanIn, 1/√fanIn), which is what PyTorch's
// kaiming_uniform_(a=√5) default gives for weights and biases, those of
// InitKaimingNormal from N(0, 2/fanIn); GroupNorm's scales are 1 and its
// shifts 0, drawing nothing.
func (l *layout) Init(seed uint64) []float32 {
	rng := rand.New(rand.NewPCG(seed, 0x6d6f64656c73)) // "models"
	x := make([]float32, l.size)
	for i, p := range l.params {
		v := x[p.Offset : p.Offset+p.Size()]
		switch l.init[i] {
		case InitUniform:
			bound := 1 / math.Sqrt(float64(l.fanIn[i]))
			for k := range v {
				v[k] = float32((float64(2*float64(rng.Float64())) - 1) * bound)
			}
		case InitKaimingNormal:
			std := math.Sqrt(2 / float64(l.fanIn[i]))
			for k := range v {
				v[k] = float32(detmath.NormFloat64(rng) * std)
			}
		case initOnes:
			for k := range v {
				v[k] = 1
			}
		case initPReLU:
			for k := range v {
				v[k] = preluInit
			}
		case initTokenNormal:
			for k := range v {
				v[k] = float32(detmath.NormFloat64(rng) * tokenInitStd)
			}
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
