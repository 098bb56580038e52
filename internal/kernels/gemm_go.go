package kernels

// The pure-Go GEMM tiles: the reference the vector kernels are tested
// against bit for bit. They compute each output element exactly as the
// AVX-512 kernels of gen/main.go do: the same chain of fused multiply-adds
// (fma32) in the same order, the same horizontal sum, the same epilogue.

// bcastGo is the broadcast tile for the first nr (≤ 64) columns: every
// C[i][j] accumulates A_s[i,p]·B_s[p,j] over s and then p, in one chain,
// and is stored as storeRow does.
func bcastGo(mr, k, nb int, a []float32, aoff, rsa, csa, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32, nr int) {
	var acc [64]float32
	for i := range mr {
		sum := acc[:nr]
		clear(sum)
		for s := range nb {
			ao := aoff + s*sta + i*rsa
			bo := boff + s*stb
			for p := range k {
				av := a[ao+p*csa]
				axpy32(sum, b[bo+p*ldb:bo+p*ldb+nr], av)
			}
		}
		storeRow(c[coff+i*ldc:coff+i*ldc+nr], sum, alpha, beta)
	}
}

// storeRow sets dst = alpha·sum + beta·dst as the broadcast kernels do:
// beta·dst rounded, then alpha·sum added in one fused multiply-add; with
// beta = ±0, dst = alpha·sum and dst is not read.
func storeRow(dst, sum []float32, alpha, beta float32) {
	sum = sum[:len(dst)]
	if beta == 0 {
		for j := range dst {
			dst[j] = alpha * sum[j]
		}
		return
	}
	for j := range dst {
		t := float32(beta * dst[j]) // the conversion forbids fusing
		dst[j] = fma32(alpha, sum[j], t)
	}
}

// dotLanes is the number of partial sums the dot kernels keep per element:
// the 16 lanes of one AVX-512 register (two of AVX2, four of NEON).
const dotLanes = 16

// dotGo is the dot tile: element (i, j) keeps 16 partial sums, lane l
// taking the products at positions p ≡ l (mod 16) of every segment (a
// segment's last, partial chunk adds exact zeros in its dead lanes, as the
// vector kernels' masked loads do), and folds them as the vector kernels'
// horizontal sum does.
func dotGo(mr, nr, k, nb int, a []float32, aoff, lda, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32) {
	for i := range mr {
		for j := range nr {
			var lane [dotLanes]float32
			for s := range nb {
				ar := a[aoff+s*sta+i*lda:][:k]
				br := b[boff+s*stb+j*ldb:][:k]
				p := 0
				for ; p+dotLanes <= k; p += dotLanes {
					fmaLanes(&lane, ar[p:], br[p:])
				}
				if p < k {
					for l := range lane {
						var x, y float32
						if p+l < k {
							x, y = ar[p+l], br[p+l]
						}
						lane[l] = fma32(x, y, lane[l])
					}
				}
			}
			r := float32(foldLanes(&lane) * alpha) // the conversion forbids fusing
			dst := &c[coff+i*ldc+j]
			if beta != 0 {
				r = fma32(beta, *dst, r)
			}
			*dst = r
		}
	}
}

// foldLanes sums 16 partial sums in the vector kernels' order: lanes l and
// l+8, then l and l+4, then l and l+2, then the last two.
func foldLanes(x *[dotLanes]float32) float32 {
	var h [8]float32
	for l := range h {
		h[l] = x[l] + x[l+8]
	}
	q0, q1, q2, q3 := h[0]+h[4], h[1]+h[5], h[2]+h[6], h[3]+h[7]
	return (q0 + q2) + (q1 + q3)
}
