package main

import (
	"bytes"
	"fmt"
)

// The arm64 NEON kernels compute the tiles of the AVX-512 ones in the same
// order per output element: a 16-lane vector is four 4-lane registers, each
// k step one VFMLA (fused, single rounding) per register. NEON has no lane
// masks, so the broadcast kernels take whole panels only; the Go driver
// runs a partial panel on the pure-Go tile, which gives the same bits. The
// dot, pooling, im2col, col2im and transpose kernels are in neon_dot.go,
// neon_pool.go and neon_conv.go. Go's assembler has no vector FADD, FMUL or
// FCMGT, nor the scalar FADDP: they are emitted as WORDs (fadd4s and the
// others below), each with the instruction in a comment.

// bcastMaxMRNEON[nv] is the tallest NEON broadcast tile with nv 16-lane
// vectors: 4nv·mr accumulators, 4nv B registers and two broadcast
// registers fit in the 32 vector registers.
var bcastMaxMRNEON = [3]int{0, 6, 2}

// fmul4s encodes FMUL Vd.4S, Vn.4S, Vm.4S.
func fmul4s(d, n, m int) string {
	return fmt.Sprintf("WORD $0x%08x // FMUL V%d.4S, V%d.4S, V%d.4S", 0x6E20DC00|m<<16|n<<5|d, d, n, m)
}

// fadd4s encodes FADD Vd.4S, Vn.4S, Vm.4S: Vd = Vn + Vm, Vn's NaN first.
func fadd4s(d, n, m int) string {
	return fmt.Sprintf("WORD $0x%08x // FADD V%d.4S, V%d.4S, V%d.4S", 0x4E20D400|m<<16|n<<5|d, d, n, m)
}

// fcmgt4s encodes FCMGT Vd.4S, Vn.4S, Vm.4S: all ones in the lanes where
// Vn > Vm, zeros elsewhere (and where either is NaN), as Go's > gives.
func fcmgt4s(d, n, m int) string {
	return fmt.Sprintf("WORD $0x%08x // FCMGT V%d.4S, V%d.4S, V%d.4S", 0x6EA0E400|m<<16|n<<5|d, d, n, m)
}

// faddp2s encodes the scalar FADDP Sd, Vn.2S: Sd = Vn.S[0] + Vn.S[1].
func faddp2s(d, n int) string {
	return fmt.Sprintf("WORD $0x%08x // FADDP S%d, V%d.2S", 0x7E30D800|n<<5|d, d, n)
}

// vlist is the register list of n consecutive vector registers from v.
func vlist(v, n int) string {
	var b bytes.Buffer
	b.WriteString("[")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "V%d.S4", v+i)
	}
	b.WriteString("]")
	return b.String()
}

// genNEON writes every NEON kernel and its dispatcher.
func genNEON(s, d *bytes.Buffer) {
	writeHeaders(s, d, "arm64")
	for nv := 1; nv < len(bcastMaxMRNEON); nv++ {
		for mr := 1; mr <= bcastMaxMRNEON[nv]; mr++ {
			genBcastNEON(s, d, mr, nv)
		}
	}
	fmt.Fprintf(d, "// bcastNEONAsm runs the NEON broadcast kernel with mr rows and nv 16-lane\n// vectors on np whole panels (a switch of direct calls, like bcast512).\n")
	fmt.Fprintf(d, "func bcastNEONAsm(mr, nv, k, nb int, a *float32, rsa, csa, sta int, b *float32, ldb, stb int, c *float32, ldc int, alpha, beta float32, np int) {\n")
	fmt.Fprintf(d, "switch nv<<8 | mr {\n")
	for nv := 1; nv < len(bcastMaxMRNEON); nv++ {
		for mr := 1; mr <= bcastMaxMRNEON[nv]; mr++ {
			fmt.Fprintf(d, "case %d<<8 | %d: bcastNEONx%dx%d(k, nb, a, rsa, csa, sta, b, ldb, stb, c, ldc, alpha, beta, np)\n", nv, mr, nv, mr)
		}
	}
	fmt.Fprintf(d, "default: panic(\"kernels: no NEON broadcast kernel for this tile\")\n}\n}\n\n")
	fmt.Fprintf(d, "// maxMRNEON[nv-1] is the tallest NEON broadcast tile with nv 16-lane vectors.\nvar maxMRNEON = []int{%d, %d}\n\n", bcastMaxMRNEON[1], bcastMaxMRNEON[2])
	genDotsNEON(s, d)
	genPoolNEON(s, d, 8)
	genPoolNEON(s, d, 4)
	genPoolBackNEON(s, d, 8)
	genPoolBackNEON(s, d, 4)
	genPoolMaskNEON(s)
	for _, v := range []int{16, 8, 4} {
		genIm2colNEON(s, d, v)
	}
	genCol2imNEON(s, d)
	genTransposeNEON(s, d)
}

