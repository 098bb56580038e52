package models_test

import (
	"fmt"
	"log"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/models"
)

// A network of one's own: a small residual CNN with dropout described layer
// by layer with a Net, as a PyTorch module's forward reads, then trained by
// plain SGD on 64 MNIST digits through the public API. The description
// alone gives the parameter layout, the forward pass and its gradient (and
// the ONNX export: models.ONNX).
//
// Dropout's masks are part of the minibatch draw: a training batch of a
// network with dropout (models.Stochastic) carries a draw key, Batch.Draw,
// which a data.Sampler sets after KeyDraws; here each step keys the same
// 64 digits anew. Evaluation (Worker.Eval, Logits, Predict) needs no key:
// Dropout is the identity there.
func ExampleNet() {
	n := models.NewNet("tiny-resnet", []int{1, 28, 28}, 10)
	x := n.Conv2D("stem", n.Input(), models.Conv{Out: 8, Kernel: 3, Stride: 2, Pad: 1, Init: models.InitKaimingNormal})
	x = n.ReLU(n.GroupNorm("stem.gn", x, 2)) // [8,14,14]
	h := n.Conv2D("block.conv", x, models.Conv{Out: 8, Kernel: 3, Pad: 1, Init: models.InitKaimingNormal})
	h = n.GroupNorm("block.gn", h, 2)
	x = n.ReLU(n.Add(h, x))                 // residual
	x = n.MaxPool(x, 2, 2)                  // [8,7,7]
	x = n.Dropout(n.GlobalAvgPool(x), 0.25) // [8], nn.Dropout(0.25)
	m, err := n.Model(n.Dense("fc", x, 10))
	if err != nil {
		log.Fatal(err)
	}

	_, test, err := data.LoadMNIST("")
	if err != nil {
		log.Fatal(err)
	}
	batch := data.Batch{Data: test, Index: make([]int, 64)}
	for i := range batch.Index {
		batch.Index[i] = i
	}
	w, err := m.NewWorker()
	if err != nil {
		log.Fatal(err)
	}
	params := m.Init(1)
	first, last := descend(w, params, batch, 0.5, 30)
	fmt.Printf("%s: %d parameters in %d tensors, stochastic %v\n", m.Name(), m.NumParams(), len(m.Params()), models.Stochastic(m))
	fmt.Printf("loss %.4f after 1 step, %.4f after 30\n", first, last)
	batch.Draw = 0 // evaluation: no key, no dropout
	sum, _, err := w.Eval(params, batch)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("evaluation loss %.4f\n", sum/float64(len(batch.Index)))
	// Output:
	// tiny-resnet: 770 parameters in 8 tensors, stochastic true
	// loss 2.3602 after 1 step, 2.1622 after 30
	// evaluation loss 2.1019
}

// A vision transformer of one's own: 4×4 patches of the 28×28 digits as
// 49 tokens of 16 features (Tokens), a class token and a position
// embedding, one pre-norm block of multi-head self-attention (qkv and proj
// Linears as 1×1 convolutions around Attention) and an MLP, then the class
// token's features (Token) to a dense head: timm's ViT, layer for layer.
func ExampleNet_Attention() {
	n := models.NewNet("tiny-vit", []int{1, 28, 28}, 10)
	x := n.Tokens(n.Conv2D("patch", n.Input(), models.Conv{Out: 16, Kernel: 4, Stride: 4, Bias: true})) // [16,49,1]
	x = n.PositionEmbedding("pos", n.ClassToken("cls", x))                                              // [16,50,1]
	qkv := n.Conv2D("qkv", n.ChannelNorm("norm1", x, 1e-6), models.Conv{Out: 48, Kernel: 1, Bias: true})
	x = n.Add(x, n.Conv2D("proj", n.Attention("attn", qkv, 2, 0), models.Conv{Out: 16, Kernel: 1, Bias: true}))
	h := n.GELU(n.Conv2D("fc1", n.ChannelNorm("norm2", x, 1e-6), models.Conv{Out: 32, Kernel: 1, Bias: true}))
	x = n.Add(x, n.Conv2D("fc2", h, models.Conv{Out: 16, Kernel: 1, Bias: true}))
	m, err := n.Model(n.Dense("head", n.Token(n.ChannelNorm("norm", x, 1e-6), 0), 10))
	if err != nil {
		log.Fatal(err)
	}

	_, test, err := data.LoadMNIST("")
	if err != nil {
		log.Fatal(err)
	}
	batch := data.Batch{Data: test, Index: make([]int, 64)}
	for i := range batch.Index {
		batch.Index[i] = i
	}
	w, err := m.NewWorker()
	if err != nil {
		log.Fatal(err)
	}
	first, last := descend(w, m.Init(1), batch, 0.1, 30)
	fmt.Printf("%s: %d parameters in %d tensors\n", m.Name(), m.NumParams(), len(m.Params()))
	fmt.Printf("loss %.4f after 1 step, %.4f after 30\n", first, last)
	// Output:
	// tiny-vit: 3514 parameters in 20 tensors
	// loss 2.4299 after 1 step, 2.1627 after 30
}

// descend takes steps plain SGD steps of w's model from params (updated in
// place) on batch, keyed anew each step (Dropout's masks), and returns the
// first and last steps' losses.
func descend(w models.Worker, params []float32, batch data.Batch, rate float32, steps int) (first, last float32) {
	grad := make([]float32, len(params))
	for step := range steps {
		batch.Draw = uint64(step) + 1 // never 0: a keyed batch
		loss, err := w.Grad(params, batch, grad)
		if err != nil {
			log.Fatal(err)
		}
		if step == 0 {
			first = loss
		}
		last = loss
		for i, g := range grad {
			params[i] -= rate * g
		}
	}
	return first, last
}
