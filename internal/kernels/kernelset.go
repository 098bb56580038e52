package kernels

import (
	"fmt"
	"math/bits"
	"os"
	"strings"
)

// isa names the instruction set a kernel set runs on.
type isa int

const (
	isaGo isa = iota
	isaAVX2
	isaAVX512
	isaNEON
)

// kernelSet is one implementation of the kernels: AVX-512 or AVX2 assembly
// on amd64, NEON assembly on arm64, or the pure-Go reference. Every set's
// GEMM sums each output element's products in the same order with
// single-rounding fused multiply-adds, so all of them give the same bits;
// they differ only in speed and in the tile shapes they cover. The set used by the exported
// functions is chosen once at package initialisation (native); tests run
// every set the CPU has.
type kernelSet struct {
	name  string
	isa   isa
	maxMR []int // tallest broadcast tile with 1, 2, … vectors of 16 lanes
	dotMR int   // tallest dot tile
	dotNR int   // widest dot tile
	lanes int   // floats per vector register, for the tile cost model
}

// canonMaxMR is the AVX-512 tile table. The k blocking of a GEMM is derived
// from the tile width this table picks, whatever set runs it, so that every
// set accumulates the same blocks in the same order.
var canonMaxMR = []int{14, 14, 9, 6}

// generic is the pure-Go implementation. It uses the AVX-512 tiling.
var generic = &kernelSet{name: "go", isa: isaGo, maxMR: canonMaxMR, dotMR: 4, dotNR: 6, lanes: 16}

// native is the set the exported functions use: the fastest this CPU runs,
// or the one GTSTORM_KERNELS names. nativeErr says why GTSTORM_KERNELS
// could not be honoured; native is then nil and every kernel call panics
// with that error.
var native, nativeErr = selectSet(os.Getenv(EnvKernels), available())

// EnvKernels is the environment variable that forces a kernel set.
const EnvKernels = "GTSTORM_KERNELS"

// Name reports which kernel set this process uses: "avx512", "avx2",
// "neon" or "go" ("" when GTSTORM_KERNELS names a set this CPU lacks; see
// Check).
func Name() string {
	if native == nil {
		return ""
	}
	return native.name
}

// Check reports whether the kernel set GTSTORM_KERNELS asks for can run
// here: nil when it can (or the variable is unset), else a one-line error
// naming the sets this CPU has.
func Check() error { return nativeErr }

// Available lists the kernel sets this CPU runs, fastest first; the last is
// always "go".
func Available() []string {
	var names []string
	for _, ks := range available() {
		names = append(names, ks.name)
	}
	return names
}

// selectSet returns the set env names from sets (fastest first), or the
// first when env is empty or "auto".
func selectSet(env string, sets []*kernelSet) (*kernelSet, error) {
	env = strings.TrimSpace(env)
	if env == "" || env == "auto" {
		return sets[0], nil
	}
	var names []string
	for _, ks := range sets {
		if ks.name == env {
			return ks, nil
		}
		names = append(names, ks.name)
	}
	switch env {
	case "avx512", "avx2", "neon", "go":
		return nil, fmt.Errorf("%s=%s: this CPU runs only %s", EnvKernels, env, strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("%s=%q: want auto, avx512, avx2, neon or go (this CPU runs %s)", EnvKernels, env, strings.Join(names, ", "))
}

// use returns native, or panics when GTSTORM_KERNELS could not be honoured.
func use() *kernelSet {
	if native == nil {
		panic("kernels: " + nativeErr.Error())
	}
	return native
}

// bcast computes np consecutive mr-row, pv-vector broadcast tiles (see
// genBcast512 in gen/main.go): C[i][j] = alpha·Σ_s Σ_p
// A_s[i*rsa+p*csa]·B_s[p*ldb+j] + beta·C[i][j] for the lanes j set in mask
// of each 16·pv-wide panel.
func (ks *kernelSet) bcast(mr, pv, np, k, nb int, a []float32, aoff, rsa, csa, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32, mask uint64) {
	switch ks.isa {
	case isaAVX512:
		bcastAVX512(mr, pv, np, k, nb, a, aoff, rsa, csa, sta, b, boff, ldb, stb, c, coff, ldc, alpha, beta, mask)
	case isaAVX2:
		bcastAVX2(mr, pv, np, k, nb, a, aoff, rsa, csa, sta, b, boff, ldb, stb, c, coff, ldc, alpha, beta, mask)
	case isaNEON:
		if bits.Len64(mask) == 16*pv { // NEON has no lane masks: whole panels only
			bcastNEON(mr, pv, np, k, nb, a, aoff, rsa, csa, sta, b, boff, ldb, stb, c, coff, ldc, alpha, beta)
			return
		}
		fallthrough // a partial panel runs on the pure-Go tile, with the same bits
	default:
		for q := range np {
			off := 16 * pv * q
			bcastGo(mr, k, nb, a, aoff, rsa, csa, sta, b, boff+off, ldb, stb, c, coff+off, ldc, alpha, beta, bits.Len64(mask))
		}
	}
}

// dot computes an mr×nr tile of C = alpha·Σ_s A_s·B_sᵀ + beta·C, with rows of
// A and B contiguous along k.
func (ks *kernelSet) dot(mr, nr, k, nb int, a []float32, aoff, lda, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32) {
	switch ks.isa {
	case isaAVX512:
		dotAVX512(mr, nr, k, nb, a, aoff, lda, sta, b, boff, ldb, stb, c, coff, ldc, alpha, beta)
	case isaAVX2:
		dotAVX2(mr, nr, k, nb, a, aoff, lda, sta, b, boff, ldb, stb, c, coff, ldc, alpha, beta)
	case isaNEON:
		dotNEON(mr, nr, k, nb, a, aoff, lda, sta, b, boff, ldb, stb, c, coff, ldc, alpha, beta)
	default:
		dotGo(mr, nr, k, nb, a, aoff, lda, sta, b, boff, ldb, stb, c, coff, ldc, alpha, beta)
	}
}
