package models

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/internal/kernels"
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

// BenchmarkGradResNet20GN32 is one gradient evaluation of resnet20-gn on
// CIFAR-10's images at batch 32 (issue 31's speed setting: about 7.8
// GFLOP, as PyTorch counts a forward and backward pass).
func BenchmarkGradResNet20GN32(b *testing.B) {
	d := imageSet(3, 32, 10, true, 3, 32, 32)
	m, err := New("resnet20-gn", []int{3, 32, 32}, 10)
	if err != nil {
		b.Fatal(err)
	}
	limit := kernels.FMALimit(50 * time.Millisecond)
	benchGrad(b, m, batchOf(d, seq(32)...))
	gflops := 32 * resNetGNFLOPs(20, 32, 32, 10) * float64(b.N) / b.Elapsed().Seconds() / 1e9
	limit = (limit + kernels.FMALimit(50*time.Millisecond)) / 2
	reportSpeed(b, gflops, limit)
}

// reportSpeed reports a gradient's GFLOPS and, where the kernel set has
// an FMA-chain kernel, the FMA limit measured beside it (before and after
// the timed loop, on the same loaded core) and the fraction of it reached;
// and the process's peak resident memory (VmHWM, on Linux).
func reportSpeed(b *testing.B, gflops, limit float64) {
	b.ReportMetric(gflops, "GFLOPS")
	if limit > 0 {
		b.ReportMetric(limit, "FMA-limit-GFLOPS")
		b.ReportMetric(gflops/limit, "of-limit")
	}
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		for line := range strings.Lines(string(status)) {
			if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				if kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB")); err == nil {
					b.ReportMetric(float64(kb)/1024, "peak-RSS-MB")
				}
			}
		}
	}
}

// resNetGNFLOPs is the floating-point work of one sample's gradient of
// NewResNetGN(depth) on c×h×w images with the given classes, as PyTorch's
// profilers count it: 2 FLOP a multiply-add of the convolutions and the
// dense layer, times 3 for the forward pass and the two products of the
// backward pass (GroupNorm, ReLU, pooling and the loss are not counted).
// resnet20-gn on CIFAR-10: 40.8 M multiply-adds, 245 MFLOP a sample.
func resNetGNFLOPs(depth, h, w, classes int) float64 {
	var macs int
	conv := func(in, out, k, stride int) {
		h, w = (h+stride-1)/stride, (w+stride-1)/stride
		macs += out * in * k * k * h * w
	}
	conv(3, 16, 3, 1)
	in := 16
	for stage, width := range []int{16, 32, 64} {
		for blk := range (depth - 2) / 6 {
			stride := 1
			if stage > 0 && blk == 0 {
				stride = 2
			}
			if stride != 1 || in != width { // the 1×1 shortcut, on the block's input
				macs += width * in * (h / stride) * (w / stride)
			}
			conv(in, width, 3, stride)
			conv(width, width, 3, 1)
			in = width
		}
	}
	macs += in * classes
	return 2 * 3 * float64(macs)
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
	w := newWorker(b, m).(PairWorker)
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
