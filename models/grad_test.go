package models

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gtstorm/gtstorm/data"
)

type refLoss func(m Model, p []float64, b data.Batch) float64

type gradCase struct {
	name  string
	model Model
	ref   refLoss
	batch data.Batch
	scale float32 // multiplies the initial parameters (LR: larger weights exercise the regulariser)
}

func gradCases() []gradCase {
	mnist := imageSet(1, 8, 10, false, 1, 28, 28)
	cifar := imageSet(2, 8, 10, true, 3, 32, 32)
	sparse := sparseSet(3, 12, 200, 0.05)
	dense := densify(sparse)
	lr := NewLogReg(200, DefaultAlpha)
	return []gradCase{
		{"mnist/batch3", NewMNISTCNN(), refMNIST, batchOf(mnist, 0, 5, 2), 1},
		{"mnist/batch1", NewMNISTCNN(), refMNIST, batchOf(mnist, 7), 1},
		{"cifar/batch2", NewCIFARCNN(), refCIFAR, batchOf(cifar, 1, 6), 1},
		{"cifar/batch1", NewCIFARCNN(), refCIFAR, batchOf(cifar, 3), 1},
		{"logreg-sparse/batch1", lr, refLogReg(DefaultAlpha), batchOf(sparse, 4), 30},
		{"logreg-sparse/batch5", lr, refLogReg(DefaultAlpha), batchOf(sparse, 0, 3, 3, 8, 11), 30},
		{"logreg-dense/batch3", lr, refLogReg(DefaultAlpha), batchOf(dense, 2, 9, 10), 30},
		{"logreg-alpha1/batch2", NewLogReg(200, 1), refLogReg(1), batchOf(sparse, 5, 6), 30},
	}
}

// TestGradMatchesFiniteDifferences checks, for every parameter tensor of
// every model, that the graph's gradient matches float64 central
// differences of the independent reference loss, after checking that the
// graph's loss (from Grad and from Eval) is that reference loss.
func TestGradMatchesFiniteDifferences(t *testing.T) {
	for _, c := range gradCases() {
		t.Run(c.name, func(t *testing.T) { checkGradCase(t, c) })
	}
}

// checkGradCase checks, for every parameter tensor of c's model, that the
// graph's gradient matches float64 central differences of c's reference
// loss, after checking that the graph's loss (from Grad and from Eval) is
// that reference loss.
func checkGradCase(t *testing.T, c gradCase) {
	m := c.model
	params := m.Init(11)
	for i := range params {
		params[i] *= c.scale
	}
	w := newWorker(t, m)
	loss, g := grad(t, w, params, c.batch)

	p64 := to64(params)
	want := c.ref(m, p64, c.batch)
	if d := math.Abs(float64(loss) - want); d > 1e-5*math.Max(1, math.Abs(want)) {
		t.Errorf("Grad loss %.7g, reference %.7g", loss, want)
	}
	sum, _, err := w.Eval(params, c.batch)
	if err != nil {
		t.Fatal(err)
	}
	if got := sum / float64(c.batch.Len()); math.Abs(got-want) > 1e-5*math.Max(1, math.Abs(want)) {
		t.Errorf("Eval loss/n %.7g, reference %.7g", got, want)
	}

	rng := rand.New(rand.NewPCG(5, 5))
	// A tiny step: float64 keeps the rounding error near 1e-10, and the
	// chance of stepping over a ReLU or max-pool kink stays negligible.
	const h = 1e-6
	for _, p := range m.Params() {
		coords := []int{0, p.Size() - 1}
		for range 4 {
			coords = append(coords, rng.IntN(p.Size()))
		}
		gmax := 0.0
		for k := p.Offset; k < p.Offset+p.Size(); k++ {
			gmax = math.Max(gmax, math.Abs(float64(g[k])))
		}
		if gmax == 0 {
			t.Errorf("%s: gradient is identically zero", p.Name)
		}
		for _, j := range coords {
			k := p.Offset + j
			orig := p64[k]
			p64[k] = orig + h
			up := c.ref(m, p64, c.batch)
			p64[k] = orig - h
			down := c.ref(m, p64, c.batch)
			p64[k] = orig
			fd := (up - down) / (2 * h)
			if d := math.Abs(float64(g[k]) - fd); d > 1e-3*math.Abs(fd)+1e-5*gmax+1e-7 {
				t.Errorf("%s[%d]: gradient %.6g, finite difference %.6g (max |g| %.3g)", p.Name, j, g[k], fd, gmax)
			}
		}
	}
}

