package models

import (
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/gtstorm/gtstorm/data"
)

// TestPoolConcurrentGradsIdentical evaluates the same params and batch from
// many goroutines at once, each on its own worker, several times over, and
// requires bit-identical losses and gradients. Run it under -race.
func TestPoolConcurrentGradsIdentical(t *testing.T) {
	mnist := imageSet(1, 16, 10, false, 1, 28, 28)
	cifar := imageSet(2, 16, 10, true, 3, 32, 32)
	sparse := sparseSet(3, 16, 300, 0.05)
	for _, c := range []struct {
		m Model
		b data.Batch
	}{
		{NewMNISTCNN(), batchOf(mnist, 0, 1, 2, 3, 4)},
		{NewCIFARCNN(), batchOf(cifar, 9, 2, 7)},
		{NewLogReg(300, DefaultAlpha), batchOf(sparse, 7)},
	} {
		t.Run(c.m.Name(), func(t *testing.T) {
			const workers, rounds = 6, 3
			pool, err := NewPool(c.m, workers)
			if err != nil {
				t.Fatal(err)
			}
			params := c.m.Init(9)
			losses := make([][rounds]float32, workers)
			grads := make([][rounds][]float32, workers)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for r := range rounds {
						g := make([]float32, len(params))
						l, err := pool.Grad(w, params, c.b, g)
						if err != nil {
							t.Error(err)
							return
						}
						losses[w][r], grads[w][r] = l, g
					}
				})
			}
			wg.Wait()
			if t.Failed() {
				return
			}
			for w := range workers {
				for r := range rounds {
					if math.Float32bits(losses[w][r]) != math.Float32bits(losses[0][0]) {
						t.Errorf("worker %d round %d: loss %v, worker 0 round 0: %v", w, r, losses[w][r], losses[0][0])
					}
					for k, v := range grads[w][r] {
						if math.Float32bits(v) != math.Float32bits(grads[0][0][k]) {
							t.Fatalf("worker %d round %d: grad[%d] = %v, worker 0 round 0: %v", w, r, k, v, grads[0][0][k])
						}
					}
				}
			}
		})
	}
}

// TestEvaluateIndependentOfWorkersAndChunks checks that Evaluate gives
// bit-identical results with 1 and 4 workers, that chunk sizes which do not
// divide the dataset cover every sample once, and that the result matches a
// direct sum of per-sample evaluations.
func TestEvaluateIndependentOfWorkersAndChunks(t *testing.T) {
	mnist := imageSet(4, 23, 10, false, 1, 28, 28)
	sparse := sparseSet(5, 37, 150, 0.08)
	for _, c := range []struct {
		m Model
		d *data.Dataset
	}{
		{NewMNISTCNN(), mnist},
		{NewLogReg(150, DefaultAlpha), sparse},
		{NewLogReg(150, DefaultAlpha), densify(sparse)},
	} {
		t.Run(c.m.Name()+"/"+c.d.Name, func(t *testing.T) {
			params := c.m.Init(2)
			// Reference: one sample at a time.
			w := newWorker(t, c.m)
			var wantLoss float64
			wantCorrect := 0
			for i := 0; i < c.d.Len(); i++ {
				l, k, err := w.Eval(params, batchOf(c.d, i))
				if err != nil {
					t.Fatal(err)
				}
				wantLoss += l
				wantCorrect += k
			}
			wantAcc, wantLoss := float64(wantCorrect)/float64(c.d.Len()), wantLoss/float64(c.d.Len())

			var firstAcc, firstLoss float64
			for i, chunk := range []int{5, 5, 7, c.d.Len(), 1000} {
				for j, workers := range []int{1, 4} {
					pool, err := NewPool(c.m, workers)
					if err != nil {
						t.Fatal(err)
					}
					acc, loss, err := pool.Evaluate(params, c.d, chunk)
					if err != nil {
						t.Fatal(err)
					}
					if acc != wantAcc || math.Abs(loss-wantLoss) > 1e-5*math.Abs(wantLoss) {
						t.Errorf("chunk %d, %d workers: acc %v loss %.9g; per-sample acc %v loss %.9g", chunk, workers, acc, loss, wantAcc, wantLoss)
					}
					if i == 0 && j == 0 {
						firstAcc, firstLoss = acc, loss
					} else if chunk == 5 && (acc != firstAcc || loss != firstLoss) {
						t.Errorf("chunk 5, %d workers: acc %v loss %v; 1 worker: acc %v loss %v", workers, acc, loss, firstAcc, firstLoss)
					}
				}
			}
		})
	}
}

