package models_test

import (
	"fmt"
	"log"
	"math"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/models"
)

// One gradient of the MNIST CNN: build the network, draw its parameters
// from a seed, and evaluate the batch-mean loss and its gradient on the
// first eight digits of the MNIST test set (the copy shipped in the
// GoMNIST module). The gradient is one flat vector laid out like the
// parameters; the same seed and batch give the same bits on every run.
func Example() {
	m := models.NewMNISTCNN()
	params := m.Init(1)

	_, test, err := data.LoadMNIST("")
	if err != nil {
		log.Fatal(err)
	}
	batch := data.Batch{Data: test, Index: []int{0, 1, 2, 3, 4, 5, 6, 7}}

	w, err := m.NewWorker() // one per goroutine; see Pool
	if err != nil {
		log.Fatal(err)
	}
	grad := make([]float32, m.NumParams())
	loss, err := w.Grad(params, batch, grad)
	if err != nil {
		log.Fatal(err)
	}

	var norm float64
	for _, g := range grad {
		norm += float64(g) * float64(g)
	}
	fmt.Printf("%s: %d parameters in %d tensors\n", m.Name(), m.NumParams(), len(m.Params()))
	fmt.Printf("loss %.4f, gradient norm %.3f\n", loss, math.Sqrt(norm))
	// Output:
	// mnist-cnn: 18378 parameters in 6 tensors
	// loss 2.3105, gradient norm 1.159
}
