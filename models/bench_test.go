package models

import (
	"testing"

	"github.com/gtstorm/gtstorm/data"
)

func benchGrad(b *testing.B, m Model, batch data.Batch) {
	w := newWorker(b, m)
	params := m.Init(1)
	g := make([]float32, len(params))
	if _, err := w.Grad(params, batch, g); err != nil { // builds the graph
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := w.Grad(params, batch, g); err != nil {
			b.Fatal(err)
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// BenchmarkGradMNIST64 is one gradient evaluation of the MNIST CNN at
// batch 64 (the paper's MNIST setting).
func BenchmarkGradMNIST64(b *testing.B) {
	d := imageSet(1, 64, 10, false, 1, 28, 28)
	benchGrad(b, NewMNISTCNN(), batchOf(d, seq(64)...))
}

// BenchmarkGradCIFAR128 is one gradient evaluation of the CIFAR CNN at
// batch 128 (the paper's CIFAR setting).
func BenchmarkGradCIFAR128(b *testing.B) {
	d := imageSet(2, 128, 10, true, 3, 32, 32)
	benchGrad(b, NewCIFARCNN(), batchOf(d, seq(128)...))
}

// BenchmarkGradLogRegRCV1 is one gradient evaluation of the logistic
// regression at batch 1 on sparse rows shaped like rcv1.binary (47,236
// features, about 75 non-zeros a row).
func BenchmarkGradLogRegRCV1(b *testing.B) {
	d := sparseSet(3, 4, 47236, 75.0/47236)
	benchGrad(b, NewLogReg(47236, DefaultAlpha), batchOf(d, 2))
}

// BenchmarkGradLogRegA9A is the same on a9a-shaped rows (123 features,
// about 14 non-zeros a row).
func BenchmarkGradLogRegA9A(b *testing.B) {
	d := sparseSet(4, 4, 123, 14.0/123)
	benchGrad(b, NewLogReg(123, DefaultAlpha), batchOf(d, 2))
}

// BenchmarkEvalMNIST1000 is one forward evaluation of a 1000-sample chunk.
func BenchmarkEvalMNIST1000(b *testing.B) {
	d := imageSet(1, 1000, 10, false, 1, 28, 28)
	m := NewMNISTCNN()
	w := newWorker(b, m)
	params := m.Init(1)
	batch := batchOf(d, seq(1000)...)
	if _, _, err := w.Eval(params, batch); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := w.Eval(params, batch); err != nil {
			b.Fatal(err)
		}
	}
}

func benchGradPair(b *testing.B, m Model, batch data.Batch) {
	w := newWorker(b, m).(PairGrader)
	xNew, xOld := m.Init(1), m.Init(2)
	gNew, gOld := make([]float32, len(xNew)), make([]float32, len(xOld))
	if _, _, err := w.GradPair(xNew, xOld, batch, gNew, gOld); err != nil { // builds the graph
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := w.GradPair(xNew, xOld, batch, gNew, gOld); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGradPairMNIST64 is GT-STORM's two gradient evaluations on one
// MNIST batch of 64 (compare with twice BenchmarkGradMNIST64).
func BenchmarkGradPairMNIST64(b *testing.B) {
	d := imageSet(1, 64, 10, false, 1, 28, 28)
	benchGradPair(b, NewMNISTCNN(), batchOf(d, seq(64)...))
}

// BenchmarkGradPairCIFAR128 is the same for the CIFAR CNN at batch 128.
func BenchmarkGradPairCIFAR128(b *testing.B) {
	d := imageSet(2, 128, 10, true, 3, 32, 32)
	benchGradPair(b, NewCIFARCNN(), batchOf(d, seq(128)...))
}
