package kernels

import (
	"math/rand/v2"
	"testing"
)

// mnistGEMMs holds the operands of the GEMMs of one MNIST CNN forward and
// backward pass at batch 64, as the recompute recipe of mnistChain runs
// them: per image, NCHW, column matrices in one reused buffer per layer,
// weight gradients accumulated transposed (dWᵀ += cols_n·dz_nᵀ).
type mnistGEMMs struct {
	w1, cols1, y1, dy1T, dw1T      []float32 // conv1 1→16, 5×5: 28→24
	w2, cols2, y2, dy2, dy2T, dw2T []float32 // conv2 16→32, 5×5: 12→8
	dcol                           []float32
	x3, w3, y3, dy3, dw3, dx3      []float32 // fc 512→10
}

const (
	mnistBatch = 64
	c1K, c1P   = 25, 576 // conv1: C·KH·KW, OH·OW
	c1M        = 16
	c2K, c2P   = 400, 64
	c2M        = 32
)

func newMNISTGEMMs() *mnistGEMMs {
	rng := rand.New(rand.NewPCG(9, 10))
	r := func(n int) []float32 { return randSlice(rng, n) }
	N := mnistBatch
	return &mnistGEMMs{
		w1: r(c1M * c1K), cols1: r(c1K * c1P), y1: r(N * c1M * c1P), dy1T: r(c1P * c1M), dw1T: r(c1K * c1M),
		w2: r(c2M * c2K), cols2: r(c2K * c2P), y2: r(N * c2M * c2P), dy2: r(N * c2M * c2P), dy2T: r(c2P * c2M), dw2T: r(c2K * c2M),
		dcol: r(c2K * c2P),
		x3:   r(N * 512), w3: r(10 * 512), y3: r(N * 10), dy3: r(N * 10), dw3: r(10 * 512), dx3: r(N * 512),
	}
}

// run does the GEMMs of one forward and backward pass.
func (g *mnistGEMMs) run() {
	N := mnistBatch
	for n := range N { // conv1 forward
		Sgemm(false, false, c1M, c1P, c1K, 1, g.w1, c1K, g.cols1, c1P, 0, g.y1[n*c1M*c1P:], c1P)
	}
	for n := range N { // conv2 forward
		Sgemm(false, false, c2M, c2P, c2K, 1, g.w2, c2K, g.cols2, c2P, 0, g.y2[n*c2M*c2P:], c2P)
	}
	Sgemm(false, true, N, 10, 512, 1, g.x3, 512, g.w3, 512, 0, g.y3, 10)    // fc forward
	Sgemm(true, false, 10, 512, N, 1, g.dy3, 10, g.x3, 512, 0, g.dw3, 512)  // fc dW
	Sgemm(false, false, N, 512, 10, 1, g.dy3, 10, g.w3, 512, 0, g.dx3, 512) // fc dX
	for n := range N {                                                      // conv2 dWᵀ and dCols
		Sgemm(false, false, c2K, c2M, c2P, 1, g.cols2, c2P, g.dy2T, c2M, float32(min(n, 1)), g.dw2T, c2M)
		Sgemm(true, false, c2K, c2P, c2M, 1, g.w2, c2K, g.dy2[n*c2M*c2P:], c2P, 0, g.dcol, c2P)
	}
	for n := range N { // conv1 dWᵀ
		Sgemm(false, false, c1K, c1M, c1P, 1, g.cols1, c1P, g.dy1T, c1M, float32(min(n, 1)), g.dw1T, c1M)
	}
}

// mnistFLOPs is the floating-point work of run.
const mnistFLOPs = 2 * mnistBatch * (c1M*c1K*c1P + c2M*c2K*c2P + 512*10 + 512*10 + 512*10 + c2M*c2K*c2P + c2K*c2M*c2P + c1M*c1K*c1P)

// BenchmarkMNISTForwardBackwardFLOPs times the GEMMs of one MNIST CNN
// gradient evaluation at batch 64 on one goroutine (376 MFLOP).
func BenchmarkMNISTForwardBackwardFLOPs(b *testing.B) {
	g := newMNISTGEMMs()
	for b.Loop() {
		g.run()
	}
	b.ReportMetric(mnistFLOPs*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e3, "ms/eval")
}
