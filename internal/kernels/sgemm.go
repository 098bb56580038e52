package kernels

import "fmt"

// Sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major float32
// matrices, where op(X) is X or Xᵀ as transA and transB say, op(A) is m×k,
// op(B) is k×n and C is m×n. lda, ldb and ldc are the row strides of A, B
// and C as stored. With beta == 0, C is not read (NaNs in C do not
// propagate); with alpha == 0 or k == 0, A and B are not read.
//
// Sgemm panics, like gonum's BLAS, when a size or stride is negative or too
// small or a slice is too short for the shape it is given.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemm(use(), 0, transA, transB, m, n, k, 1, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc)
}

// SgemmReduce computes C = alpha·Σ_s op(A_s)·op(B_s) + beta·C over s < batch,
// where A_s starts at a[s*strideA] and B_s at b[s*strideB] and each has the
// shape and stride Sgemm would give it. The sum over s is accumulated in
// registers, so this is the way to form a weight gradient summed over the
// images of a batch (e.g. dW = Σ_n dY_n·cols_nᵀ) without a pass over C per
// image.
func SgemmReduce(transA, transB bool, m, n, k, batch int, alpha float32, a []float32, lda, strideA int, b []float32, ldb, strideB int, beta float32, c []float32, ldc int) {
	sgemm(use(), 0, transA, transB, m, n, k, batch, alpha, a, lda, strideA, b, ldb, strideB, beta, c, ldc)
}

// sgemm validates its arguments and runs the GEMM on kernels ks. nv is the
// tile width (in 16-lane vectors) the AVX-512 tile table picks for the
// whole GEMM (0: chosen here from m and n); it fixes the k blocking, so that
// the blocks of a split GEMM, and every kernel set, sum in the same order as
// the whole on AVX-512.
func sgemm(ks *kernelSet, nv int, transA, transB bool, m, n, k, batch int, alpha float32, a []float32, lda, sta int, b []float32, ldb, stb int, beta float32, c []float32, ldc int) {
	checkGemm(transA, transB, m, n, k, batch, a, lda, sta, b, ldb, stb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if nv == 0 {
		nv = canonShape(m, n)
	}
	if alpha == 0 || k == 0 || batch == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	switch {
	case !transB:
		rsa, csa := lda, 1
		if transA {
			rsa, csa = 1, lda
		}
		gemmBcast(ks, nv, m, n, k, batch, alpha, a, rsa, csa, sta, b, ldb, stb, beta, c, ldc)
	case !transA && k >= dotMinK:
		gemmDot(ks, m, n, k, batch, alpha, a, lda, sta, b, ldb, stb, beta, c, ldc)
	default:
		rsa, csa := lda, 1
		if transA {
			rsa, csa = 1, lda
		}
		gemmPacked(ks, nv, m, n, k, batch, alpha, a, rsa, csa, sta, b, ldb, stb, beta, c, ldc)
	}
}

// dotMinK is the shortest k for which A·Bᵀ uses the dot kernel; below it the
// horizontal sums would cost more than packing a panel of Bᵀ.
const dotMinK = 32

// checkGemm panics with a message naming the bad argument.
func checkGemm(transA, transB bool, m, n, k, batch int, a []float32, lda, sta int, b []float32, ldb, stb int, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 || batch < 0 {
		panic(fmt.Sprintf("kernels: Sgemm: negative size m=%d n=%d k=%d batch=%d", m, n, k, batch))
	}
	rowsA, colsA := m, k
	if transA {
		rowsA, colsA = k, m
	}
	rowsB, colsB := k, n
	if transB {
		rowsB, colsB = n, k
	}
	if lda < max(1, colsA) {
		panic(fmt.Sprintf("kernels: Sgemm: lda = %d, want ≥ %d", lda, max(1, colsA)))
	}
	if ldb < max(1, colsB) {
		panic(fmt.Sprintf("kernels: Sgemm: ldb = %d, want ≥ %d", ldb, max(1, colsB)))
	}
	if ldc < max(1, n) {
		panic(fmt.Sprintf("kernels: Sgemm: ldc = %d, want ≥ %d", ldc, max(1, n)))
	}
	if sta < 0 || stb < 0 {
		panic(fmt.Sprintf("kernels: Sgemm: negative batch stride strideA=%d strideB=%d", sta, stb))
	}
	if need := extent(rowsA, colsA, lda, batch, sta); len(a) < need {
		panic(fmt.Sprintf("kernels: Sgemm: len(a) = %d, want ≥ %d", len(a), need))
	}
	if need := extent(rowsB, colsB, ldb, batch, stb); len(b) < need {
		panic(fmt.Sprintf("kernels: Sgemm: len(b) = %d, want ≥ %d", len(b), need))
	}
	if need := extent(m, n, ldc, 1, 0); len(c) < need {
		panic(fmt.Sprintf("kernels: Sgemm: len(c) = %d, want ≥ %d", len(c), need))
	}
}

// extent is the number of elements a batch of rows×cols matrices with row
// stride ld and batch stride st spans.
func extent(rows, cols, ld, batch, st int) int {
	if rows == 0 || cols == 0 || batch == 0 {
		return 0
	}
	return (batch-1)*st + (rows-1)*ld + cols
}

// scaleC sets C = beta·C, writing zeros (not reading C) when beta == 0.
func scaleC(m, n int, beta float32, c []float32, ldc int) {
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		if beta != 1 {
			for j := range row {
				row[j] *= beta
			}
		}
	}
}

