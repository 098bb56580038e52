package main

import (
	"bytes"
	"fmt"
)

// The AVX2+FMA kernels (x86-64-v3) compute the same tiles as the AVX-512
// ones, in the same order per output element, with 8-lane YMM registers: a
// 16-lane vector of the AVX-512 kernels is a pair of YMM registers here, so
// the Go driver, its blocking and every element's chain of fused
// multiply-adds are those of the AVX-512 kernels. AVX2 has no mask
// registers: partial panels load lane masks from memory and use VMASKMOVPS,
// which neither reads nor faults on masked-off lanes.

// bcastMaxMR256[nv] is the tallest AVX2 broadcast tile with nv 16-lane
// vectors (2nv YMM registers) per row: 2nv·mr accumulators, 2nv B
// registers and two broadcast registers fit in the 16 YMM registers.
var bcastMaxMR256 = [3]int{0, 6, 2}

// The AVX2 dot tiles: 2 × 3 (row, column) pairs, each with two YMM
// accumulators, plus two A registers and two B registers.
const (
	dotMR256 = 2
	dotNR256 = 3
)

// genAVX2 writes every AVX2 kernel and its dispatchers.
func genAVX2(s, d *bytes.Buffer) {
	writeHeaders(s, d, "amd64")
	for nv := 1; nv < len(bcastMaxMR256); nv++ {
		for mr := 1; mr <= bcastMaxMR256[nv]; mr++ {
			genBcast256(s, d, mr, nv)
		}
	}
	fmt.Fprintf(d, "// bcast256 runs the AVX2 broadcast kernel with mr rows and nv 16-lane vectors\n// (a switch of direct calls, like bcast512).\n")
	fmt.Fprintf(d, "func bcast256(mr, nv, k, nb int, a *float32, rsa, csa, sta int, b *float32, ldb, stb int, c *float32, ldc int, alpha, beta float32, masks *int32, np int) {\n")
	fmt.Fprintf(d, "switch nv<<8 | mr {\n")
	for nv := 1; nv < len(bcastMaxMR256); nv++ {
		for mr := 1; mr <= bcastMaxMR256[nv]; mr++ {
			fmt.Fprintf(d, "case %d<<8 | %d: bcast256x%dx%d(k, nb, a, rsa, csa, sta, b, ldb, stb, c, ldc, alpha, beta, masks, np)\n", nv, mr, nv, mr)
		}
	}
	fmt.Fprintf(d, "default: panic(\"kernels: no AVX2 broadcast kernel for this tile\")\n}\n}\n\n")
	fmt.Fprintf(d, "// maxMR256[nv-1] is the tallest AVX2 broadcast tile with nv 16-lane vectors.\nvar maxMR256 = []int{%d, %d}\n\n", bcastMaxMR256[1], bcastMaxMR256[2])
	fmt.Fprintf(d, "// The AVX2 dot tiles are at most dotMR256 × dotNR256.\nconst (\ndotMR256 = %d\ndotNR256 = %d\n)\n\n", dotMR256, dotNR256)
	for mr := 1; mr <= dotMR256; mr++ {
		for nr := 1; nr <= dotNR256; nr++ {
			genDot256(s, d, mr, nr)
		}
	}
	fmt.Fprintf(d, "// dot256 runs the AVX2 dot kernel on an mr×nr tile (a switch of direct\n// calls, like bcast512).\n")
	fmt.Fprintf(d, "func dot256(mr, nr, kv, nb int, a *float32, lda, sta int, b *float32, ldb, stb int, c *float32, ldc int, alpha, beta float32, tmask *int32) {\n")
	fmt.Fprintf(d, "switch mr<<8 | nr {\n")
	for mr := 1; mr <= dotMR256; mr++ {
		for nr := 1; nr <= dotNR256; nr++ {
			fmt.Fprintf(d, "case %d<<8 | %d: dot256x%dx%d(kv, nb, a, lda, sta, b, ldb, stb, c, ldc, alpha, beta, tmask)\n", mr, nr, mr, nr)
		}
	}
	fmt.Fprintf(d, "default: panic(\"kernels: no AVX2 dot kernel for this tile\")\n}\n}\n\n")
	genPool256(s, d, 8)
	genPool256(s, d, 4)
	genPoolBack256(s, d, 8)
	genPoolBack256(s, d, 4)
	genPoolMask256(s)
	genIm2col256(s, d, 8)
	genIm2col256(s, d, 4)
	for n := 0; n <= 3; n++ {
		genIm2col256Rows(s, d, n)
	}
	genCol2im256(s, d)
	genTranspose256(s, d)
}

