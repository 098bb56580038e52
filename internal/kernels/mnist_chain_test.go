package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// mnistChain is the MNIST CNN of the SPEC (conv 1→16 5×5, ReLU, pool; conv
// 16→32 5×5, ReLU, pool; FC 512→10; softmax cross-entropy) written with the
// kernels of this package, image by image in NCHW, the way a fused
// convolution op would run it. Parameters use PyTorch's layouts.
type mnistChain struct {
	n                           int
	w1, b1, w2, b2, w3, b3      []float32
	dw1, db1, dw2, db2, dw3, d3 []float32
	// activations and workspaces
	x, cols1, z1, a1, cols2, z2, a2, logits, dlogits []float32
	code1, code2                                     []uint8
	da2, dz2, dcols, da1, dz1                        []float32
	labels                                           []uint8
	// recompute recipe: per-image buffers, transposed gradients
	recompute       bool
	dzT, dw1T, dw2T []float32
	conv1, conv2    *Conv
}

var (
	mnistS1 = ConvShape{C: 1, H: 28, W: 28, KH: 5, KW: 5}
	mnistS2 = ConvShape{C: 16, H: 12, W: 12, KH: 5, KW: 5}
)

func mustConv(s ConvShape) *Conv {
	c, err := NewConv(s)
	if err != nil {
		panic(err)
	}
	return c
}

func newMNISTChain(n int, rng *rand.Rand) *mnistChain {
	r := func(k int, scale float32) []float32 {
		s := randSlice(rng, k)
		for i := range s {
			s[i] *= scale
		}
		return s
	}
	m := &mnistChain{n: n,
		w1: r(16*25, 0.2), b1: r(16, 0.1), w2: r(32*400, 0.05), b2: r(32, 0.1), w3: r(10*512, 0.05), b3: r(10, 0.1),
		dw1: make([]float32, 16*25), db1: make([]float32, 16), dw2: make([]float32, 32*400), db2: make([]float32, 32),
		dw3: make([]float32, 10*512), d3: make([]float32, 10),
		x: make([]float32, n*784), cols1: make([]float32, n*25*576), z1: make([]float32, n*16*576),
		a1: make([]float32, n*16*144), cols2: make([]float32, n*400*64), z2: make([]float32, n*32*64),
		a2: make([]float32, n*512), logits: make([]float32, n*10), dlogits: make([]float32, n*10),
		code1: make([]uint8, n*16*144), code2: make([]uint8, n*512),
		da2: make([]float32, n*512), dz2: make([]float32, n*32*64), dcols: make([]float32, 400*64),
		da1: make([]float32, n*16*144), dz1: make([]float32, n*16*576), labels: make([]uint8, n),
		dzT: make([]float32, 576*16), dw1T: make([]float32, 25*16), dw2T: make([]float32, 400*32),
		conv1: mustConv(mnistS1), conv2: mustConv(mnistS2),
	}
	for i := range m.x { // MNIST-like: many exact zeros, values in [0, 1]
		if rng.IntN(3) > 0 {
			m.x[i] = float32(rng.IntN(256)) / 255
		}
	}
	for i := range m.labels {
		m.labels[i] = uint8(rng.IntN(10))
	}
	return m
}

// cols1At and cols2At return where image i's column matrices live: its own
// slot of the batch (stored recipe) or one reused buffer (recompute recipe).
func (m *mnistChain) cols1At(i int) []float32 {
	if m.recompute {
		return m.cols1[:25*576]
	}
	return m.cols1[i*25*576:]
}

func (m *mnistChain) cols2At(i int) []float32 {
	if m.recompute {
		return m.cols2[:400*64]
	}
	return m.cols2[i*400*64:]
}

