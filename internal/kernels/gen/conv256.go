package main

import (
	"bytes"
	"fmt"
)

// convLoops writes the loops over (c, i, j, oy) of im2col256 and
// col2im256 around row, which handles one row of ow floats (R12) between
// the image row at AX and the column matrix row at cols: R10 walks the
// image rows (c, i) from the argument image, R8 is an image row in bytes,
// and cols steps by ow floats a row, as the column matrix's rows are
// consecutive. setup runs once before the loops.
func convLoops(s *bytes.Buffer, image, cols string, setup, row func()) {
	p(s, "MOVQ %s, R10", image)
	p(s, "MOVQ w+32(FP), R8")
	p(s, "SHLQ $2, R8")
	p(s, "MOVQ ow+64(FP), R12")
	// Bytes from the row after a plane's first kh rows to the next plane.
	p(s, "MOVQ h+24(FP), DX")
	p(s, "SUBQ kh+40(FP), DX")
	p(s, "IMULQ R8, DX")
	setup()
	p(s, "MOVQ c+16(FP), R14")
	p(s, "TESTQ R14, R14")
	p(s, "JZ done")
	s.WriteString("plane:\n")
	p(s, "MOVQ kh+40(FP), R15")
	s.WriteString("krow:\n")
	p(s, "MOVQ R10, R11") // (c, i, j = 0)
	p(s, "MOVQ kw+48(FP), BX")
	s.WriteString("kcol:\n")
	p(s, "MOVQ R11, AX")
	p(s, "MOVQ oh+56(FP), CX")
	s.WriteString("orow:\n")
	row()
	s.WriteString("rowdone:\n")
	p(s, "LEAQ (%s)(R12*4), %s", cols, cols)
	p(s, "ADDQ R8, AX")
	p(s, "DECQ CX")
	p(s, "JNZ orow")
	p(s, "ADDQ $4, R11")
	p(s, "DECQ BX")
	p(s, "JNZ kcol")
	p(s, "ADDQ R8, R10")
	p(s, "DECQ R15")
	p(s, "JNZ krow")
	p(s, "ADDQ DX, R10")
	p(s, "DECQ R14")
	p(s, "JNZ plane")
	s.WriteString("done:\n")
	p(s, "VZEROUPPER")
	p(s, "RET")
}

// genIm2col256 writes im2col256x{v}, the AVX2 im2col: for each kernel
// offset (c, i, j) in order, the oh rows of ow floats starting at
// src[c][i][j] (row stride w) go to consecutive floats of dst, v floats a
// step (YMM for 8, XMM for 4) with an overlapping last step (ow ≥ v).
func genIm2col256(s, d *bytes.Buffer, v int) {
	name := fmt.Sprintf("im2col256x%d", v)
	im2colHeader(s, d, name)
	reg := "Y0"
	if v == 4 {
		reg = "X0"
	}
	convLoops(s, "src+8(FP)", "DI", func() {
		p(s, "MOVQ dst+0(FP), DI")
		p(s, "MOVQ R12, R13")
		p(s, "SUBQ $%d, R13", v) // start of a row's last step
	}, func() {
		p(s, "XORQ R9, R9")
		s.WriteString("step:\n")
		p(s, "VMOVUPS (AX)(R9*4), %s", reg)
		p(s, "VMOVUPS %s, (DI)(R9*4)", reg)
		overlapStep(s, v, "R13")
	})
}

// im2colHeader declares the im2col kernel name in d and opens its text in
// s: func name(dst, src *float32, c, h, w, kh, kw, oh, ow int).
func im2colHeader(s, d *bytes.Buffer, name string) {
	fmt.Fprintf(d, "//go:noescape\nfunc %s(dst, src *float32, c, h, w, kh, kw, oh, ow int)\n\n", name)
	fmt.Fprintf(s, "\n// func %s(dst, src *float32, c, h, w, kh, kw, oh, ow int)\n", name)
	fmt.Fprintf(s, "TEXT ·%s(SB), NOSPLIT, $0-72\n", name)
}

// genIm2col256Rows writes im2col256r{n}, the AVX2 im2col for rows of
// max(8, 8n+1) ≤ ow ≤ 8n+8 floats: each row is n steps of 8 floats and an
// overlapping last step at ow−8, written out without a step loop.
func genIm2col256Rows(s, d *bytes.Buffer, n int) {
	name := fmt.Sprintf("im2col256r%d", n)
	im2colHeader(s, d, name)
	convLoops(s, "src+8(FP)", "DI", func() {
		p(s, "MOVQ dst+0(FP), DI")
		p(s, "LEAQ -32(R12*4), R13") // byte offset of a row's last step
	}, func() {
		for q := 0; q < n; q++ {
			p(s, "VMOVUPS %d(AX), Y%d", 32*q, q)
		}
		p(s, "VMOVUPS (AX)(R13*1), Y%d", n)
		for q := 0; q < n; q++ {
			p(s, "VMOVUPS Y%d, %d(DI)", q, 32*q)
		}
		p(s, "VMOVUPS Y%d, (DI)(R13*1)", n)
	})
}