// genBcast256 writes the AVX2 form of genBcast512's kernel: np panels of
// mr rows × 16nv columns, C = alpha·Σ_s Σ_p A·B + beta·C. masks is nil for
// whole panels, or points to 16nv int32 lane masks (−1 live, 0 dead) for a
// single partial panel.
func genBcast256(s, d *bytes.Buffer, mr, nv int) {
	name := fmt.Sprintf("bcast256x%dx%d", nv, mr)
	fmt.Fprintf(d, "//go:noescape\nfunc %s(k, nb int, a *float32, rsa, csa, sta int, b *float32, ldb, stb int, c *float32, ldc int, alpha, beta float32, masks *int32, np int)\n\n", name)
	fmt.Fprintf(s, "\n// func %s(k, nb int, a *float32, rsa, csa, sta int, b *float32, ldb, stb int, c *float32, ldc int, alpha, beta float32, masks *int32, np int)\n", name)
	fmt.Fprintf(s, "TEXT ·%s(SB), NOSPLIT, $16-112\n", name)
	ny := 2 * nv // YMM registers per row
	p(s, "MOVQ masks+96(FP), R10")
	bcastPanels(s)
	for r := 0; r < mr; r++ {
		for v := 0; v < ny; v++ {
			a := bcast256Acc(r, v, ny)
			p(s, "VXORPS %s, %s, %s", a, a, a)
		}
	}
	bcastSegments(s)
	bcast256Loops(s, mr, ny)
	bcastNextSegment(s)
	bcast256Store(s, mr, nv)
}

// bcast256Acc names the accumulator of row r, register v of a tile ny YMM
// registers wide.
func bcast256Acc(r, v, ny int) string { return fmt.Sprintf("Y%d", r*ny+v) }

// bcast256BReg names B's register v in a tile ny YMM registers wide.
func bcast256BReg(v, ny int) string { return fmt.Sprintf("Y%d", 14-ny+v) }

// bcast256Loops emits a segment's two k loops, one loading B whole and one,
// taken when masks is not nil (R10), loading its live lanes only.
func bcast256Loops(s *bytes.Buffer, mr, ny int) {
	if mr > 3 {
		p(s, "LEAQ (SI)(R8*1), R9")
	}
	p(s, "MOVQ k+0(FP), CX")
	p(s, "TESTQ CX, CX")
	p(s, "JZ next")
	p(s, "TESTQ R10, R10")
	p(s, "JNZ mloop")
	s.WriteString("loop:\n")
	for v := 0; v < ny; v++ {
		p(s, "VMOVUPS %d(BX), %s", 32*v, bcast256BReg(v, ny))
	}
	bcast256FMAs(s, mr, ny)
	p(s, "JNZ loop")
	p(s, "JMP next")
	s.WriteString("mloop:\n")
	for v := 0; v < ny; v++ {
		p(s, "VMOVDQU %d(R10), %s", 32*v, bcast256BReg(v, ny))
		p(s, "VMASKMOVPS %d(BX), %s, %s", 32*v, bcast256BReg(v, ny), bcast256BReg(v, ny))
	}
	bcast256FMAs(s, mr, ny)
	p(s, "JNZ mloop")
}

// bcast256FMAs emits the FMAs of one k step on the loaded B registers,
// steps A and B on, and counts the step down (setting the flags).
func bcast256FMAs(s *bytes.Buffer, mr, ny int) {
	for r := 0; r < mr; r++ {
		t := "Y15"
		if r%2 == 1 {
			t = "Y14"
		}
		p(s, "VBROADCASTSS %s, %s", rowAddr(r), t)
		for v := 0; v < ny; v++ {
			p(s, "VFMADD231PS %s, %s, %s", t, bcast256BReg(v, ny), bcast256Acc(r, v, ny))
		}
	}
	p(s, "ADDQ AX, SI")
	if mr > 3 {
		p(s, "ADDQ AX, R9")
	}
	p(s, "ADDQ R13, BX")
	p(s, "DECQ CX")
}