// step runs one forward and backward pass and returns the loss.
//
// The stored recipe keeps every image's column matrices from the forward
// pass and forms dW = Σ_n dz_n·cols_nᵀ with the dot kernels. The recompute
// recipe keeps one column buffer per layer (cache-resident), rebuilds it in
// the backward pass and forms dWᵀ = Σ_n cols_n·dz_nᵀ with the broadcast
// kernels after transposing dz_n.
func (m *mnistChain) step() float64 {
	n := m.n
	for i := range n {
		c := m.cols1At(i)
		m.conv1.Im2Col(c, m.x[i*784:])
		Sgemm(false, false, 16, 576, 25, 1, m.w1, 25, c, 576, 0, m.z1[i*16*576:], 576)
	}
	p1 := PoolShape{Planes: n * 16, H: 24, W: 24}
	MaxPool2x2BiasReLU(m.a1, m.code1, m.z1, p1, m.b1, true)
	for i := range n {
		c := m.cols2At(i)
		m.conv2.Im2Col(c, m.a1[i*16*144:])
		Sgemm(false, false, 32, 64, 400, 1, m.w2, 400, c, 64, 0, m.z2[i*32*64:], 64)
	}
	p2 := PoolShape{Planes: n * 32, H: 8, W: 8}
	MaxPool2x2BiasReLU(m.a2, m.code2, m.z2, p2, m.b2, true)
	Sgemm(false, true, n, 10, 512, 1, m.a2, 512, m.w3, 512, 0, m.logits, 10)
	AddBiasRows(m.logits, m.b3, n, false)
	loss, err := SoftmaxCrossEntropy(m.dlogits, m.logits, m.labels, 10)
	if err != nil {
		panic(err)
	}
	// Backward.
	Sgemm(true, false, 10, 512, n, 1, m.dlogits, 10, m.a2, 512, 0, m.dw3, 512)
	clear(m.d3)
	BiasGradRows(m.d3, m.dlogits, n)
	Sgemm(false, false, n, 512, 10, 1, m.dlogits, 10, m.w3, 512, 0, m.da2, 512)
	clear(m.db2)
	MaxPool2x2BiasReLUBackward(m.dz2, m.db2, m.da2, m.a2, m.code2, p2, true)
	if !m.recompute {
		SgemmReduce(false, true, 32, 400, 64, n, 1, m.dz2, 64, 32*64, m.cols2, 64, 400*64, 0, m.dw2, 400)
	}
	for i := range n {
		dz := m.dz2[i*32*64:]
		if m.recompute {
			c := m.cols2At(i)
			m.conv2.Im2Col(c, m.a1[i*16*144:])
			Transpose(m.dzT, 32, dz, 64, 32, 64)
			Sgemm(false, false, 400, 32, 64, 1, c, 64, m.dzT, 32, float32(min(i, 1)), m.dw2T, 32)
		}
		Sgemm(true, false, 400, 64, 32, 1, m.w2, 400, dz, 64, 0, m.dcols, 64)
		m.conv2.Col2Im(m.da1[i*16*144:], m.dcols)
	}
	if m.recompute {
		Transpose(m.dw2, 400, m.dw2T, 32, 400, 32)
	}
	clear(m.db1)
	MaxPool2x2BiasReLUBackward(m.dz1, m.db1, m.da1, m.a1, m.code1, p1, true)
	if !m.recompute {
		SgemmReduce(false, true, 16, 25, 576, n, 1, m.dz1, 576, 16*576, m.cols1, 576, 25*576, 0, m.dw1, 25)
		return loss
	}
	for i := range n {
		c := m.cols1At(i)
		m.conv1.Im2Col(c, m.x[i*784:])
		Transpose(m.dzT, 16, m.dz1[i*16*576:], 576, 16, 576)
		Sgemm(false, false, 25, 16, 576, 1, c, 576, m.dzT, 16, float32(min(i, 1)), m.dw1T, 16)
	}
	Transpose(m.dw1, 25, m.dw1T, 16, 25, 16)
	return loss
}

// refLoss is the same network's loss in float64 with naive loops (ReLU
// before pooling, as PyTorch's model writes it).
func (m *mnistChain) refLoss(w1, b1, w2, b2, w3, b3 []float64) float64 {
	conv := func(x []float64, c, h, w int, wt, b []float64, oc int) ([]float64, int, int) {
		oh, ow := h-4, w-4
		y := make([]float64, oc*oh*ow)
		for o := range oc {
			for oy := range oh {
				for ox := range ow {
					s := b[o]
					for ci := range c {
						for i := range 5 {
							for j := range 5 {
								s += wt[((o*c+ci)*5+i)*5+j] * x[(ci*h+oy+i)*w+ox+j]
							}
						}
					}
					y[(o*oh+oy)*ow+ox] = max(s, 0)
				}
			}
		}
		return y, oh, ow
	}
	pool := func(x []float64, c, h, w int) []float64 {
		y := make([]float64, c*(h/2)*(w/2))
		for ci := range c {
			for oy := range h / 2 {
				for ox := range w / 2 {
					v := math.Inf(-1)
					for q := range 4 {
						v = max(v, x[(ci*h+2*oy+q/2)*w+2*ox+q%2])
					}
					y[(ci*(h/2)+oy)*(w/2)+ox] = v
				}
			}
		}
		return y
	}
	var total float64
	for i := range m.n {
		x := make([]float64, 784)
		for j := range x {
			x[j] = float64(m.x[i*784+j])
		}
		y1, h1, w1o := conv(x, 1, 28, 28, w1, b1, 16)
		a1 := pool(y1, 16, h1, w1o)
		y2, h2, w2o := conv(a1, 16, 12, 12, w2, b2, 32)
		a2 := pool(y2, 32, h2, w2o)
		logits := make([]float64, 10)
		mx := math.Inf(-1)
		for o := range 10 {
			s := b3[o]
			for j := range 512 {
				s += w3[o*512+j] * a2[j]
			}
			logits[o] = s
			mx = max(mx, s)
		}
		var z float64
		for _, v := range logits {
			z += math.Exp(v - mx)
		}
		total += mx + math.Log(z) - logits[m.labels[i]]
	}
	return total / float64(m.n)
}

