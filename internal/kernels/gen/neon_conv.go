package main

import (
	"bytes"
	"fmt"
)

// convLoopsNEON writes the loops over (c, i, j, oy) of im2colNEONx{v} and
// col2imNEONx16 around row, which handles one row of ow floats (R12) between
// the image row at R0 and the column matrix row at the register cols: R10
// walks the image rows (c, i) from the argument image, R8 is an image row
// in bytes, and cols steps by ow floats a row, as the column matrix's rows
// are consecutive. setup runs once before the loops.
func convLoopsNEON(s *bytes.Buffer, image, cols string, setup, row func()) {
	p(s, "MOVD %s, R10", image)
	p(s, "MOVD w+32(FP), R8")
	p(s, "LSL $2, R8, R8")
	p(s, "MOVD ow+64(FP), R12")
	// Bytes from the row after a plane's first kh rows to the next plane.
	p(s, "MOVD h+24(FP), R3")
	p(s, "MOVD kh+40(FP), R4")
	p(s, "SUB R4, R3, R3")
	p(s, "MUL R8, R3, R3")
	setup()
	p(s, "MOVD c+16(FP), R14")
	p(s, "CBZ R14, done")
	s.WriteString("plane:\n")
	p(s, "MOVD kh+40(FP), R15")
	s.WriteString("krow:\n")
	p(s, "MOVD R10, R11") // (c, i, j = 0)
	p(s, "MOVD kw+48(FP), R19")
	s.WriteString("kcol:\n")
	p(s, "MOVD R11, R0")
	p(s, "MOVD oh+56(FP), R20")
	s.WriteString("orow:\n")
	row()
	s.WriteString("rowdone:\n")
	p(s, "ADD R12<<2, %s, %s", cols, cols)
	p(s, "ADD R8, R0, R0")
	p(s, "SUBS $1, R20, R20")
	p(s, "BNE orow")
	p(s, "ADD $4, R11, R11")
	p(s, "SUBS $1, R19, R19")
	p(s, "BNE kcol")
	p(s, "ADD R8, R10, R10")
	p(s, "SUBS $1, R15, R15")
	p(s, "BNE krow")
	p(s, "ADD R3, R10, R10")
	p(s, "SUBS $1, R14, R14")
	p(s, "BNE plane")
	s.WriteString("done:\n")
	p(s, "RET")
}

// genIm2colNEON writes im2colNEONx{v}, the NEON im2col: for each kernel
// offset (c, i, j) in order, the oh rows of ow floats starting at
// src[c][i][j] (row stride w) go to consecutive floats of dst, v = 16, 8
// or 4 floats a step (v/4 registers) with an overlapping last step
// (ow ≥ v).
func genIm2colNEON(s, d *bytes.Buffer, v int) {
	name := fmt.Sprintf("im2colNEONx%d", v)
	im2colHeader(s, d, name)
	convLoopsNEON(s, "src+8(FP)", "R1", func() {
		p(s, "MOVD dst+0(FP), R1")
		p(s, "SUB $%d, R12, R13", v) // start of a row's last step
	}, func() {
		p(s, "MOVD $0, R9")
		s.WriteString("step:\n")
		p(s, "ADD R9<<2, R0, R21")
		p(s, "VLD1 (R21), %s", vlist(0, v/4))
		p(s, "ADD R9<<2, R1, R22")
		p(s, "VST1 %s, (R22)", vlist(0, v/4))
		overlapStepNEON(s, v, "R12", "R13")
	})
}

// genCol2imNEON writes col2imNEONx16, the NEON col2im: for each kernel offset
// (c, i, j) in order and each of its oh rows, dx[c][oy+i][j : j+ow] +=
// cols[(c, i, j)][oy][0 : ow], 16 floats a step, then 4, then one at a
// time. Every dx element thus adds its contributions in the order of
// (i, j), as the pure-Go col2im does; the caller zeroes dx first.
func genCol2imNEON(s, d *bytes.Buffer) {
	fmt.Fprintf(d, "//go:noescape\nfunc col2imNEONx16(dx, cols *float32, c, h, w, kh, kw, oh, ow int)\n\n")
	fmt.Fprintf(s, "\n// func col2imNEONx16(dx, cols *float32, c, h, w, kh, kw, oh, ow int)\n")
	fmt.Fprintf(s, "TEXT ·col2imNEONx16(SB), NOSPLIT, $0-72\n")
	convLoopsNEON(s, "dx+0(FP)", "R1", func() {
		p(s, "MOVD cols+8(FP), R1")
	}, func() {
		p(s, "MOVD R0, R21")  // dx
		p(s, "MOVD R1, R22")  // cols
		p(s, "MOVD R12, R23") // floats left
		p(s, "CMP $16, R23")
		p(s, "BLT four")
		s.WriteString("sixteen:\n")
		p(s, "VLD1 (R21), %s", vlist(0, 4))
		p(s, "VLD1.P 64(R22), %s", vlist(4, 4))
		for i := 0; i < 4; i++ {
			p(s, "%s", fadd4s(i, i, 4+i))
		}
		p(s, "VST1.P %s, 64(R21)", vlist(0, 4))
		p(s, "SUB $16, R23, R23")
		p(s, "CMP $16, R23")
		p(s, "BGE sixteen")
		s.WriteString("four:\n")
		p(s, "CMP $4, R23")
		p(s, "BLT one")
		p(s, "VLD1 (R21), [V0.S4]")
		p(s, "VLD1.P 16(R22), [V4.S4]")
		p(s, "%s", fadd4s(0, 0, 4))
		p(s, "VST1.P [V0.S4], 16(R21)")
		p(s, "SUB $4, R23, R23")
		p(s, "B four")
		s.WriteString("one:\n")
		p(s, "CBZ R23, rowdone")
		p(s, "FMOVS (R21), F0")
		p(s, "FMOVS.P 4(R22), F4")
		p(s, "FADDS F4, F0, F0") // dx + cols
		p(s, "FMOVS.P F0, 4(R21)")
		p(s, "SUB $1, R23, R23")
		p(s, "B one")
	})
}

