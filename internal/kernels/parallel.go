package kernels

import "sync"

// parallelMinFlops is the smallest GEMM (in multiply-adds) SgemmParallel
// splits; below it goroutine hand-off costs more than it saves.
const parallelMinFlops = 1 << 20

// SgemmParallel is Sgemm run by up to workers goroutines, each on its own
// block of rows (or, when C is short and wide, of columns) of C. Every
// element is summed in the same order whatever the number of workers, so
// the result is bit-for-bit that of Sgemm. It allocates a few bytes per
// worker for the goroutines; Sgemm itself allocates nothing.
func SgemmParallel(workers int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	sgemmParallel(use(), workers, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
}

func sgemmParallel(ks *kernelSet, workers int, transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkGemm(transA, transB, m, n, k, 1, a, lda, 0, b, ldb, 0, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	nv := canonShape(m, n)
	if workers <= 1 || m*n*k < parallelMinFlops {
		sgemm(ks, nv, transA, transB, m, n, k, 1, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc)
		return
	}
	// Split the rows into whole tiles, or the columns into whole panels when
	// there are fewer row tiles than workers.
	tnv := ks.tileShape(nv, m, n)
	rowUnit, colUnit := ks.maxMR[tnv-1], 16*tnv
	if transB && !transA {
		rowUnit, colUnit = ks.dotMR, ks.dotNR
	}
	byRows := (m+rowUnit-1)/rowUnit >= workers || (n+colUnit-1)/colUnit < workers
	total, unit := m, rowUnit
	if !byRows {
		total, unit = n, colUnit
	}
	units := (total + unit - 1) / unit
	workers = min(workers, units)
	var wg sync.WaitGroup
	for w := range workers {
		lo := units * w / workers * unit
		hi := min(total, units*(w+1)/workers*unit)
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if byRows {
				aoff := lo * lda
				if transA {
					aoff = lo
				}
				sgemm(ks, nv, transA, transB, hi-lo, n, k, 1, alpha, a[aoff:], lda, 0, b, ldb, 0, beta, c[lo*ldc:], ldc)
				return
			}
			boff := lo
			if transB {
				boff = lo * ldb
			}
			sgemm(ks, nv, transA, transB, m, hi-lo, k, 1, alpha, a, lda, 0, b[boff:], ldb, 0, beta, c[lo:], ldc)
		}()
	}
	wg.Wait()
}
