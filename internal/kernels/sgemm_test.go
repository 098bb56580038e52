package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// kernelSets returns the implementations to test: every set this CPU runs,
// the pure-Go one last.
func kernelSets() []*kernelSet { return available() }

// refGemm computes alpha·Σ_s op(A_s)·op(B_s) + beta·C in float64 and, per
// element, the bound Σ|alpha·a·b| + |beta·c| that scales the rounding error.
func refGemm(transA, transB bool, m, n, k, batch int, alpha float32, a []float32, lda, sta int, b []float32, ldb, stb int, beta float32, c []float32, ldc int) (want, scale []float64) {
	want = make([]float64, m*n)
	scale = make([]float64, m*n)
	at := func(s, i, p int) float64 {
		if transA {
			return float64(a[s*sta+p*lda+i])
		}
		return float64(a[s*sta+i*lda+p])
	}
	bt := func(s, p, j int) float64 {
		if transB {
			return float64(b[s*stb+j*ldb+p])
		}
		return float64(b[s*stb+p*ldb+j])
	}
	for i := range m {
		for j := range n {
			var sum, abs float64
			for s := range batch {
				for p := range k {
					v := at(s, i, p) * bt(s, p, j)
					sum += v
					abs += math.Abs(v)
				}
			}
			w := float64(alpha) * sum
			sc := math.Abs(float64(alpha)) * abs
			if beta != 0 {
				w += float64(beta) * float64(c[i*ldc+j])
				sc += math.Abs(float64(beta) * float64(c[i*ldc+j]))
			}
			want[i*n+j] = w
			scale[i*n+j] = sc
		}
	}
	return want, scale
}

func randSlice(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.Float64()*2 - 1)
	}
	return s
}

type gemmCase struct {
	transA, transB bool
	m, n, k, batch int
	padA, padB     int // extra row stride beyond the minimum
	padC           int
	alpha, beta    float32
}

func (tc gemmCase) String() string {
	return fmt.Sprintf("tA=%v tB=%v m=%d n=%d k=%d batch=%d pad=%d/%d/%d alpha=%g beta=%g",
		tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.batch, tc.padA, tc.padB, tc.padC, tc.alpha, tc.beta)
}

// operands draws random operands of tc's shapes, strides and batch strides
// (padded as tc says, and by 3 and 5 floats between batch entries).
func (tc gemmCase) operands(rng *rand.Rand) (a, b, c []float32, lda, sta, ldb, stb, ldc int) {
	rowsA, colsA := tc.m, tc.k
	if tc.transA {
		rowsA, colsA = tc.k, tc.m
	}
	rowsB, colsB := tc.k, tc.n
	if tc.transB {
		rowsB, colsB = tc.n, tc.k
	}
	lda, ldb, ldc = max(1, colsA)+tc.padA, max(1, colsB)+tc.padB, max(1, tc.n)+tc.padC
	sta, stb = rowsA*lda+3, rowsB*ldb+5
	a = randSlice(rng, extent(rowsA, colsA, lda, tc.batch, sta))
	b = randSlice(rng, extent(rowsB, colsB, ldb, tc.batch, stb))
	c = randSlice(rng, extent(tc.m, tc.n, ldc, 1, 0))
	return a, b, c, lda, sta, ldb, stb, ldc
}