// genBcastNEON writes the NEON form of genBcast512's kernel for np whole
// panels of mr rows × 16nv columns: C = alpha·Σ_s Σ_p A·B + beta·C.
func genBcastNEON(s, d *bytes.Buffer, mr, nv int) {
	name := fmt.Sprintf("bcastNEONx%dx%d", nv, mr)
	fmt.Fprintf(d, "//go:noescape\nfunc %s(k, nb int, a *float32, rsa, csa, sta int, b *float32, ldb, stb int, c *float32, ldc int, alpha, beta float32, np int)\n\n", name)
	fmt.Fprintf(s, "\n// func %s(k, nb int, a *float32, rsa, csa, sta int, b *float32, ldb, stb int, c *float32, ldc int, alpha, beta float32, np int)\n", name)
	fmt.Fprintf(s, "TEXT ·%s(SB), NOSPLIT, $0-104\n", name)
	bcastNEONArgs(s)
	s.WriteString("panel:\n")
	for r := 0; r < mr; r++ {
		for v := 0; v < 4*nv; v++ {
			a := bcastNEONAcc(r, v, nv)
			p(s, "VEOR V%d.B16, V%d.B16, V%d.B16", a, a, a)
		}
	}
	p(s, "MOVD R2, R23")       // segment's A
	p(s, "MOVD b+48(FP), R24") // segment's B
	p(s, "ADD R1, R24, R24")   // this panel's columns
	p(s, "MOVD nb+8(FP), R11")
	p(s, "CBZ R11, done")
	s.WriteString("seg:\n")
	p(s, "MOVD R23, %s", bcastNEONRows[0])
	for r := 1; r < mr; r++ {
		p(s, "ADD R3, %s, %s", bcastNEONRows[r-1], bcastNEONRows[r])
	}
	p(s, "MOVD R24, R22")
	p(s, "MOVD k+0(FP), R12")
	p(s, "CBZ R12, next")
	bcastNEONLoop(s, mr, nv)
	s.WriteString("next:\n")
	p(s, "ADD R5, R23, R23")
	p(s, "ADD R8, R24, R24")
	p(s, "SUBS $1, R11, R11")
	p(s, "BNE seg")
	bcastNEONStore(s, mr, nv)
}

// bcastNEONRows are the registers that walk the rows of a segment's A.
var bcastNEONRows = []string{"R13", "R14", "R15", "R19", "R20", "R21"}

// bcastNEONAcc is the accumulator of row r, register v of a tile of nv
// 16-lane vectors (4nv registers) per row.
func bcastNEONAcc(r, v, nv int) int { return r*4*nv + v }

// bcastNEONBBase is the first of the 4nv registers that hold a k step of B
// (and C in the epilogue) in a tile of nv 16-lane vectors.
func bcastNEONBBase(nv int) int {
	if nv == 2 {
		return 16
	}
	return 24
}

// bcastNEONArgs emits the loads of the panel count, A and the strides (in
// bytes), and zeroes the panel offset R1.
func bcastNEONArgs(s *bytes.Buffer) {
	p(s, "MOVD np+96(FP), R0")
	p(s, "MOVD $0, R1") // panel offset in bytes
	p(s, "MOVD a+16(FP), R2")
	p(s, "MOVD rsa+24(FP), R3")
	p(s, "LSL $2, R3, R3")
	p(s, "MOVD csa+32(FP), R4")
	p(s, "LSL $2, R4, R4")
	p(s, "MOVD sta+40(FP), R5")
	p(s, "LSL $2, R5, R5")
	p(s, "MOVD ldb+56(FP), R7")
	p(s, "LSL $2, R7, R7")
	p(s, "MOVD stb+64(FP), R8")
	p(s, "LSL $2, R8, R8")
	p(s, "MOVD ldc+80(FP), R10")
	p(s, "LSL $2, R10, R10")
}

