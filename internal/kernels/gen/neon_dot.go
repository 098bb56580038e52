package main

import (
	"bytes"
	"fmt"
)

// The NEON dot tiles: 2 × 3 (row, column) pairs, each with 16 partial sums
// in four 4-lane accumulators (24 registers), plus two half rows of A and
// two half rows of B (four registers each).
const (
	dotMRNEON = 2
	dotNRNEON = 3
)

// genDotsNEON writes every NEON dot kernel and their dispatcher.
func genDotsNEON(s, d *bytes.Buffer) {
	fmt.Fprintf(d, "// The NEON dot tiles are at most dotMRNEON × dotNRNEON.\nconst (\ndotMRNEON = %d\ndotNRNEON = %d\n)\n\n", dotMRNEON, dotNRNEON)
	for mr := 1; mr <= dotMRNEON; mr++ {
		for nr := 1; nr <= dotNRNEON; nr++ {
			genDotNEON(s, d, mr, nr)
		}
	}
	fmt.Fprintf(d, "// dotNEONAsm runs the NEON dot kernel on an mr×nr tile (a switch of direct\n// calls, like bcast512).\n")
	fmt.Fprintf(d, "func dotNEONAsm(mr, nr, kv, tail, nb int, a *float32, lda, sta int, b *float32, ldb, stb int, c *float32, ldc int, alpha, beta float32) {\n")
	fmt.Fprintf(d, "switch mr<<8 | nr {\n")
	for mr := 1; mr <= dotMRNEON; mr++ {
		for nr := 1; nr <= dotNRNEON; nr++ {
			fmt.Fprintf(d, "case %d<<8 | %d: dotNEONx%dx%d(kv, tail, nb, a, lda, sta, b, ldb, stb, c, ldc, alpha, beta)\n", mr, nr, mr, nr)
		}
	}
	fmt.Fprintf(d, "default: panic(\"kernels: no NEON dot kernel for this tile\")\n}\n}\n\n")
}

// genDotNEON writes the NEON form of genDot512's kernel: each (i, j) pair
// keeps 16 partial sums in four 4-lane accumulators (lanes 0–3, 4–7, 8–11
// and 12–15 of the AVX-512 kernel's one), lane l taking the products at
// k ≡ l (mod 16) of every segment, folded at the end in the AVX-512
// kernel's order. k = 16·kv + tail. NEON has no masked loads: the tail of
// each row of a segment is copied into a 16-float row of a stack buffer
// whose other lanes stay zero, and that buffer takes one more k step, so
// every lane takes the same FMA as under the AVX-512 kernel's zero-masked
// loads (0·0 added).
func genDotNEON(s, d *bytes.Buffer, mr, nr int) {
	name := fmt.Sprintf("dotNEONx%dx%d", mr, nr)
	fmt.Fprintf(d, "//go:noescape\nfunc %s(kv, tail, nb int, a *float32, lda, sta int, b *float32, ldb, stb int, c *float32, ldc int, alpha, beta float32)\n\n", name)
	fmt.Fprintf(s, "\n// func %s(kv, tail, nb int, a *float32, lda, sta int, b *float32, ldb, stb int, c *float32, ldc int, alpha, beta float32)\n", name)
	// The frame holds the tail buffer, one 64-byte row per row of A and B,
	// at 16(RSP) (0(RSP) is the saved link register).
	fmt.Fprintf(s, "TEXT ·%s(SB), NOSPLIT, $%d-96\n", name, 16+64*(dotMRNEON+dotNRNEON))
	rowReg := dotNEONRowRegs[:mr+nr]
	for i := 0; i < mr; i++ {
		for j := 0; j < nr; j++ {
			for q := 0; q < 4; q++ {
				v := dotNEONAcc(i, j, q, nr)
				p(s, "VEOR V%d.B16, V%d.B16, V%d.B16", v, v, v)
			}
		}
	}
	dotNEONArgs(s)
	s.WriteString("seg:\n")
	p(s, "MOVD R2, %s", rowReg[0])
	for i := 1; i < mr; i++ {
		p(s, "ADD R3, %s, %s", rowReg[i-1], rowReg[i])
	}
	p(s, "MOVD R6, %s", rowReg[mr])
	for j := 1; j < nr; j++ {
		p(s, "ADD R7, %s, %s", rowReg[mr+j-1], rowReg[mr+j])
	}
	p(s, "MOVD kv+0(FP), R11")
	p(s, "CBZ R11, tail")
	s.WriteString("loop:\n")
	dotNEONStep(s, mr, nr)
	p(s, "SUBS $1, R11, R11")
	p(s, "BNE loop")
	dotNEONTail(s, mr, nr)
	s.WriteString("next:\n")
	p(s, "ADD R5, R2, R2")
	p(s, "ADD R8, R6, R6")
	p(s, "SUBS $1, R9, R9")
	p(s, "BNE seg")
	s.WriteString("done:\n")
	dotNEONFold(s, mr, nr)
	dotNEONStore(s, mr, nr)
}

