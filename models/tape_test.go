package models

import (
	"fmt"
	"math"
	"testing"

	"github.com/gtstorm/gtstorm/data"
)

// The workers' graphs run on graphops' Program, which must give the results
// of Gorgonia's TapeMachine bit for bit. graphops checks that for its
// layers, and the logistic regression's ops against the stock Gorgonia ops
// they replaced; these tests run the workers' own graphs — the networks of
// this package — on a TapeMachine as well.

// sameBits reports the first difference between got and want, compared as
// bit patterns.
func sameBits(got, want []float32) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d values, want %d", len(got), len(want))
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return fmt.Errorf("value %d is %v, TapeMachine's %v", i, got[i], want[i])
		}
	}
	return nil
}

// TestProgramMatchesTapeMachineCNN runs the CNN workers' training and
// evaluation graphs on a TapeMachine after the workers ran them, and
// checks that loss, gradients and logits are the same to the bit.
func TestProgramMatchesTapeMachineCNN(t *testing.T) {
	mnist := imageSet(7, 20, 10, false, 1, 28, 28)
	cifar := imageSet(8, 20, 10, true, 3, 32, 32)
	for _, c := range []struct {
		m     Model
		d     *data.Dataset
		sizes []int
	}{
		{NewMNISTCNN(), mnist, []int{1, 5, 16}},
		{NewCIFARCNN(), cifar, []int{1, 3, 16}},
	} {
		for _, n := range c.sizes {
			t.Run(fmt.Sprintf("%s/batch%d", c.m.Name(), n), func(t *testing.T) {
				w := newWorker(t, c.m).(*classWorker)
				for seed := range uint64(2) {
					params := c.m.Init(40 + seed)
					b := batchOf(c.d, seq(c.d.Len())[int(seed):int(seed)+n]...)
					loss, g := grad(t, w, params, b)
					cg := w.train[n]
					want, err := cg.prog.TapeValues(append([]int{cg.loss}, cg.grads...)...)
					if err != nil {
						t.Fatal(err)
					}
					if err := sameBits([]float32{loss}, want[0]); err != nil {
						t.Errorf("seed %d: loss: %v", seed, err)
					}
					for i, q := range c.m.Params() {
						if err := sameBits(g[q.Offset:q.Offset+q.Size()], want[i+1]); err != nil {
							t.Errorf("seed %d: gradient of %s: %v", seed, q.Name, err)
						}
					}

					if _, _, err := w.Eval(params, b); err != nil {
						t.Fatal(err)
					}
					eg := w.eval[n]
					logits, err := eg.prog.Float32s(eg.logits)
					if err != nil {
						t.Fatal(err)
					}
					logits = append([]float32(nil), logits...)
					if want, err = eg.prog.TapeValues(eg.logits); err != nil {
						t.Fatal(err)
					}
					if err := sameBits(logits, want[0]); err != nil {
						t.Errorf("seed %d: logits: %v", seed, err)
					}
				}
			})
		}
	}
}

// TestProgramMatchesTapeMachineLogReg does the same for the logistic
// regression's workers, on sparse and dense batches, with weights large
// enough to reach the cut-offs of softplus and sigmoid: the loss, the
// gradient (the sum of its two terms, as Grad forms it) and the scores.
func TestProgramMatchesTapeMachineLogReg(t *testing.T) {
	const p = 200
	sparse := sparseSet(9, 20, p, 0.05)
	dense := densify(sparse)
	for _, c := range []struct {
		d     *data.Dataset
		index []int
	}{
		{sparse, []int{4}},
		{sparse, []int{0, 3, 3, 8, 11}},
		{sparse, seq(16)},
		{dense, []int{7}},
		{dense, seq(20)},
	} {
		for _, scale := range []float32{1, 30, 1000} {
			name := fmt.Sprintf("sparse=%v/batch%d/scale%v", c.d.IsSparse(), len(c.index), scale)
			t.Run(name, func(t *testing.T) {
				m := NewLogReg(p, DefaultAlpha)
				params := m.Init(uint64(len(c.index)))
				for i := range params {
					params[i] *= scale
				}
				b := batchOf(c.d, c.index...)
				w := newWorker(t, m).(*lrWorker)
				loss, g := grad(t, w, params, b)
				tg := w.graphs[lrKey{n: b.Len(), sparse: c.d.IsSparse(), train: true}]
				w.load(tg, params, b) // Grad released the batch
				want, err := tg.prog.TapeValues(tg.loss, tg.grads[0], tg.grads[1])
				w.release()
				if err != nil {
					t.Fatal(err)
				}
				if err := sameBits([]float32{loss}, want[0]); err != nil {
					t.Errorf("loss: %v", err)
				}
				sum := make([]float32, p)
				for i := range sum {
					sum[i] = want[2][i] + want[1][i]
				}
				if err := sameBits(g, sum); err != nil {
					t.Errorf("gradient: %v", err)
				}

				if _, _, err := w.Eval(params, b); err != nil {
					t.Fatal(err)
				}
				fg := w.graphs[lrKey{n: b.Len(), sparse: c.d.IsSparse()}]
				z, err := fg.prog.Float32s(fg.z)
				if err != nil {
					t.Fatal(err)
				}
				z = append([]float32(nil), z...)
				w.load(fg, params, b)
				want, err = fg.prog.TapeValues(fg.z)
				w.release()
				if err != nil {
					t.Fatal(err)
				}
				if err := sameBits(z, want[0]); err != nil {
					t.Errorf("scores: %v", err)
				}
			})
		}
	}
}