// laneMask has the low n bits set (n ≤ 64).
func laneMask(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(n) - 1
}

// split divides n into parts as equal as possible, none larger than most,
// and returns the number of parts; part i has size base+1 for i < extra and
// base otherwise.
func split(n, most int) (parts, base, extra int) {
	parts = (n + most - 1) / most
	return parts, n / parts, n % parts
}

// canonShape is the broadcast tile width the AVX-512 kernels use for an m×n
// output; it sets the k blocking on every kernel set.
func canonShape(m, n int) int { return bcastShape(canonMaxMR, 16, m, n) }

// tileShape is the broadcast tile width kernel set ks uses for an m×n
// output whose canonical width is nv.
func (ks *kernelSet) tileShape(nv, m, n int) int {
	if ks.lanes == 16 { // the AVX-512 tiling (the pure-Go set uses it too)
		return nv
	}
	return bcastShape(ks.maxMR, ks.lanes, m, n)
}

// bcastShape picks the broadcast tile width (in 16-lane vectors) for an
// m×n output from a table of tile heights (maxMR[nv-1] rows for nv
// vectors) on registers of the given lanes, using a small cost model of
// the core: per k step a tile of mr rows and nv vectors costs the largest
// of its FMA throughput (two per cycle), the FMA latency (four cycles per
// dependent accumulator) and its loads (about two and a half per cycle),
// plus a fixed loop overhead and a share of the epilogue.
func bcastShape(maxMR []int, lanes, m, n int) int {
	best, bestCost := 1, 0.0
	for nv := 1; nv <= len(maxMR); nv++ {
		tiles, base, extra := split(m, maxMR[nv-1])
		panels := (n + 16*nv - 1) / (16 * nv)
		cost := float64(float64(extra)*tileCost(base+1, nv*16/lanes)) + float64(float64(tiles-extra)*tileCost(base, nv*16/lanes))
		cost *= float64(panels)
		if nv == 1 || cost < bestCost {
			best, bestCost = nv, cost
		}
	}
	return best
}

// tileCost is the modelled cycles per k step of a broadcast tile of mr
// rows and nr vector registers.
func tileCost(mr, nr int) float64 {
	if mr == 0 {
		return 0
	}
	fma := float64(mr*nr) / 2
	loads := float64(nr+mr) / 2.5
	return max(fma, 4, loads) + 1 + float64(float64(mr*nr)/4)
}

