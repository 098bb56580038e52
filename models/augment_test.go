package models

import (
	"math"
	"slices"
	"testing"

	"github.com/gtstorm/gtstorm/data"
)

// augmented returns a training batch of d's samples index with crop:4,flip
// and draw key draw.
func augmented(d *data.Dataset, draw uint64, index ...int) data.Batch {
	return data.Batch{Data: d, Index: index, Draw: draw, Augment: &data.Augment{Pad: 4, Flip: true}}
}

func equalBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// TestAugmentedGradients checks that GT-STORM's two gradients on one
// augmented minibatch see the same pixels: GradPair at x and x gives two
// equal gradients, equal to Grad's on any worker and on any load of the
// batch, and to the gradient on the augmented samples stored as plain
// data; another draw key, or no augmentation, gives another gradient.
func TestAugmentedGradients(t *testing.T) {
	d := imageSet(3, 8, 10, true, 3, 32, 32)
	m := NewCIFARCNN()
	x := m.Init(7)
	b := augmented(d, 0x9e3779b97f4a7c15|1, 5, 2, 2, 7)

	pool, err := NewPool(m, 2)
	if err != nil {
		t.Fatal(err)
	}
	gNew, gOld := make([]float32, len(x)), make([]float32, len(x))
	lNew, lOld, err := pool.GradPair(1, x, x, b, gNew, gOld)
	if err != nil {
		t.Fatal(err)
	}
	if math.Float32bits(lNew) != math.Float32bits(lOld) || !equalBits(gNew, gOld) {
		t.Fatalf("GradPair(x, x) on an augmented batch: losses %v, %v and gradients differ", lNew, lOld)
	}
	w := newWorker(t, m)
	for i := range 2 { // the second time on a built graph
		if l, g := grad(t, w, x, b); math.Float32bits(l) != math.Float32bits(lNew) || !equalBits(g, gNew) {
			t.Fatalf("Grad #%d on the batch: loss %v and gradient differ from GradPair's (%v)", i+1, l, lNew)
		}
	}

	// The augmented samples, stored as plain data, give the same gradient.
	plain := &data.Dataset{Name: "augmented", Shape: d.Shape, Classes: d.Classes, Floats: make([]float32, b.Len()*d.Dim())}
	for k, i := range b.Index {
		b.Dense(k, plain.Floats[k*d.Dim():(k+1)*d.Dim()])
		plain.Labels = append(plain.Labels, d.Labels[i])
	}
	if _, g := grad(t, w, x, batchOf(plain, 0, 1, 2, 3)); !equalBits(g, gNew) {
		t.Error("the gradient on the augmented samples stored as data differs from the augmented batch's")
	}

	other := b
	other.Draw += 2
	if _, g := grad(t, w, x, other); equalBits(g, gNew) {
		t.Error("another draw key gives the same gradient")
	}
	if _, g := grad(t, w, x, batchOf(d, b.Index...)); equalBits(g, gNew) {
		t.Error("the batch without augmentation gives the augmented batch's gradient")
	}
}

// TestAugmentedGradAllocations checks that steady-state gradients on
// augmented batches, a new draw each time, allocate nothing.
func TestAugmentedGradAllocations(t *testing.T) {
	d := imageSet(1, 16, 10, true, 3, 32, 32)
	m := NewCIFARCNN()
	w := newWorker(t, m)
	xNew, xOld := m.Init(1), m.Init(2)
	gNew, gOld := make([]float32, len(xNew)), make([]float32, len(xOld))
	b := augmented(d, 1, seq(16)...)
	pg := w.(PairWorker)
	calls := map[string]func() error{
		"Grad":     func() error { _, err := w.Grad(xNew, b, gNew); return err },
		"GradPair": func() error { _, _, err := pg.GradPair(xNew, xOld, b, gNew, gOld); return err },
	}
	for name, call := range calls {
		if err := call(); err != nil { // builds the graph
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(5, func() {
			b.Draw += 2
			if err := call(); err != nil {
				t.Fatal(err)
			}
		}); a != 0 {
			t.Errorf("%s on an augmented batch: %v allocations per call, want 0", name, a)
		}
	}
}