// dotNEONRowRegs are the registers that walk the rows of a segment: the
// mr rows of A, then the nr rows of B.
var dotNEONRowRegs = []string{"R13", "R14", "R15", "R16", "R17"}

// dotNEONAcc is accumulator q (lanes 4q to 4q+3) of the pair (i, j) of a
// tile nr columns wide.
func dotNEONAcc(i, j, q, nr int) int { return (i*nr+j)*4 + q }

// dotNEONBufRow is the byte offset in the tail buffer of the row walked by
// dotNEONRowRegs[r] in a tile of mr rows.
func dotNEONBufRow(r, mr int) int {
	if r < mr {
		return 64 * r
	}
	return 64 * (dotMRNEON + r - mr)
}

// dotNEONArgs emits the loads of tail, A, B and their strides (in bytes),
// zeroes the tail buffer (R10) when there is a tail, and returns through
// done when there are no segments.
func dotNEONArgs(s *bytes.Buffer) {
	p(s, "MOVD tail+8(FP), R1")
	p(s, "MOVD a+24(FP), R2")
	p(s, "MOVD lda+32(FP), R3")
	p(s, "LSL $2, R3, R3")
	p(s, "MOVD sta+40(FP), R5")
	p(s, "LSL $2, R5, R5")
	p(s, "MOVD b+48(FP), R6")
	p(s, "MOVD ldb+56(FP), R7")
	p(s, "LSL $2, R7, R7")
	p(s, "MOVD stb+64(FP), R8")
	p(s, "LSL $2, R8, R8")
	p(s, "ADD $16, RSP, R10") // the tail buffer
	p(s, "CBZ R1, nozero")
	p(s, "MOVD R10, R24")
	for r := 0; r < dotMRNEON+dotNRNEON; r++ { // V0–V3 are zero accumulators here
		p(s, "VST1.P %s, 64(R24)", vlist(0, 4))
	}
	s.WriteString("nozero:\n")
	p(s, "MOVD nb+16(FP), R9")
	p(s, "CBZ R9, done")
}

// dotNEONStep emits one k step of 16: two halves of 8 lanes, each loading
// half a row of A per i and of B per j (post-incrementing the row
// pointers), then one FMA per accumulator of that half.
func dotNEONStep(s *bytes.Buffer, mr, nr int) {
	aReg := func(i int) int { return 24 + 2*i } // two registers: half a k step
	for h := 0; h < 2; h++ {
		for i := 0; i < mr; i++ {
			p(s, "VLD1.P 32(%s), %s", dotNEONRowRegs[i], vlist(aReg(i), 2))
		}
		for j := 0; j < nr; j++ {
			t := 28 + 2*(j%2)
			p(s, "VLD1.P 32(%s), %s", dotNEONRowRegs[mr+j], vlist(t, 2))
			for q := 0; q < 2; q++ {
				for i := 0; i < mr; i++ {
					p(s, "VFMLA V%d.S4, V%d.S4, V%d.S4", t+q, aReg(i)+q, dotNEONAcc(i, j, 2*h+q, nr))
				}
			}
		}
	}
}