// TestGradIsBatchMean checks that the gradient and loss of a batch are the
// means of those of its samples, whatever the batch size (each size has its
// own compiled graph).
func TestGradIsBatchMean(t *testing.T) {
	for _, c := range gradCases() {
		t.Run(c.name, func(t *testing.T) {
			m := c.model
			params := m.Init(3)
			w := newWorker(t, m)
			loss, g := grad(t, w, params, c.batch)
			n := float64(c.batch.Len())
			var meanLoss float64
			mean := make([]float64, len(g))
			for _, i := range c.batch.Index {
				l, gi := grad(t, w, params, batchOf(c.batch.Data, i))
				meanLoss += float64(l) / n
				for k, v := range gi {
					mean[k] += float64(v) / n
				}
			}
			// The batch graph again, after the per-sample graph ran on the
			// same worker: no state may leak between graphs or runs.
			loss2, g2 := grad(t, w, params, c.batch)
			if math.Float32bits(loss2) != math.Float32bits(loss) {
				t.Errorf("second run: loss %v, first %v", loss2, loss)
			}
			for k := range g {
				if math.Float32bits(g2[k]) != math.Float32bits(g[k]) {
					t.Fatalf("second run: grad[%d] = %v, first %v", k, g2[k], g[k])
				}
			}
			if math.Abs(float64(loss)-meanLoss) > 1e-5*math.Max(1, math.Abs(meanLoss)) {
				t.Errorf("batch loss %.7g, mean of per-sample losses %.7g", loss, meanLoss)
			}
			var gmax float64
			for _, v := range mean {
				gmax = math.Max(gmax, math.Abs(v))
			}
			for k, v := range g {
				if math.Abs(float64(v)-mean[k]) > 1e-5*gmax {
					t.Fatalf("grad[%d] = %.7g, mean of per-sample gradients %.7g", k, v, mean[k])
				}
			}
		})
	}
}

// TestInit checks that Init is deterministic in its seed and draws each
// tensor from U(−1/√fanIn, 1/√fanIn).
func TestInit(t *testing.T) {
	for _, c := range []struct {
		m     Model
		fanIn map[string]int
	}{
		{NewMNISTCNN(), map[string]int{"conv1.w": 25, "conv1.b": 25, "conv2.w": 400, "conv2.b": 400, "fc.w": 512, "fc.b": 512}},
		{NewCIFARCNN(), map[string]int{"conv1.w": 75, "conv1.b": 75, "conv2.w": 150, "conv2.b": 150, "fc1.w": 400, "fc1.b": 400, "fc2.w": 120, "fc2.b": 120, "fc3.w": 84, "fc3.b": 84}},
		{NewLogReg(1000, DefaultAlpha), map[string]int{"w": 1000}},
	} {
		a, b, other := c.m.Init(42), c.m.Init(42), c.m.Init(43)
		if len(a) != c.m.NumParams() {
			t.Fatalf("%s: Init returned %d values, want %d", c.m.Name(), len(a), c.m.NumParams())
		}
		same := 0
		for k := range a {
			if a[k] != b[k] {
				t.Fatalf("%s: Init(42) differs between calls at %d", c.m.Name(), k)
			}
			if a[k] == other[k] {
				same++
			}
		}
		if same > len(a)/100 {
			t.Errorf("%s: Init(42) and Init(43) agree on %d of %d values", c.m.Name(), same, len(a))
		}
		for _, p := range c.m.Params() {
			bound := 1 / math.Sqrt(float64(c.fanIn[p.Name]))
			var hi, sum float64
			for _, v := range a[p.Offset : p.Offset+p.Size()] {
				hi = math.Max(hi, math.Abs(float64(v)))
				sum += float64(v)
			}
			if hi > bound {
				t.Errorf("%s %s: |value| up to %.4g, bound %.4g", c.m.Name(), p.Name, hi, bound)
			}
			// A uniform sample of n values reaches past 0.5·bound unless n is tiny.
			if hi < 0.5*bound {
				t.Errorf("%s %s: |value| at most %.4g, want values near the bound %.4g", c.m.Name(), p.Name, hi, bound)
			}
			if mean := sum / float64(p.Size()); p.Size() >= 100 && math.Abs(mean) > 0.2*bound {
				t.Errorf("%s %s: mean %.4g, want ≈ 0 (bound %.4g)", c.m.Name(), p.Name, mean, bound)
			}
		}
	}
}

func TestParamCounts(t *testing.T) {
	for _, c := range []struct {
		m      Model
		want   int
		shapes string
	}{
		{NewMNISTCNN(), 18378, "conv1.w[16 1 5 5] conv1.b[16] conv2.w[32 16 5 5] conv2.b[32] fc.w[512 10] fc.b[10]"},
		{NewCIFARCNN(), 62006, "conv1.w[6 3 5 5] conv1.b[6] conv2.w[16 6 5 5] conv2.b[16] fc1.w[400 120] fc1.b[120] fc2.w[120 84] fc2.b[84] fc3.w[84 10] fc3.b[10]"},
		{NewLogReg(47236, DefaultAlpha), 47236, "w[47236]"},
	} {
		if got := c.m.NumParams(); got != c.want {
			t.Errorf("%s: NumParams() = %d, want %d", c.m.Name(), got, c.want)
		}
		shapes, next := "", 0
		for _, p := range c.m.Params() {
			if p.Offset != next {
				t.Errorf("%s: %s at offset %d, want %d", c.m.Name(), p.Name, p.Offset, next)
			}
			next += p.Size()
			if shapes != "" {
				shapes += " "
			}
			shapes += fmt.Sprintf("%s%v", p.Name, p.Shape)
		}
		if next != c.want {
			t.Errorf("%s: tensors hold %d values, want %d", c.m.Name(), next, c.want)
		}
		if shapes != c.shapes {
			t.Errorf("%s: tensors %s, want %s", c.m.Name(), shapes, c.shapes)
		}
	}
}
