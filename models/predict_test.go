package models

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/data"
)

// TestLogitsAgreeWithEvaluate: the probabilities of Probabilities are the
// softmax of Logits, their argmax counts as many correct samples as
// Evaluate does and their cross-entropy is Evaluate's loss; the logits do
// not depend on the number of workers.
func TestLogitsAgreeWithEvaluate(t *testing.T) {
	for _, c := range []struct {
		m Model
		d *data.Dataset
	}{
		{NewMNISTCNN(), imageSet(11, 150, 10, false, 1, 28, 28)},
		{NewCIFARCNN(), imageSet(12, 70, 10, true, 3, 32, 32)},
	} {
		t.Run(c.m.Name(), func(t *testing.T) {
			shape, classes, ok := Classifier(c.m)
			if !ok || !slices.Equal(shape, c.d.Shape) || classes != 10 {
				t.Fatalf("Classifier: %v %d %v", shape, classes, ok)
			}
			params := c.m.Init(5)
			n := c.d.Len()
			var logits [2][]float32
			for k, workers := range []int{1, 3} {
				pool, err := NewPool(c.m, workers)
				if err != nil {
					t.Fatal(err)
				}
				logits[k] = make([]float32, n*classes)
				if err := pool.Logits(params, c.d, logits[k]); err != nil {
					t.Fatal(err)
				}
			}
			for i := range logits[0] {
				if math.Float32bits(logits[0][i]) != math.Float32bits(logits[1][i]) {
					t.Fatalf("logit %d: %v with 1 worker, %v with 3", i, logits[0][i], logits[1][i])
				}
			}
			pool, _ := NewPool(c.m, 2)
			probs, err := pool.Probabilities(params, c.d)
			if err != nil {
				t.Fatal(err)
			}
			correct, lossSum := 0, 0.0
			for i, p := range probs {
				z := logits[0][i*classes : (i+1)*classes]
				best, sum := 0, 0.0
				for j := range p {
					// The softmax, computed here independently in float64.
					var s float64
					for _, v := range z {
						s += math.Exp(float64(v) - float64(z[j]))
					}
					if math.Abs(p[j]-1/s) > 1e-12 {
						t.Fatalf("sample %d class %d: probability %v, softmax %v", i, j, p[j], 1/s)
					}
					if z[j] > z[best] {
						best = j
					}
					sum += p[j]
				}
				if math.Abs(sum-1) > 1e-12 {
					t.Fatalf("sample %d: probabilities sum to %v", i, sum)
				}
				if best == int(c.d.Labels[i]) {
					correct++
				}
				lossSum -= math.Log(p[c.d.Labels[i]])
			}
			for _, chunk := range []int{64, 250} {
				acc, loss, err := pool.Evaluate(params, c.d, chunk)
				if err != nil {
					t.Fatal(err)
				}
				if acc != float64(correct)/float64(n) {
					t.Errorf("chunk %d: Evaluate's accuracy %v, the logits' argmax gives %v", chunk, acc, float64(correct)/float64(n))
				}
				if math.Abs(loss-lossSum/float64(n)) > 1e-6 {
					t.Errorf("chunk %d: Evaluate's loss %v, the probabilities' cross-entropy %v", chunk, loss, lossSum/float64(n))
				}
			}
		})
	}
}

func TestLogitsErrors(t *testing.T) {
	m := NewMNISTCNN()
	pool, err := NewPool(m, 1)
	if err != nil {
		t.Fatal(err)
	}
	d := imageSet(1, 3, 10, false, 1, 28, 28)
	params := m.Init(1)
	for _, c := range []struct {
		name   string
		params []float32
		d      *data.Dataset
		out    int
		want   string
	}{
		{"short output", params, d, 29, "output of length 29"},
		{"empty", params, nil, 0, "empty dataset"},
		{"short params", params[:10], d, 30, "has length 10"},
		{"wrong shape", params, imageSet(1, 3, 10, true, 3, 32, 32), 30, "model expects 784"},
	} {
		err := pool.Logits(c.params, c.d, make([]float32, c.out))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	lr := NewLogReg(20, DefaultAlpha)
	if _, _, ok := Classifier(lr); ok {
		t.Error("logreg counts as a classifier")
	}
	lp, err := NewPool(lr, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lp.Probabilities(lr.Init(1), sparseSet(1, 4, 20, 0.2)); err == nil || !strings.Contains(err.Error(), "not a classifier") {
		t.Errorf("logreg probabilities: %v", err)
	}
}