// dotNEONTail emits a segment's tail: the tail floats of every row (its
// pointer is there now) are copied into the buffer, one float of each row
// per pass, and the step is taken there.
func dotNEONTail(s *bytes.Buffer, mr, nr int) {
	rowReg := dotNEONRowRegs[:mr+nr]
	tmp := []string{"R19", "R20", "R21", "R22", "R23"}
	s.WriteString("tail:\n")
	p(s, "CBZ R1, next")
	p(s, "MOVD R1, R12")
	p(s, "MOVD R10, R24")
	s.WriteString("copy:\n")
	for r := range rowReg {
		p(s, "MOVWU.P 4(%s), %s", rowReg[r], tmp[r])
	}
	for r := range rowReg {
		p(s, "MOVW %s, %d(R24)", tmp[r], dotNEONBufRow(r, mr))
	}
	p(s, "ADD $4, R24, R24")
	p(s, "SUBS $1, R12, R12")
	p(s, "BNE copy")
	p(s, "MOVD R10, %s", rowReg[0])
	for r := 1; r < len(rowReg); r++ {
		p(s, "ADD $%d, R10, %s", dotNEONBufRow(r, mr), rowReg[r])
	}
	dotNEONStep(s, mr, nr)
}

// dotNEONFold emits the fold of each pair's 16 lanes into
// S(dotNEONAcc(i, j, 0, nr)), times alpha, and loads beta into F25.
func dotNEONFold(s *bytes.Buffer, mr, nr int) {
	p(s, "FMOVS alpha+88(FP), F24")
	p(s, "FMOVS beta+92(FP), F25")
	for i := 0; i < mr; i++ {
		for j := 0; j < nr; j++ {
			a := dotNEONAcc(i, j, 0, nr)
			fold16NEON(s, a)
			p(s, "FMULS F24, F%d, F%d", a, a)
		}
	}
}

// dotNEONStore emits the stores of the folded sums, as the AVX-512 kernel
// makes them: C = sum + beta·C in one FMA, or C = sum when beta is ±0 (C
// is not read).
func dotNEONStore(s *bytes.Buffer, mr, nr int) {
	p(s, "MOVD c+72(FP), R4")
	p(s, "MOVD ldc+80(FP), R11")
	p(s, "LSL $2, R11, R11")
	p(s, "MOVWU beta+92(FP), R12")
	p(s, "ANDW $0x7fffffff, R12, R12")
	p(s, "CBZW R12, storeonly")
	for i := 0; i < mr; i++ {
		for j := 0; j < nr; j++ {
			r := dotNEONAcc(i, j, 0, nr)
			p(s, "FMOVS %d(R4), F26", 4*j)
			p(s, "FMADDS F25, F%d, F26, F%d", r, r) // C·beta + sum
			p(s, "FMOVS F%d, %d(R4)", r, 4*j)
		}
		if i < mr-1 {
			p(s, "ADD R11, R4, R4")
		}
	}
	p(s, "RET")
	s.WriteString("storeonly:\n")
	for i := 0; i < mr; i++ {
		for j := 0; j < nr; j++ {
			p(s, "FMOVS F%d, %d(R4)", dotNEONAcc(i, j, 0, nr), 4*j)
		}
		if i < mr-1 {
			p(s, "ADD R11, R4, R4")
		}
	}
	p(s, "RET")
}

// fold16NEON sums the 16 lanes held in the four registers V(v)…V(v+3)
// (lanes 0–3, 4–7, 8–11, 12–15) into S(v) in genDot512's order: lanes l
// and l+8, then l and l+4, then l and l+2, then the last two. It
// overwrites the four registers.
func fold16NEON(s *bytes.Buffer, v int) {
	p(s, "%s", fadd4s(v, v, v+2))                         // h[l] = x[l] + x[l+8], l < 4
	p(s, "%s", fadd4s(v+1, v+1, v+3))                     // h[l], 4 ≤ l < 8
	p(s, "%s", fadd4s(v, v, v+1))                         // q[l] = h[l] + h[l+4]
	p(s, "VEXT $8, V%d.B16, V%d.B16, V%d.B16", v, v, v+1) // q2, q3, q0, q1
	p(s, "%s", fadd4s(v, v, v+1))                         // q0 + q2, q1 + q3
	p(s, "%s", faddp2s(v, v))                             // (q0 + q2) + (q1 + q3)
}