// bcast256Store emits the panel's epilogue, choosing among the stores with
// and without beta and lane masks, and closes the panel loop.
func bcast256Store(s *bytes.Buffer, mr, nv int) {
	ny := 2 * nv
	s.WriteString("done:\n")
	p(s, "VBROADCASTSS alpha+88(FP), Y14")
	p(s, "MOVQ c+72(FP), DI")
	p(s, "ADDQ off-16(SP), DI")
	p(s, "MOVQ ldc+80(FP), R8")
	p(s, "SHLQ $2, R8")
	p(s, "MOVL beta+92(FP), AX")
	p(s, "ANDL $0x7fffffff, AX")
	p(s, "JZ storeonly")
	p(s, "VBROADCASTSS beta+92(FP), Y15")
	p(s, "TESTQ R10, R10")
	p(s, "JNZ mbeta")
	bcast256StoreRows(s, mr, ny, false, true)
	s.WriteString("mbeta:\n")
	bcast256StoreRows(s, mr, ny, true, true)
	s.WriteString("storeonly:\n")
	p(s, "TESTQ R10, R10")
	p(s, "JNZ mstore")
	bcast256StoreRows(s, mr, ny, false, false)
	s.WriteString("mstore:\n")
	bcast256StoreRows(s, mr, ny, true, false)
	s.WriteString("nextpanel:\n")
	p(s, "ADDQ $%d, off-16(SP)", 64*nv)
	p(s, "DECQ left-8(SP)")
	p(s, "JNZ panel")
	p(s, "VZEROUPPER")
	p(s, "RET")
}

// bcast256StoreRows emits the stores of the tile to C, as the AVX-512
// kernel makes them (t = beta·C, then C = alpha·acc + t in one FMA, or
// C = alpha·acc without beta), through the lane masks when masked.
func bcast256StoreRows(s *bytes.Buffer, mr, ny int, masked, withBeta bool) {
	for r := 0; r < mr; r++ {
		for v := 0; v < ny; v++ {
			if masked {
				p(s, "VMOVDQU %d(R10), Y13", 32*v)
			}
			if withBeta {
				if masked {
					p(s, "VMASKMOVPS %d(DI), Y13, Y12", 32*v)
				} else {
					p(s, "VMOVUPS %d(DI), Y12", 32*v)
				}
				p(s, "VMULPS Y15, Y12, Y12")
				p(s, "VFMADD231PS Y14, %s, Y12", bcast256Acc(r, v, ny))
			} else {
				p(s, "VMULPS Y14, %s, Y12", bcast256Acc(r, v, ny))
			}
			if masked {
				p(s, "VMASKMOVPS Y12, Y13, %d(DI)", 32*v)
			} else {
				p(s, "VMOVUPS Y12, %d(DI)", 32*v)
			}
		}
		if r < mr-1 {
			p(s, "ADDQ R8, DI")
		}
	}
	p(s, "JMP nextpanel")
}

// fold16 sums 16 lanes held in the YMM registers lo (lanes 0–7) and hi
// (8–15) into dst in genDot512's order: lanes l and l+8, then l and l+4,
// then l and l+2, then the last two; registers t and u are scratch.
func fold16(s *bytes.Buffer, lo, hi string, t, u int, dst string) {
	p(s, "VADDPS %s, %s, Y%d", hi, lo, t)
	p(s, "VEXTRACTF128 $1, Y%d, X%d", t, u)
	p(s, "VADDPS X%d, X%d, X%d", u, t, t)
	p(s, "VPERMILPS $0x4e, X%d, X%d", t, u)
	p(s, "VADDPS X%d, X%d, X%d", u, t, t)
	p(s, "VPERMILPS $0xb1, X%d, X%d", t, u)
	p(s, "VADDSS X%d, X%d, %s", u, t, dst)
}