// genCol2im256 writes col2im256, the AVX2 col2im: for each kernel offset
// (c, i, j) in order and each of its oh rows, dx[c][oy+i][j : j+ow] +=
// cols[(c, i, j)][oy][0 : ow], 8 floats a step, then 4, then one at a time.
// Every dx element thus adds its contributions in the order of (i, j), as
// the pure-Go col2im does; the caller zeroes dx first.
func genCol2im256(s, d *bytes.Buffer) {
	fmt.Fprintf(d, "//go:noescape\nfunc col2im256(dx, cols *float32, c, h, w, kh, kw, oh, ow int)\n\n")
	fmt.Fprintf(s, "\n// func col2im256(dx, cols *float32, c, h, w, kh, kw, oh, ow int)\n")
	fmt.Fprintf(s, "TEXT ·col2im256(SB), NOSPLIT, $0-72\n")
	convLoops(s, "dx+0(FP)", "SI", func() {
		p(s, "MOVQ cols+8(FP), SI")
		p(s, "MOVQ R12, R13")
		p(s, "ANDQ $-8, R13") // end of the 8-float steps
	}, func() {
		p(s, "XORQ R9, R9")
		p(s, "CMPQ R9, R13")
		p(s, "JGE four")
		s.WriteString("eight:\n")
		p(s, "VMOVUPS (AX)(R9*4), Y0")
		p(s, "VADDPS (SI)(R9*4), Y0, Y0")
		p(s, "VMOVUPS Y0, (AX)(R9*4)")
		p(s, "ADDQ $8, R9")
		p(s, "CMPQ R9, R13")
		p(s, "JLT eight")
		s.WriteString("four:\n")
		p(s, "LEAQ 4(R9), DI")
		p(s, "CMPQ DI, R12")
		p(s, "JGT one")
		p(s, "VMOVUPS (AX)(R9*4), X0")
		p(s, "VADDPS (SI)(R9*4), X0, X0")
		p(s, "VMOVUPS X0, (AX)(R9*4)")
		p(s, "MOVQ DI, R9")
		s.WriteString("one:\n")
		p(s, "CMPQ R9, R12")
		p(s, "JGE rowdone")
		p(s, "VMOVSS (AX)(R9*4), X0")
		p(s, "VADDSS (SI)(R9*4), X0, X0")
		p(s, "VMOVSS X0, (AX)(R9*4)")
		p(s, "INCQ R9")
		p(s, "JMP one")
	})
}

// genTranspose256 writes transpose8x256, the AVX2 form of transpose16x512:
// bm×bn blocks of 8×8 floats, dst[j][i] = src[i][j], each block loaded as 8
// rows and transposed in registers (32-bit interleave, 64-bit shuffle,
// 128-bit permute).
func genTranspose256(s, d *bytes.Buffer) {
	fmt.Fprintf(d, "//go:noescape\nfunc transpose8x256(dst, src *float32, bm, bn, lds, ldd int)\n\n")
	fmt.Fprintf(s, "\n// func transpose8x256(dst, src *float32, bm, bn, lds, ldd int)\n")
	transposeBlocks(s, "transpose8x256", 8, "Y", func() int {
		// t[2q], t[2q+1] = low and high 32-bit interleaves of rows 2q, 2q+1.
		for q := 0; q < 4; q++ {
			p(s, "VUNPCKLPS Y%d, Y%d, Y%d", 2*q+1, 2*q, 8+2*q)
			p(s, "VUNPCKHPS Y%d, Y%d, Y%d", 2*q+1, 2*q, 8+2*q+1)
		}
		// u: columns c and c+4 of four rows: from t of rows 0–3 (u0..u3) and
		// rows 4–7 (u4..u7).
		for g := 0; g < 2; g++ {
			t0, t1, t2, t3 := 8+4*g, 9+4*g, 10+4*g, 11+4*g
			p(s, "VSHUFPS $0x44, Y%d, Y%d, Y%d", t2, t0, 4*g)
			p(s, "VSHUFPS $0xee, Y%d, Y%d, Y%d", t2, t0, 4*g+1)
			p(s, "VSHUFPS $0x44, Y%d, Y%d, Y%d", t3, t1, 4*g+2)
			p(s, "VSHUFPS $0xee, Y%d, Y%d, Y%d", t3, t1, 4*g+3)
		}
		// Column c < 4 is the low halves of u[c] and u[c+4], column c+4 the high.
		for c := 0; c < 4; c++ {
			p(s, "VPERM2F128 $0x20, Y%d, Y%d, Y%d", c+4, c, 8+c)
			p(s, "VPERM2F128 $0x31, Y%d, Y%d, Y%d", c+4, c, 12+c)
		}
		return 8 // columns in Y8..Y15
	})
}