// runGemmCase runs tc on ks and checks every element against the float64
// reference within the worst-case float32 summation bound, and that the
// padding of C is untouched. Operands are sized exactly, so a read past the
// last element would be caught by the bounds checks of the slices handed to
// the kernels.
func runGemmCase(t *testing.T, ks *kernelSet, tc gemmCase, rng *rand.Rand) {
	t.Helper()
	a, b, c, lda, sta, ldb, stb, ldc := tc.operands(rng)
	const sentinel = 12345.5
	for i := range tc.m {
		for j := tc.n; j < ldc && i*ldc+j < len(c); j++ {
			c[i*ldc+j] = sentinel
		}
	}
	if tc.beta == 0 {
		for i := range tc.m {
			for j := range tc.n {
				c[i*ldc+j] = float32(math.NaN())
			}
		}
	}
	want, scale := refGemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.batch, tc.alpha, a, lda, sta, b, ldb, stb, tc.beta, c, ldc)
	sgemm(ks, 0, tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.batch, tc.alpha, a, lda, sta, b, ldb, stb, tc.beta, c, ldc)
	// Worst-case bound for a float32 sum of k·batch products plus the alpha and
	// beta roundings: (k·batch + 3)·u·Σ|terms|, u = 2⁻²⁴.
	tol := float64(tc.k*tc.batch+3) * 0x1p-24
	for i := range tc.m {
		for j := range tc.n {
			got := float64(c[i*ldc+j])
			w := want[i*tc.n+j]
			if math.IsNaN(got) || math.Abs(got-w) > tol*scale[i*tc.n+j]+1e-30 {
				t.Fatalf("%s: %v: C[%d][%d] = %g, want %g (±%g)", ks.name, tc, i, j, got, w, tol*scale[i*tc.n+j])
			}
		}
		for j := tc.n; j < ldc && i*ldc+j < len(c); j++ {
			if c[i*ldc+j] != sentinel {
				t.Fatalf("%s: %v: padding C[%d][%d] overwritten with %g", ks.name, tc, i, j, c[i*ldc+j])
			}
		}
	}
}

func TestSgemmSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1, 2, 7, 16, 17, 33, 65}
	if testing.Short() {
		sizes = []int{1, 7, 17, 33}
	}
	for _, ks := range kernelSets() {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, m := range sizes {
					for _, n := range sizes {
						for _, k := range sizes {
							tc := gemmCase{transA: tA, transB: tB, m: m, n: n, k: k, batch: 1,
								padA: rng.IntN(3), padB: rng.IntN(3), padC: rng.IntN(3),
								alpha: 1, beta: 0}
							switch rng.IntN(3) {
							case 1:
								tc.beta = 1
							case 2:
								tc.alpha, tc.beta = -0.75, 0.5
							}
							runGemmCase(t, ks, tc, rng)
						}
					}
				}
			}
		}
	}
}

// TestSgemmShapes covers the CNN shapes, the kernels' tile edges (heights
// 1..14 rows, widths 1..64 lanes), long k with a tail, and batch reduction.
func TestSgemmShapes(t *testing.T) {
	cases := []gemmCase{
		{m: 16, n: 576, k: 25, batch: 1, alpha: 1},                       // MNIST conv1, one image
		{m: 32, n: 64, k: 400, batch: 3, alpha: 1, beta: 1},              // conv2 forward, accumulated
		{transB: true, m: 32, n: 400, k: 64, batch: 5, alpha: 1},         // conv2 dW = Σ dY·colsᵀ
		{transA: true, m: 400, n: 64, k: 32, batch: 1, alpha: 1},         // conv2 dCols = Wᵀ·dY
		{transB: true, m: 64, n: 10, k: 512, batch: 1, alpha: 1},         // FC forward, W [10×512]
		{transA: true, m: 10, n: 512, k: 64, batch: 1, alpha: 1},         // FC dW = dYᵀ·X
		{m: 6, n: 784, k: 75, batch: 2, alpha: 0.5, beta: -2},            // CIFAR conv1
		{transB: true, m: 6, n: 75, k: 784, batch: 2, alpha: 1, beta: 1}, // CIFAR conv1 dW
		{m: 128, n: 120, k: 400, batch: 1, alpha: 1, padA: 5, padB: 3, padC: 7},
		{transA: true, transB: true, m: 37, n: 70, k: 300, batch: 2, alpha: 1, beta: 0.25},
		{transB: true, m: 9, n: 13, k: 31, batch: 4, alpha: 2},  // NT below dotMinK: packed path
		{transB: true, m: 5, n: 7, k: 1000, batch: 1, alpha: 1}, // long dot with tail
		{m: 3, n: 5, k: 0, batch: 1, alpha: 1, beta: 0.5},       // k = 0 scales C
		{m: 3, n: 5, k: 4, batch: 0, alpha: 1, beta: 0},         // empty batch zeroes C
		{m: 4, n: 4, k: 4, batch: 1, alpha: 0, beta: 2},         // alpha = 0
		{m: 0, n: 5, k: 4, batch: 1, alpha: 1, beta: 0},         // empty C
		{transA: true, m: 29, n: 100, k: 9, batch: 2, alpha: 1, beta: 1},
	}
	for mr := 1; mr <= 15; mr++ {
		for _, n := range []int{1, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65} {
			cases = append(cases, gemmCase{m: mr, n: n, k: 11, batch: 2, alpha: 1, beta: 1, padA: 1, padC: 2})
		}
	}
	for _, ks := range kernelSets() {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, tc := range cases {
			runGemmCase(t, ks, tc, rng)
		}
	}
}