// gemmBcast runs C = alpha·Σ_s A_s·B_s + beta·C with A read through strides
// (rsa, csa) (so A or Aᵀ) and B row-major, on broadcast tiles.
//
// Blocking: the reduction (batch × k) is cut into depth blocks whose B
// panel fits in L1, and the columns into chunks whose B block (depth ×
// chunk) fits in L2; within a chunk each row tile sweeps all its panels in
// one kernel call, so its A sliver stays in L1. C is accumulated across
// depth blocks (beta applies to the first only).
func gemmBcast(ks *kernelSet, nv, m, n, k, batch int, alpha float32, a []float32, rsa, csa, sta int, b []float32, ldb, stb int, beta float32, c []float32, ldc int) {
	depth := max(1, panelBytes/(4*16*nv)) // B rows one AVX-512 panel keeps in L1
	nv = ks.tileShape(nv, m, n)
	width := 16 * nv
	tiles, base, extra := split(m, ks.maxMR[nv-1])
	nbc, kc := batch, k // segments and rows per segment in one block
	if k >= depth {
		nbc, kc = 1, depth
	} else {
		nbc = max(1, depth/k)
	}
	for s0 := 0; s0 < batch; s0 += nbc {
		nb := min(nbc, batch-s0)
		for k0 := 0; k0 < k; k0 += kc {
			kb := min(kc, k-k0)
			bet := beta
			if s0 > 0 || k0 > 0 {
				bet = 1
			}
			aoff, boff := s0*sta+k0*csa, s0*stb+k0*ldb
			nc := max(1, chunkBytes/(4*nb*kb*width)) * width
			for j0 := 0; j0 < n; j0 += nc {
				cols := min(nc, n-j0)
				full, rem := cols/width, cols%width
				i0 := 0
				for t := range tiles {
					mr := base
					if t < extra {
						mr++
					}
					if full > 0 {
						ks.bcast(mr, nv, full, kb, nb, a, aoff+i0*rsa, rsa, csa, sta, b, boff+j0, ldb, stb, c, i0*ldc+j0, ldc, alpha, bet, laneMask(width))
					}
					if rem > 0 {
						j := j0 + full*width
						ks.bcast(mr, (rem+15)/16, 1, kb, nb, a, aoff+i0*rsa, rsa, csa, sta, b, boff+j, ldb, stb, c, i0*ldc+j, ldc, alpha, bet, laneMask(rem))
					}
					i0 += mr
				}
			}
		}
	}
}

// Cache budgets of the blocking, tuned on Zen 5 (48 KiB L1, 1 MiB L2; see
// PERFLOG.md): the B panel of one depth block, and the B block of one
// column chunk.
const (
	panelBytes = 32 << 10
	chunkBytes = 384 << 10
)

// gemmDot runs C = alpha·Σ_s A_s·B_sᵀ + beta·C with both A and B row-major
// (contiguous along k) on dot-product tiles.
func gemmDot(ks *kernelSet, m, n, k, batch int, alpha float32, a []float32, lda, sta int, b []float32, ldb, stb int, beta float32, c []float32, ldc int) {
	mt, mb, mx := split(m, ks.dotMR)
	nt, nb, nx := split(n, ks.dotNR)
	j0 := 0
	for tj := range nt {
		nr := nb
		if tj < nx {
			nr++
		}
		i0 := 0
		for ti := range mt {
			mr := mb
			if ti < mx {
				mr++
			}
			ks.dot(mr, nr, k, batch, a, i0*lda, lda, sta, b, j0*ldb, ldb, stb, c, i0*ldc+j0, ldc, alpha, beta)
			i0 += mr
		}
		j0 += nr
	}
}

// packK is the depth of the B panel gemmPacked packs on the stack.
const packK = 128

// gemmPacked runs C = alpha·Σ_s op(A_s)·B_sᵀ + beta·C (A read through
// strides) by packing panels of B_sᵀ, packK deep and up to 64 wide, into a
// stack buffer and running the broadcast tiles on them.
func gemmPacked(ks *kernelSet, nv, m, n, k, batch int, alpha float32, a []float32, rsa, csa, sta int, b []float32, ldb, stb int, beta float32, c []float32, ldc int) {
	var buf [packK * 64]float32
	nv = ks.tileShape(nv, m, n)
	width := 16 * nv
	tiles, base, extra := split(m, ks.maxMR[nv-1])
	for s := range batch {
		for k0 := 0; k0 < k; k0 += packK {
			kc := min(packK, k-k0)
			bet := beta
			if s > 0 || k0 > 0 {
				bet = 1
			}
			for j0 := 0; j0 < n; j0 += width {
				nr := min(width, n-j0)
				pv := (nr + 15) / 16
				packBT(buf[:kc*width], b[s*stb+j0*ldb+k0:], ldb, kc, nr, width)
				i0 := 0
				for t := range tiles {
					mr := base
					if t < extra {
						mr++
					}
					ks.bcast(mr, pv, 1, kc, 1, a, s*sta+i0*rsa+k0*csa, rsa, csa, 0, buf[:], 0, width, 0, c, i0*ldc+j0, ldc, alpha, bet, laneMask(nr))
					i0 += mr
				}
			}
		}
	}
}

// packBT writes dst[p*width+j] = b[j*ldb+p] for p < kc, j < nr.
func packBT(dst, b []float32, ldb, kc, nr, width int) {
	for j := range nr {
		row := b[j*ldb : j*ldb+kc]
		for p, v := range row {
			dst[p*width+j] = v
		}
	}
}