func to64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// TestMNISTChainGradient checks the loss and sampled gradient coordinates
// of every parameter tensor of the kernel-built network against central
// finite differences of the float64 reference.
func TestMNISTChainGradient(t *testing.T) {
	for _, recompute := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(31, 32))
		m := newMNISTChain(3, rng)
		m.recompute = recompute
		checkChainGradient(t, m, rng)
	}
}

func checkChainGradient(t *testing.T, m *mnistChain, rng *rand.Rand) {
	t.Helper()
	loss := m.step()
	p := [][]float64{to64(m.w1), to64(m.b1), to64(m.w2), to64(m.b2), to64(m.w3), to64(m.b3)}
	grads := [][]float32{m.dw1, m.db1, m.dw2, m.db2, m.dw3, m.d3}
	names := []string{"w1", "b1", "w2", "b2", "w3", "b3"}
	ref := m.refLoss(p[0], p[1], p[2], p[3], p[4], p[5])
	if math.Abs(loss-ref) > 1e-5*(1+math.Abs(ref)) {
		t.Fatalf("loss = %.9g, float64 reference %.9g", loss, ref)
	}
	samples := 6
	if testing.Short() {
		samples = 2
	}
	for k, g := range grads {
		for range samples {
			i := rng.IntN(len(g))
			old := p[k][i]
			const h = 1e-6 // small: the loss has ReLU and max kinks
			p[k][i] = old + h
			lp := m.refLoss(p[0], p[1], p[2], p[3], p[4], p[5])
			p[k][i] = old - h
			lm := m.refLoss(p[0], p[1], p[2], p[3], p[4], p[5])
			p[k][i] = old
			num := (lp - lm) / (2 * h)
			if math.Abs(float64(g[i])-num) > 2e-3*math.Abs(num)+2e-5 {
				t.Errorf("recompute=%v: d loss/d %s[%d] = %.7g, finite difference %.7g", m.recompute, names[k], i, g[i], num)
			}
		}
	}
}

// BenchmarkMNISTKernelStep times one full MNIST CNN gradient evaluation at
// batch 64 (every kernel, not only the GEMMs) on one goroutine.
func BenchmarkMNISTKernelStep(b *testing.B) {
	for _, recompute := range []bool{false, true} {
		name := map[bool]string{false: "stored", true: "recompute"}[recompute]
		b.Run(name, func(b *testing.B) {
			m := newMNISTChain(mnistBatch, rand.New(rand.NewPCG(33, 34)))
			m.recompute = recompute
			for b.Loop() {
				m.step()
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*1e3, "ms/eval")
		})
	}
}

// BenchmarkMNISTKernelStepParallel runs one gradient evaluation per
// goroutine on GOMAXPROCS goroutines at once (each with its own network and
// workspaces, as nodes evaluated in parallel would): ns/op is wall time per
// evaluation across all of them, and ms/round20 the wall time of the 20
// evaluations of a 10-node GT-STORM round.
func BenchmarkMNISTKernelStepParallel(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		m := newMNISTChain(mnistBatch, rand.New(rand.NewPCG(35, 36)))
		m.recompute = true
		for pb.Next() {
			m.step()
		}
	})
	b.ReportMetric(20*b.Elapsed().Seconds()/float64(b.N)*1e3, "ms/round20")
}

// TestMNISTChainNoAlloc checks that a whole forward and backward pass built
// from the kernels allocates nothing once its buffers exist.
func TestMNISTChainNoAlloc(t *testing.T) {
	for _, recompute := range []bool{false, true} {
		m := newMNISTChain(2, rand.New(rand.NewPCG(37, 38)))
		m.recompute = recompute
		if allocs := testing.AllocsPerRun(3, func() { m.step() }); allocs != 0 {
			t.Errorf("recompute=%v: %v allocations per step, want 0", recompute, allocs)
		}
	}
}
