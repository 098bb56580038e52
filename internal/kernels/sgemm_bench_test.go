package kernels

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// benchShape is one GEMM of the CNNs: C[m×n] = op(A)·op(B) summed over
// batch operands (batch > 1 with reduce: SgemmReduce; without: one Sgemm per
// image). Per-image shapes ("img") reuse one set of operands for every
// image, as a convolution op does with a column buffer im2col has just
// filled (cache-hot); "acc" accumulates into C (beta = 1) image after image.
type benchShape struct {
	name           string
	transA, transB bool
	m, n, k, batch int
	reduce, acc    bool
}

var benchShapes = []benchShape{
	// MNIST CNN, batch 64, batched over the images (the shapes in issue 6).
	{name: "mnist/conv1-fwd/16x25x36864", m: 16, n: 36864, k: 25, batch: 1},
	{name: "mnist/conv2-fwd/32x400x4096", m: 32, n: 4096, k: 400, batch: 1},
	{name: "mnist/conv2-dW/32x4096x400T", transB: true, m: 32, n: 400, k: 4096, batch: 1},
	{name: "mnist/conv2-dCols/T400x32x4096", transA: true, m: 400, n: 4096, k: 32, batch: 1},
	{name: "mnist/conv1-dW/16x36864x25T", transB: true, m: 16, n: 25, k: 36864, batch: 1},
	{name: "mnist/fc-fwd/64x512x10", m: 64, n: 10, k: 512, batch: 1},
	{name: "mnist/fc-fwd/64x512x10T", transB: true, m: 64, n: 10, k: 512, batch: 1},
	{name: "mnist/fc-dX/64x10x512", m: 64, n: 512, k: 10, batch: 1},
	{name: "mnist/fc-dW/T10x64x512", transA: true, m: 10, n: 512, k: 64, batch: 1},
	// MNIST CNN, batch 64, per image (NCHW): what a convolution op runs.
	{name: "mnist/conv1-fwd/img/16x25x576", m: 16, n: 576, k: 25, batch: 64},
	{name: "mnist/conv2-fwd/img/32x400x64", m: 32, n: 64, k: 400, batch: 64},
	{name: "mnist/conv2-dCols/img/T400x32x64", transA: true, m: 400, n: 64, k: 32, batch: 64},
	{name: "mnist/conv2-dWT/img/400x64x32", m: 400, n: 32, k: 64, batch: 64, acc: true},
	{name: "mnist/conv1-dWT/img/25x576x16", m: 25, n: 16, k: 576, batch: 64, acc: true},
	{name: "mnist/conv2-dW/batch/32x64x400T", transB: true, m: 32, n: 400, k: 64, batch: 64, reduce: true},
	{name: "mnist/conv1-dW/batch/16x576x25T", transB: true, m: 16, n: 25, k: 576, batch: 64, reduce: true},
	// CIFAR CNN, batch 128.
	{name: "cifar/conv1-fwd/6x75x100352", m: 6, n: 100352, k: 75, batch: 1},
	{name: "cifar/conv1-fwd/img/6x75x784", m: 6, n: 784, k: 75, batch: 128},
	{name: "cifar/conv1-dWT/img/75x784x6", m: 75, n: 6, k: 784, batch: 128, acc: true},
	{name: "cifar/conv1-dW/img/6x784x75T", transB: true, m: 6, n: 75, k: 784, batch: 128, acc: true},
	{name: "cifar/conv2-dW/img/16x100x150T", transB: true, m: 16, n: 150, k: 100, batch: 128, acc: true},
	{name: "cifar/conv2-fwd/16x150x12800", m: 16, n: 12800, k: 150, batch: 1},
	{name: "cifar/conv2-fwd/img/16x150x100", m: 16, n: 100, k: 150, batch: 128},
	{name: "cifar/conv2-dCols/img/T150x16x100", transA: true, m: 150, n: 100, k: 16, batch: 128},
	{name: "cifar/conv2-dWT/img/150x100x16", m: 150, n: 16, k: 100, batch: 128, acc: true},
	{name: "cifar/fc1-fwd/128x400x120T", transB: true, m: 128, n: 120, k: 400, batch: 1},
	{name: "cifar/fc1-dX/128x120x400", m: 128, n: 400, k: 120, batch: 1},
	{name: "cifar/fc1-dW/T120x128x400", transA: true, m: 120, n: 400, k: 128, batch: 1},
	{name: "cifar/fc2-fwd/128x120x84T", transB: true, m: 128, n: 84, k: 120, batch: 1},
	// ResNet-20-GN, batch 32, per image: the 3×3 convolutions of its three
	// stages (forward, column gradient, transposed weight gradient).
	{name: "resnet/s1-fwd/img/16x144x1024", m: 16, n: 1024, k: 144, batch: 32},
	{name: "resnet/s1-dCols/img/T144x16x1024", transA: true, m: 144, n: 1024, k: 16, batch: 32},
	{name: "resnet/s1-dWT/img/144x1024x16", m: 144, n: 16, k: 1024, batch: 32, acc: true},
	{name: "resnet/s2-fwd/img/32x288x256", m: 32, n: 256, k: 288, batch: 32},
	{name: "resnet/s2-dCols/img/T288x32x256", transA: true, m: 288, n: 256, k: 32, batch: 32},
	{name: "resnet/s2-dWT/img/288x256x32", m: 288, n: 32, k: 256, batch: 32, acc: true},
	{name: "resnet/s3-fwd/img/64x576x64", m: 64, n: 64, k: 576, batch: 32},
	{name: "resnet/s3-dCols/img/T576x64x64", transA: true, m: 576, n: 64, k: 64, batch: 32},
	{name: "resnet/s3-dWT/img/576x64x64", m: 576, n: 64, k: 64, batch: 32, acc: true},
}

