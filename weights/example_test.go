package weights_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gtstorm/gtstorm/weights"
)

// A model-only checkpoint — a 2 × 3 linear layer and its bias — written to a
// file and read back: Read returns the layout, the parameters and the
// caller's metadata exactly as written.
func Example() {
	dir, err := os.MkdirTemp("", "weights-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "model.ckpt")

	c := &weights.Checkpoint{
		Model: "linear",
		Tensors: []weights.Tensor{
			{Name: "w", Shape: []int{2, 3}},
			{Name: "b", Shape: []int{3}},
		},
		Params: []float32{0.5, -1, 2, 0, 0.25, 1, 0.1, 0.2, 0.3},
		Meta:   []byte(`{"round":100}`),
	}
	if err := weights.Write(path, c); err != nil {
		panic(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		panic(err)
	}
	fmt.Printf("wrote %d bytes\n", info.Size())

	back, err := weights.Read(path)
	if err != nil {
		panic(err)
	}
	fmt.Println("model:", back.Model)
	off := 0
	for _, t := range back.Tensors {
		n := t.Size()
		fmt.Printf("%s %v: %v\n", t.Name, t.Shape, back.Params[off:off+n])
		off += n
	}
	fmt.Printf("meta: %s\n", back.Meta)
	fmt.Println("optimizer state:", back.Optimizer != nil)
	// Output:
	// wrote 149 bytes
	// model: linear
	// w [2 3]: [0.5 -1 2 0 0.25 1]
	// b [3]: [0.1 0.2 0.3]
	// meta: {"round":100}
	// optimizer state: false
}

// Validate, which Write and Encode run first, refuses parameters that do not
// fill the layout.
func ExampleCheckpoint_Validate() {
	c := &weights.Checkpoint{
		Model:   "linear",
		Tensors: []weights.Tensor{{Name: "w", Shape: []int{2, 3}}},
		Params:  make([]float32, 5),
	}
	fmt.Println(c.Validate())
	// Output:
	// tensors hold 6 values but there are 5 parameters
}
