package models

import (
	"runtime"
	"testing"
)

// gorgoniaAllocs bounds the allocations of one run of a compiled CNN graph.
// They all come from Gorgonia's TapeMachine — the input list each
// instruction builds, logging arguments boxed even with logging off, and
// the goroutine and channels of RunAll — not from the ops, so their number
// depends on the graph's shape, never on the batch size.
const gorgoniaAllocs = 160

// TestGradAllocations checks that a steady-state Grad allocates only
// Gorgonia's small per-run constant: at most gorgoniaAllocs objects and a
// few kilobytes (one activation buffer of the batch of 16 would be 50 KB).
func TestGradAllocations(t *testing.T) {
	for _, c := range []struct {
		m     Model
		shape []int
	}{
		{NewMNISTCNN(), []int{1, 28, 28}},
		{NewCIFARCNN(), []int{3, 32, 32}},
	} {
		t.Run(c.m.Name(), func(t *testing.T) {
			d := imageSet(1, 16, 10, true, c.shape...)
			w := newWorker(t, c.m)
			params := c.m.Init(1)
			g := make([]float32, len(params))
			var counts []float64
			for _, n := range []int{1, 16} {
				b := batchOf(d, seq(n)...)
				if _, err := w.Grad(params, b, g); err != nil {
					t.Fatal(err)
				}
				counts = append(counts, testing.AllocsPerRun(10, func() {
					if _, err := w.Grad(params, b, g); err != nil {
						t.Fatal(err)
					}
				}))
			}
			t.Logf("allocations per Grad: %v at batch 1 and 16", counts)
			if max(counts[0], counts[1]) > gorgoniaAllocs {
				t.Errorf("%v allocations per Grad at batch 1 and 16, want ≤ %d", counts, gorgoniaAllocs)
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			before := ms.TotalAlloc
			b := batchOf(d, seq(16)...)
			for range 10 {
				if _, err := w.Grad(params, b, g); err != nil {
					t.Fatal(err)
				}
			}
			runtime.ReadMemStats(&ms)
			if per := (ms.TotalAlloc - before) / 10; per > 8<<10 {
				t.Errorf("Grad allocates %d bytes per call, want ≤ 8 KiB", per)
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
	size := wk.(*classWorker).ws.size()
	t.Logf("MNIST CNN worker buffers after Grad(64) and Eval(250): %.2f MB", float64(size)/1e6)
	if size > 8e6 {
		t.Errorf("worker holds %.1f MB of buffers, want < 8 MB", float64(size)/1e6)
	}
}