// bcastNEONLoop emits a segment's k loop: per step, a row of B, then for
// each row of A one broadcast and 4nv FMAs.
func bcastNEONLoop(s *bytes.Buffer, mr, nv int) {
	bBase := bcastNEONBBase(nv)
	s.WriteString("loop:\n")
	if nv == 1 {
		p(s, "VLD1 (R22), %s", vlist(bBase, 4))
	} else {
		p(s, "ADD $64, R22, R25")
		p(s, "VLD1 (R22), %s", vlist(bBase, 4))
		p(s, "VLD1 (R25), %s", vlist(bBase+4, 4))
	}
	p(s, "ADD R7, R22, R22")
	for r := 0; r < mr; r++ {
		t := 28 + r%2
		p(s, "VLD1R (%s), [V%d.S4]", bcastNEONRows[r], t)
		p(s, "ADD R4, %s, %s", bcastNEONRows[r], bcastNEONRows[r])
		for v := 0; v < 4*nv; v++ {
			p(s, "VFMLA V%d.S4, V%d.S4, V%d.S4", t, bBase+v, bcastNEONAcc(r, v, nv))
		}
	}
	p(s, "SUBS $1, R12, R12")
	p(s, "BNE loop")
}

// bcastNEONStore emits the panel's epilogue, with beta or, when beta is
// ±0, without reading C, and closes the panel loop.
func bcastNEONStore(s *bytes.Buffer, mr, nv int) {
	s.WriteString("done:\n")
	p(s, "FMOVS alpha+88(FP), F28")
	p(s, "VDUP V28.S[0], V30.S4")
	p(s, "FMOVS beta+92(FP), F28")
	p(s, "VDUP V28.S[0], V31.S4")
	p(s, "MOVD c+72(FP), R9")
	p(s, "ADD R1, R9, R9")
	p(s, "MOVWU beta+92(FP), R6")
	p(s, "ANDW $0x7fffffff, R6, R6")
	p(s, "CBZW R6, storeonly")
	bcastNEONStoreRows(s, mr, nv, true)
	s.WriteString("storeonly:\n")
	bcastNEONStoreRows(s, mr, nv, false)
	s.WriteString("nextpanel:\n")
	p(s, "ADD $%d, R1, R1", 64*nv)
	p(s, "SUBS $1, R0, R0")
	p(s, "BNE panel")
	p(s, "RET")
}

// bcastNEONStoreRows emits the stores of the tile to C, as the AVX-512
// kernel makes them: t = beta·C, then C = alpha·acc + t in one FMA, or
// C = alpha·acc without beta.
func bcastNEONStoreRows(s *bytes.Buffer, mr, nv int, withBeta bool) {
	for r := 0; r < mr; r++ {
		for g := 0; g < nv; g++ {
			addr := "R9"
			if g > 0 {
				p(s, "ADD $64, R9, R25")
				addr = "R25"
			}
			c := bcastNEONBBase(nv) + 4*g
			if withBeta {
				p(s, "VLD1 (%s), %s", addr, vlist(c, 4))
				for v := 0; v < 4; v++ {
					p(s, "%s", fmul4s(c+v, c+v, 31))
					p(s, "VFMLA V30.S4, V%d.S4, V%d.S4", bcastNEONAcc(r, 4*g+v, nv), c+v)
				}
			} else {
				for v := 0; v < 4; v++ {
					p(s, "%s", fmul4s(c+v, bcastNEONAcc(r, 4*g+v, nv), 30))
				}
			}
			p(s, "VST1 %s, (%s)", vlist(c, 4), addr)
		}
		if r < mr-1 {
			p(s, "ADD R10, R9, R9")
		}
	}
	p(s, "B nextpanel")
}
