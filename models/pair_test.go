package models

import (
	"math"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/data"
)

// TestGradPairMatchesGrad checks that Pool.GradPair gives, bit for bit, the
// losses and gradients of two Grad calls, for models whose workers share
// the batch's loading and for those that do not.
func TestGradPairMatchesGrad(t *testing.T) {
	mnist := imageSet(1, 8, 10, false, 1, 28, 28)
	cifar := imageSet(2, 8, 10, true, 3, 32, 32)
	sparse := sparseSet(3, 8, 100, 0.1)
	for _, c := range []struct {
		m Model
		b data.Batch
	}{
		{NewMNISTCNN(), batchOf(mnist, 3, 1, 4, 1, 5)},
		{NewCIFARCNN(), batchOf(cifar, 0, 7, 2)},
		{NewLogReg(100, DefaultAlpha), batchOf(sparse, 2, 6)},
	} {
		t.Run(c.m.Name(), func(t *testing.T) {
			pool, err := NewPool(c.m, 2)
			if err != nil {
				t.Fatal(err)
			}
			xNew, xOld := c.m.Init(5), c.m.Init(6)
			wantNew, gWantNew := grad(t, newWorker(t, c.m), xNew, c.b)
			wantOld, gWantOld := grad(t, newWorker(t, c.m), xOld, c.b)
			gNew, gOld := make([]float32, len(xNew)), make([]float32, len(xOld))
			for range 2 { // the second time on built graphs
				lossNew, lossOld, err := pool.GradPair(1, xNew, xOld, c.b, gNew, gOld)
				if err != nil {
					t.Fatal(err)
				}
				if math.Float32bits(lossNew) != math.Float32bits(wantNew) || math.Float32bits(lossOld) != math.Float32bits(wantOld) {
					t.Errorf("losses %v, %v; Grad gives %v, %v", lossNew, lossOld, wantNew, wantOld)
				}
				for k := range gNew {
					if math.Float32bits(gNew[k]) != math.Float32bits(gWantNew[k]) || math.Float32bits(gOld[k]) != math.Float32bits(gWantOld[k]) {
						t.Fatalf("gradients at %d: %v, %v; Grad gives %v, %v", k, gNew[k], gOld[k], gWantNew[k], gWantOld[k])
					}
				}
			}
		})
	}
}

func TestGradPairBadInput(t *testing.T) {
	m := NewMNISTCNN()
	d := imageSet(1, 4, 10, false, 1, 28, 28)
	pool, err := NewPool(m, 1)
	if err != nil {
		t.Fatal(err)
	}
	x, g := m.Init(1), make([]float32, m.NumParams())
	for _, c := range []struct {
		name string
		call func() error
		want string
	}{
		{"short old params", func() error { _, _, err := pool.GradPair(0, x, x[1:], batchOf(d, 0), g, g); return err }, "old params has length"},
		{"short old grad", func() error { _, _, err := pool.GradPair(0, x, x, batchOf(d, 0), g, g[1:]); return err }, "old grad has length"},
		{"short new params", func() error { _, _, err := pool.GradPair(0, x[1:], x, batchOf(d, 0), g, g); return err }, "params has length"},
		{"worker id", func() error { _, _, err := pool.GradPair(1, x, x, batchOf(d, 0), g, g); return err }, "worker 1 out of range"},
	} {
		if err := c.call(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