// TestBadInput checks that malformed calls get errors naming the problem,
// never a panic.
func TestBadInput(t *testing.T) {
	mnist := imageSet(1, 4, 10, false, 1, 28, 28)
	cifar := imageSet(2, 4, 10, true, 3, 32, 32)
	sparse := sparseSet(3, 4, 50, 0.2)
	badLabel := imageSet(1, 4, 10, false, 1, 28, 28)
	badLabel.Labels[2] = 12
	badCol := sparseSet(3, 4, 50, 0.2)
	badCol.Shape = []int{20} // rows have features beyond 20

	m, lr := NewMNISTCNN(), NewLogReg(50, DefaultAlpha)
	pm, pl := m.Init(1), lr.Init(1)
	gm, gl := make([]float32, len(pm)), make([]float32, len(pl))
	for _, c := range []struct {
		name string
		call func() error
		want string
	}{
		{"short params", func() error { _, err := newWorker(t, m).Grad(pm[1:], batchOf(mnist, 0), gm); return err }, "params has length 18377"},
		{"short grad", func() error { _, err := newWorker(t, m).Grad(pm, batchOf(mnist, 0), gm[1:]); return err }, "grad has length"},
		{"empty batch", func() error { _, err := newWorker(t, m).Grad(pm, batchOf(mnist), gm); return err }, "empty batch"},
		{"nil dataset", func() error { _, err := newWorker(t, m).Grad(pm, data.Batch{Index: []int{0}}, gm); return err }, "no dataset"},
		{"index out of range", func() error { _, err := newWorker(t, m).Grad(pm, batchOf(mnist, 4), gm); return err }, "index 4 out of range"},
		{"wrong shape", func() error { _, err := newWorker(t, m).Grad(pm, batchOf(cifar, 0), gm); return err }, "3072 features"},
		{"label too large", func() error { _, _, err := newWorker(t, m).Eval(pm, batchOf(badLabel, 1, 2)); return err }, "label 12"},
		{"sparse column beyond features", func() error {
			lr20 := NewLogReg(20, DefaultAlpha)
			_, err := newWorker(t, lr20).Grad(lr20.Init(1), batchOf(badCol, 0, 1, 2, 3), make([]float32, 20))
			return err
		}, "feature index"},
		{"logreg wrong features", func() error {
			_, err := newWorker(t, NewLogReg(40, 0)).Grad(pl[:40], batchOf(sparse, 0), gl[:40])
			return err
		}, "50 features"},
		{"logreg no features", func() error { _, err := NewLogReg(0, DefaultAlpha).NewWorker(); return err }, "0 features"},
		{"logreg negative alpha", func() error { _, err := NewLogReg(5, -1).NewWorker(); return err }, "alpha -1"},
		{"pool size", func() error { _, err := NewPool(m, 0); return err }, "0 workers"},
		{"pool worker id", func() error {
			p, _ := NewPool(lr, 2)
			_, err := p.Grad(2, pl, batchOf(sparse, 0), gl)
			return err
		}, "worker 2 out of range"},
		{"evaluate chunk", func() error { p, _ := NewPool(lr, 1); _, _, err := p.Evaluate(pl, sparse, 0); return err }, "chunk size 0"},
		{"evaluate empty", func() error {
			p, _ := NewPool(lr, 1)
			_, _, err := p.Evaluate(pl, &data.Dataset{Name: "none"}, 4)
			return err
		}, "empty dataset"},
	} {
		err := c.call()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