// genDot256 writes the AVX2 form of genDot512's kernel: each (i, j) pair
// keeps 16 partial sums, in two YMM accumulators (lanes 0–7 and 8–15 of the
// AVX-512 kernel's one), summed horizontally in the AVX-512 kernel's order
// at the end. tmask points to 16 int32 lane masks for the k % 16 tail.
func genDot256(s, d *bytes.Buffer, mr, nr int) {
	name := fmt.Sprintf("dot256x%dx%d", mr, nr)
	fmt.Fprintf(d, "//go:noescape\nfunc %s(kv, nb int, a *float32, lda, sta int, b *float32, ldb, stb int, c *float32, ldc int, alpha, beta float32, tmask *int32)\n\n", name)
	fmt.Fprintf(s, "\n// func %s(kv, nb int, a *float32, lda, sta int, b *float32, ldb, stb int, c *float32, ldc int, alpha, beta float32, tmask *int32)\n", name)
	fmt.Fprintf(s, "TEXT ·%s(SB), NOSPLIT, $0-96\n", name)
	acc := func(i, j, h int) string { return fmt.Sprintf("Y%d", (i*nr+j)*2+h) }
	areg := func(i int) string { return fmt.Sprintf("Y%d", 12+i) }
	aAddr := []string{"(SI)", "(SI)(DX*1)"}
	bAddr := []string{"(DI)", "(DI)(R8*1)", "(DI)(R8*2)"}
	for i := 0; i < mr; i++ {
		for j := 0; j < nr; j++ {
			for h := 0; h < 2; h++ {
				p(s, "VXORPS %s, %s, %s", acc(i, j, h), acc(i, j, h), acc(i, j, h))
			}
		}
	}
	p(s, "MOVQ tmask+88(FP), R12")
	dotSegments(s)
	p(s, "MOVQ kv+0(FP), CX")
	p(s, "TESTQ CX, CX")
	p(s, "JZ tail")
	s.WriteString("loop:\n")
	for h := 0; h < 2; h++ {
		for i := 0; i < mr; i++ {
			p(s, "VMOVUPS %d%s, %s", 32*h, aAddr[i], areg(i))
		}
		for j := 0; j < nr; j++ {
			t := "Y14"
			if j%2 == 1 {
				t = "Y15"
			}
			p(s, "VMOVUPS %d%s, %s", 32*h, bAddr[j], t)
			for i := 0; i < mr; i++ {
				p(s, "VFMADD231PS %s, %s, %s", t, areg(i), acc(i, j, h))
			}
		}
	}
	p(s, "ADDQ $64, SI")
	p(s, "ADDQ $64, DI")
	p(s, "DECQ CX")
	p(s, "JNZ loop")
	s.WriteString("tail:\n")
	p(s, "TESTQ R12, R12")
	p(s, "JZ next")
	// Masked loads zero the dead lanes, as the AVX-512 kernel's zero-masked
	// loads do, so every lane takes the same FMA there.
	for h := 0; h < 2; h++ {
		p(s, "VMOVDQU %d(R12), Y15", 32*h)
		for i := 0; i < mr; i++ {
			p(s, "VMASKMOVPS %d%s, Y15, %s", 32*h, aAddr[i], areg(i))
		}
		for j := 0; j < nr; j++ {
			p(s, "VMASKMOVPS %d%s, Y15, Y14", 32*h, bAddr[j])
			for i := 0; i < mr; i++ {
				p(s, "VFMADD231PS Y14, %s, %s", areg(i), acc(i, j, h))
			}
		}
	}
	dotNextSegment(s)
	// Horizontal sums in genDot512's order: lanes l and l+8, then l and
	// l+4, then l and l+2, then l and l+1.
	dotEpilogue(s, "X12", "X13")
	res := func(i, j int) string { return "X" + acc(i, j, 0)[1:] }
	for i := 0; i < mr; i++ {
		for j := 0; j < nr; j++ {
			fold16(s, acc(i, j, 0), acc(i, j, 1), 14, 15, res(i, j))
			p(s, "VMULSS X12, %s, %s", res(i, j), res(i, j))
		}
	}
	dotStore(s, mr, nr, res, "X14", "X13")
}