// operands allocates random operands for s (A, B per batch entry; C per
// entry unless reduced) and returns their strides.
func (s benchShape) operands() (a, b, c []float32, lda, ldb, sta, stb, stc int) {
	rng := rand.New(rand.NewPCG(7, 8))
	lda, ldb = s.k, s.n
	if s.transA {
		lda = s.m
	}
	if s.transB {
		ldb = s.k
	}
	sta, stb, stc = s.m*s.k, s.k*s.n, s.m*s.n
	if s.reduce {
		stc = 0
	} else if s.batch > 1 { // per image, cache-hot
		sta, stb, stc = 0, 0, 0
	}
	a = randSlice(rng, max(s.m*s.k, sta*s.batch))
	b = randSlice(rng, max(s.k*s.n, stb*s.batch))
	c = make([]float32, max(s.m*s.n, stc*s.batch))
	return
}

func (s benchShape) flops() float64 {
	return 2 * float64(s.m) * float64(s.n) * float64(s.k) * float64(s.batch)
}

func BenchmarkSgemm(b *testing.B) {
	for _, s := range benchShapes {
		a, bb, c, lda, ldb, sta, stb, stc := s.operands()
		b.Run(s.name+"/ours", func(b *testing.B) {
			for b.Loop() {
				if s.reduce {
					SgemmReduce(s.transA, s.transB, s.m, s.n, s.k, s.batch, 1, a, lda, sta, bb, ldb, stb, 0, c, s.n)
					continue
				}
				for i := range s.batch {
					beta := float32(0)
					if s.acc && i > 0 {
						beta = 1
					}
					Sgemm(s.transA, s.transB, s.m, s.n, s.k, 1, a[i*sta:], lda, bb[i*stb:], ldb, beta, c[i*stc:], s.n)
				}
			}
			b.ReportMetric(s.flops()*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		})
		b.Run(s.name+"/gonum", func(b *testing.B) {
			tA, tB := blas.NoTrans, blas.NoTrans
			if s.transA {
				tA = blas.Trans
			}
			if s.transB {
				tB = blas.Trans
			}
			impl := gonum.Implementation{}
			for b.Loop() {
				for i := range s.batch {
					beta := float32(0)
					if (s.reduce || s.acc) && i > 0 {
						beta = 1
					}
					impl.Sgemm(tA, tB, s.m, s.n, s.k, 1, a[i*sta:], lda, bb[i*stb:], ldb, beta, c[i*stc:], s.n)
				}
			}
			b.ReportMetric(s.flops()*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		})
	}
}

// BenchmarkPeak times the tallest broadcast tile of one 16-lane vector
// (14×16 on AVX-512, 6×16 on AVX2) on L1-resident data, per kernel set:
// the single-core FMA ceiling the GEMM figures are measured against.
func BenchmarkPeak(b *testing.B) {
	for _, ks := range kernelSets() {
		mr, n, k := ks.maxMR[0], 32, 128
		rng := rand.New(rand.NewPCG(9, 10))
		a, bb, c := randSlice(rng, mr*k), randSlice(rng, k*n), make([]float32, mr*n)
		b.Run(ks.name, func(b *testing.B) {
			for b.Loop() {
				ks.bcast(mr, 1, n/16, k, 1, a, 0, k, 1, 0, bb, 0, n, 0, c, 0, n, 1, 0, laneMask(16))
			}
			b.ReportMetric(float64(2*mr*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		})
	}
}

// BenchmarkFMALimit times 12 independent FMA chains on registers (48
// fused multiply-adds a step: YMM on AVX2, ZMM on AVX-512, 128-bit
// registers on NEON), per kernel set that
// has the kernel: the core's FMA limit, which BenchmarkPeak's tile and the
// models' gradients (BenchmarkGradResNet20GN32) are measured against.
func BenchmarkFMALimit(b *testing.B) {
	for _, ks := range kernelSets() {
		run := fmaChains(ks)
		if run == nil {
			continue
		}
		lanes := ks.lanes
		const steps = 1 << 12
		b.Run(ks.name, func(b *testing.B) {
			for b.Loop() {
				run(steps)
			}
			b.ReportMetric(float64(fmaStepFLOP*lanes*steps)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		})
	}
}
