package models

import (
	"testing"

	"github.com/gtstorm/gtstorm/data"
)

// TestGradAllocations checks that a steady-state Grad, GradPair and Eval
// allocate nothing, for every model and batch size: the ops compute into
// buffers of their worker, and graphops' Program runs them without
// allocating.
func TestGradAllocations(t *testing.T) {
	sparse := sparseSet(5, 16, 300, 0.05)
	for _, c := range []struct {
		name string
		m    Model
		d    *data.Dataset
	}{
		{"mnist-cnn", NewMNISTCNN(), imageSet(1, 16, 10, true, 1, 28, 28)},
		{"cifar-cnn", NewCIFARCNN(), imageSet(1, 16, 10, true, 3, 32, 32)},
		{"logreg-sparse", NewLogReg(300, DefaultAlpha), sparse},
		{"logreg-dense", NewLogReg(300, DefaultAlpha), densify(sparse)},
		{"dropnet", mustDropNet(t), imageSet(1, 16, 4, true, 1, 6, 6)},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorker(t, c.m)
			xNew, xOld := c.m.Init(1), c.m.Init(2)
			gNew, gOld := make([]float32, len(xNew)), make([]float32, len(xOld))
			for _, n := range []int{1, 16} {
				b := batchOf(c.d, seq(n)...)
				b.Draw = 7 // dropnet's masks; the others ignore it
				calls := map[string]func() error{
					"Grad": func() error { _, err := w.Grad(xNew, b, gNew); return err },
					"Eval": func() error { _, _, err := w.Eval(xNew, b); return err },
				}
				if pg, ok := w.(PairWorker); ok {
					calls["GradPair"] = func() error { _, _, err := pg.GradPair(xNew, xOld, b, gNew, gOld); return err }
				}
				for name, call := range calls {
					if err := call(); err != nil { // builds the graph
						t.Fatal(err)
					}
					if a := testing.AllocsPerRun(10, func() {
						if err := call(); err != nil {
							t.Fatal(err)
						}
					}); a != 0 {
						t.Errorf("%s at batch %d: %v allocations per call, want 0", name, n, a)
					}
				}
			}
		})
	}
}

// TestWorkerMemory checks that a worker's buffers stay small: the training
// graph of a batch of 64 and the evaluation of a chunk of 250 (run through
// the same buffers) together hold less than 8 MB.
func TestWorkerMemory(t *testing.T) {
	m := NewMNISTCNN()
	d := imageSet(1, 250, 10, false, 1, 28, 28)
	wk := newWorker(t, m)
	params := m.Init(1)
	grad(t, wk, params, batchOf(d, seq(64)...))
	if _, _, err := wk.Eval(params, batchOf(d, seq(250)...)); err != nil {
		t.Fatal(err)
	}
	size := wk.(*classWorker).ws.Size()
	t.Logf("MNIST CNN worker buffers after Grad(64) and Eval(250): %.2f MB", float64(size)/1e6)
	if size > 8e6 {
		t.Errorf("worker holds %.1f MB of buffers, want < 8 MB", float64(size)/1e6)
	}
}
