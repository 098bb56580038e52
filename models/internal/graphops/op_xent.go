package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// xentLayer is the batch mean of the softmax cross-entropy of logits
// [n,classes] against labels, which the worker writes before each run
// (kernels.SoftmaxCrossEntropy, in float64). The forward pass forms the
// gradient with respect to the logits as well, at no extra pass.
type xentLayer struct {
	name       string
	n, classes int
	labels     []uint8
	loss       *G.F32        // output, reused across runs
	dlogits    []float32     // gradient of the mean at unit upstream gradient
	dz         tensor.Tensor // upstream gradient times dlogits [n,classes]
}

// xentOp is the forward pass: logits → loss.
type xentOp struct {
	kop
	l *xentLayer
}

// xentGradOp is (logits, dloss) → dloss·dlogits.
type xentGradOp struct {
	kop
	l *xentLayer
}

// SoftmaxCrossEntropy adds the batch mean of the softmax cross-entropy of
// logits [n,classes] against labels, a scalar. labels holds n class
// indices below classes, written by the caller before each run.
func (g *Graph) SoftmaxCrossEntropy(logits *G.Node, labels []uint8) *G.Node {
	if !g.ok("cross-entropy", logits) {
		return nil
	}
	s := logits.Shape()
	if len(s) != 2 || len(labels) != s[0] {
		g.err = fmt.Errorf("cross-entropy: logits %v for %d labels", s, len(labels))
		return nil
	}
	if !g.claim("xent") {
		return nil
	}
	l := &xentLayer{name: "xent", n: s[0], classes: s[1], labels: labels, loss: G.NewF32(0)}
	if g.training {
		l.dlogits = g.ws.Floats("xent.dlogits", s[0]*s[1])
		l.dz = g.ws.tensor("xent.dz", s[0], s[1])
	}
	return g.apply(&xentOp{kop{"xent.forward", l, dims(logits), nil}, l}, "cross-entropy", logits)
}

func (op *xentOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	a, err := op.args(inputs, l.n*l.classes)
	if err != nil {
		return nil, err
	}
	loss, err := kernels.SoftmaxCrossEntropy(l.dlogits, a[0], l.labels, l.classes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op.name, err)
	}
	*l.loss = G.F32(loss)
	return l.loss, nil
}

func (op *xentOp) DiffWRT(int) []bool { return []bool{true} }

func (op *xentOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dz == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", l.name)
	}
	d, err := G.ApplyOp(&xentGradOp{kop{"xent.dlogits", l, dims(inputs[0], grad), l.dz.Shape()}, l}, inputs[0], grad)
	if err != nil {
		return nil, err
	}
	return G.Nodes{d}, nil
}

func (op *xentGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%s: %d inputs, want 2", op.name, len(inputs))
	}
	g, ok := scalarData(inputs[1])
	if !ok {
		return nil, fmt.Errorf("%s: upstream gradient holds %T, want float32", op.name, inputs[1].Data())
	}
	dz := f32(l.dz)
	if g == 1 {
		copy(dz, l.dlogits)
	} else {
		for i, v := range l.dlogits {
			dz[i] = g * v
		}
	}
	return l.dz, nil
}
