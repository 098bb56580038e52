package models_test

import (
	"fmt"
	"log"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/models"
)

// A network of one's own: a small residual CNN described layer by layer
// with a Net, as a PyTorch module's forward reads, then trained by plain
// SGD on 64 MNIST digits through the public API. The description alone
// gives the parameter layout, the forward pass and its gradient (and the
// ONNX export: models.ONNX).
func ExampleNet() {
	n := models.NewNet("tiny-resnet", []int{1, 28, 28}, 10)
	x := n.Conv2D("stem", n.Input(), models.Conv{Out: 8, Kernel: 3, Stride: 2, Pad: 1, Init: models.InitKaimingNormal})
	x = n.ReLU(n.GroupNorm("stem.gn", x, 2)) // [8,14,14]
	h := n.Conv2D("block.conv", x, models.Conv{Out: 8, Kernel: 3, Pad: 1, Init: models.InitKaimingNormal})
	h = n.GroupNorm("block.gn", h, 2)
	x = n.ReLU(n.Add(h, x)) // residual
	x = n.MaxPool(x, 2, 2)  // [8,7,7]
	m, err := n.Model(n.Dense("fc", n.GlobalAvgPool(x), 10))
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
	params, grad := m.Init(1), make([]float32, m.NumParams())
	var first, last float32
	for step := range 30 {
		loss, err := w.Grad(params, batch, grad)
		if err != nil {
			log.Fatal(err)
		}
		if step == 0 {
			first = loss
		}
		last = loss
		for i, g := range grad {
			params[i] -= float32(0.5 * g)
		}
	}
	fmt.Printf("%s: %d parameters in %d tensors\n", m.Name(), m.NumParams(), len(m.Params()))
	fmt.Printf("loss %.4f after 1 step, %.4f after 30\n", first, last)
	// Output:
	// tiny-resnet: 770 parameters in 8 tensors
	// loss 2.3344 after 1 step, 2.0238 after 30
}