// genTransposeNEON writes transposeNEONx8, the NEON form of transpose8x256:
// bm×bn blocks of 8×8 floats, dst[j][i] = src[i][j], each block loaded as
// 8 rows of two registers and transposed as four 4×4 blocks in registers
// (32-bit TRN1/TRN2, then 64-bit TRN1/TRN2).
func genTransposeNEON(s, d *bytes.Buffer) {
	fmt.Fprintf(d, "//go:noescape\nfunc transposeNEONx8(dst, src *float32, bm, bn, lds, ldd int)\n\n")
	fmt.Fprintf(s, "\n// func transposeNEONx8(dst, src *float32, bm, bn, lds, ldd int)\n")
	fmt.Fprintf(s, "TEXT ·transposeNEONx8(SB), NOSPLIT, $0-48\n")
	p(s, "MOVD lds+32(FP), R8")
	p(s, "LSL $2, R8, R8")
	p(s, "MOVD ldd+40(FP), R9")
	p(s, "LSL $2, R9, R9")
	p(s, "MOVD src+8(FP), R0")
	p(s, "MOVD dst+0(FP), R1")
	p(s, "MOVD bm+16(FP), R10")
	p(s, "CBZ R10, done")
	p(s, "MOVD bn+24(FP), R11")
	p(s, "CBZ R11, done")
	s.WriteString("brow:\n")
	p(s, "MOVD bn+24(FP), R11")
	p(s, "MOVD R0, R12") // block source
	p(s, "MOVD R1, R13") // block destination
	s.WriteString("bcol:\n")
	p(s, "MOVD R12, R14")
	for r := 0; r < 8; r++ { // row r: columns 0–3 in V(2r), 4–7 in V(2r+1)
		p(s, "VLD1.P (R14)(R8), %s", vlist(2*r, 2))
	}
	// Sub-block (R, C) (rows 4R…, columns 4C…): rows x0…x3 are
	// V(2(4R+k)+C); TRN1/TRN2 of row pairs into t0…t3 at V(16+4(2R+C)).
	for R := 0; R < 2; R++ {
		for C := 0; C < 2; C++ {
			x := func(k int) int { return 2*(4*R+k) + C }
			t := 16 + 4*(2*R+C)
			p(s, "VTRN1 V%d.S4, V%d.S4, V%d.S4", x(1), x(0), t)   // x0[0] x1[0] x0[2] x1[2]
			p(s, "VTRN2 V%d.S4, V%d.S4, V%d.S4", x(1), x(0), t+1) // x0[1] x1[1] x0[3] x1[3]
			p(s, "VTRN1 V%d.S4, V%d.S4, V%d.S4", x(3), x(2), t+2)
			p(s, "VTRN2 V%d.S4, V%d.S4, V%d.S4", x(3), x(2), t+3)
		}
	}
	// Column k of sub-block (R, C) is half R of destination row 4C+k, in
	// V(2(4C+k)+R): TRN1/TRN2 of the 64-bit halves.
	for R := 0; R < 2; R++ {
		for C := 0; C < 2; C++ {
			t := 16 + 4*(2*R+C)
			col := func(k int) int { return 2*(4*C+k) + R }
			p(s, "VTRN1 V%d.D2, V%d.D2, V%d.D2", t+2, t, col(0))
			p(s, "VTRN1 V%d.D2, V%d.D2, V%d.D2", t+3, t+1, col(1))
			p(s, "VTRN2 V%d.D2, V%d.D2, V%d.D2", t+2, t, col(2))
			p(s, "VTRN2 V%d.D2, V%d.D2, V%d.D2", t+3, t+1, col(3))
		}
	}
	p(s, "MOVD R13, R14")
	for j := 0; j < 8; j++ {
		p(s, "VST1.P %s, (R14)(R9)", vlist(2*j, 2))
	}
	p(s, "ADD $32, R12, R12")
	p(s, "ADD R9<<3, R13, R13") // 8 destination rows on
	p(s, "SUBS $1, R11, R11")
	p(s, "BNE bcol")
	p(s, "ADD R8<<3, R0, R0") // 8 source rows on
	p(s, "ADD $32, R1, R1")
	p(s, "SUBS $1, R10, R10")
	p(s, "BNE brow")
	s.WriteString("done:\n")
	p(s, "RET")
}