// TestSgemmNoNaNFromBeta0 checks that with beta = 0 NaN and Inf in C do not
// leak into the result on the paths that read C when beta ≠ 0.
func TestSgemmNoNaNFromBeta0(t *testing.T) {
	for _, ks := range kernelSets() {
		for _, tB := range []bool{false, true} {
			m, n, k := 5, 40, 50
			a, b := make([]float32, m*k), make([]float32, k*n)
			c := make([]float32, m*n)
			for i := range c {
				c[i] = float32(math.Inf(1))
				if i%2 == 0 {
					c[i] = float32(math.NaN())
				}
			}
			sgemm(ks, 0, false, tB, m, n, k, 1, 1, a, k, 0, b, map[bool]int{false: n, true: k}[tB], 0, 0, c, n)
			for i, v := range c {
				if v != 0 {
					t.Fatalf("%s transB=%v: C[%d] = %g, want 0", ks.name, tB, i, v)
				}
			}
		}
	}
}

func TestSgemmPanicsOnBadInput(t *testing.T) {
	a, b, c := make([]float32, 12), make([]float32, 12), make([]float32, 9)
	tests := []struct {
		name string
		f    func()
	}{
		{"negative m", func() { Sgemm(false, false, -1, 3, 4, 1, a, 4, b, 3, 0, c, 3) }},
		{"small lda", func() { Sgemm(false, false, 3, 3, 4, 1, a, 3, b, 3, 0, c, 3) }},
		{"small ldb", func() { Sgemm(false, true, 3, 3, 4, 1, a, 4, b, 3, 0, c, 3) }},
		{"small ldc", func() { Sgemm(false, false, 3, 3, 4, 1, a, 4, b, 3, 0, c, 2) }},
		{"short a", func() { Sgemm(false, false, 3, 3, 4, 1, a[:11], 4, b, 3, 0, c, 3) }},
		{"short b", func() { Sgemm(false, false, 3, 3, 4, 1, a, 4, b[:11], 3, 0, c, 3) }},
		{"short c", func() { Sgemm(false, false, 3, 3, 4, 1, a, 4, b, 3, 0, c[:8], 3) }},
		{"short batch", func() { SgemmReduce(false, false, 3, 3, 4, 2, 1, a, 4, 12, b, 3, 12, 0, c, 3) }},
	}
	for _, tt := range tests {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tt.name)
				}
			}()
			tt.f()
		}()
	}
}

// TestSgemmNoAlloc checks that steady-state calls allocate nothing,
// including the packed path whose panel lives on the stack.
func TestSgemmNoAlloc(t *testing.T) {
	m, n, k := 20, 40, 24
	a, b, c := make([]float32, m*k*2), make([]float32, k*n*2), make([]float32, m*n)
	for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		allocs := testing.AllocsPerRun(20, func() {
			SgemmReduce(tr[0], tr[1], m, n, k, 2, 1, a, map[bool]int{false: k, true: m}[tr[0]], m*k,
				b, map[bool]int{false: n, true: k}[tr[1]], k*n, 0, c, n)
		})
		if allocs != 0 {
			t.Errorf("transA=%v transB=%v: %v allocations per call, want 0", tr[0], tr[1], allocs)
		}
	}
}
