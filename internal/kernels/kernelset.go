package kernels

import "math/bits"

// kernelSet is one implementation of the GEMM micro-kernels: the AVX-512
// assembly or the pure-Go fallback. The implementation used by the exported
// functions is chosen once at package initialisation (native); tests run
// both.
type kernelSet struct {
	name  string
	asm   bool   // assembly kernels; otherwise pure Go
	maxMR [4]int // tallest broadcast tile with 1..4 vectors of 16 lanes
}

// generic is the pure-Go implementation. It uses the same tiling as the
// AVX-512 kernels so that both paths sum in the same order per tile.
var generic = &kernelSet{name: "go", maxMR: [4]int{14, 14, 9, 6}}

// native is the fastest implementation this CPU runs.
var native = pickNative()

// Name reports which GEMM kernels this process uses: "avx512" or "go".
func Name() string { return native.name }

// bcast computes np consecutive mr-row, pv-vector broadcast tiles (see
// genBcast512 in gen/main.go): C[i][j] = alpha·Σ_s Σ_p
// A_s[i*rsa+p*csa]·B_s[p*ldb+j] + beta·C[i][j] for the lanes j set in mask
// of each 16·pv-wide panel.
func (ks *kernelSet) bcast(mr, pv, np, k, nb int, a []float32, aoff, rsa, csa, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32, mask uint64) {
	if ks.asm {
		bcastAsm(mr, pv, np, k, nb, a, aoff, rsa, csa, sta, b, boff, ldb, stb, c, coff, ldc, alpha, beta, mask)
		return
	}
	for q := range np {
		off := 16 * pv * q
		bcastGo(mr, k, nb, a, aoff, rsa, csa, sta, b, boff+off, ldb, stb, c, coff+off, ldc, alpha, beta, bits.Len64(mask))
	}
}

// dot computes an mr×nr tile of C = alpha·Σ_s A_s·B_sᵀ + beta·C, with rows of
// A and B contiguous along k.
func (ks *kernelSet) dot(mr, nr, k, nb int, a []float32, aoff, lda, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32) {
	if ks.asm {
		dotAsm(mr, nr, k, nb, a, aoff, lda, sta, b, boff, ldb, stb, c, coff, ldc, alpha, beta)
		return
	}
	dotGo(mr, nr, k, nb, a, aoff, lda, sta, b, boff, ldb, stb, c, coff, ldc, alpha, beta)
}

// bcastGo is the pure-Go broadcast tile for the first nr columns.
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
				row := b[bo+p*ldb : bo+p*ldb+nr]
				for j, bv := range row {
					sum[j] += av * bv
				}
			}
		}
		storeRow(c[coff+i*ldc:coff+i*ldc+nr], sum, alpha, beta)
	}
}

// dotGo is the pure-Go dot tile; it keeps four partial sums per element, as
// the vector kernel keeps sixteen, to limit rounding over long k.
func dotGo(mr, nr, k, nb int, a []float32, aoff, lda, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32) {
	var acc [dotNRMax]float32
	for i := range mr {
		sum := acc[:nr]
		for j := range nr {
			var s0, s1, s2, s3 float32
			for s := range nb {
				ar := a[aoff+s*sta+i*lda:][:k]
				br := b[boff+s*stb+j*ldb:][:k]
				p := 0
				for ; p+4 <= k; p += 4 {
					s0 += ar[p] * br[p]
					s1 += ar[p+1] * br[p+1]
					s2 += ar[p+2] * br[p+2]
					s3 += ar[p+3] * br[p+3]
				}
				for ; p < k; p++ {
					s0 += ar[p] * br[p]
				}
			}
			sum[j] = (s0 + s1) + (s2 + s3)
		}
		storeRow(c[coff+i*ldc:coff+i*ldc+nr], sum, alpha, beta)
	}
}

// storeRow sets dst = alpha·sum + beta·dst, not reading dst when beta == 0.
func storeRow(dst, sum []float32, alpha, beta float32) {
	sum = sum[:len(dst)]
	if beta == 0 {
		for j := range dst {
			dst[j] = alpha * sum[j]
		}
		return
	}
	for j := range dst {
		dst[j] = alpha*sum[j] + beta*dst[j]
	}
}

// Tile limits of the dot kernels.
const (
	dotMR    = 4
	dotNR    = 6
	dotNRMax = dotNR
)
