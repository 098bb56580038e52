package main

import (
	"bytes"
	"fmt"
)

// genPool256 writes maxpool256x{v}: the AVX2 form of maxpool512 with v = 8
// (YMM) or 4 (XMM) outputs per step. A row needs ow ≥ v: its last step
// starts at ow − v and overlaps the one before, rewriting the same values,
// so no step is partial and nothing is masked.
//
//	y[p][oy][ox] = t > lo ? t : lo, t = m + bias[p mod nc]
//
// where m is the first maximum (by >) of the window at (2oy, 2ox) in the
// order (0,0), (0,1), (1,0), (1,1), whose position goes to code; that is
// VMAXPS(t, lo), exactly as maxpool512 computes it.
func genPool256(s, d *bytes.Buffer, v int) {
	name := fmt.Sprintf("maxpool256x%d", v)
	fmt.Fprintf(d, "//go:noescape\nfunc %s(y *float32, code *uint8, x *float32, planes, h, w int, bias *float32, nc int, lo float32)\n\n", name)
	fmt.Fprintf(s, "\n// func %s(y *float32, code *uint8, x *float32, planes, h, w int, bias *float32, nc int, lo float32)\n", name)
	fmt.Fprintf(s, "TEXT ·%s(SB), NOSPLIT, $0-68\n", name)
	r := "Y"
	if v == 4 {
		r = "X"
	}
	R := func(i int) string { return fmt.Sprintf("%s%d", r, i) }
	p(s, "MOVQ y+0(FP), DI")
	p(s, "MOVQ code+8(FP), R11")
	p(s, "MOVQ x+16(FP), SI")
	p(s, "MOVQ w+40(FP), R8")
	p(s, "SHLQ $2, R8") // input row bytes
	p(s, "MOVQ w+40(FP), R12")
	p(s, "SHRQ $1, R12") // ow
	p(s, "MOVQ R12, R10")
	p(s, "SUBQ $%d, R10", v) // start of a row's last step
	p(s, "MOVQ planes+24(FP), R14")
	p(s, "TESTQ R14, R14")
	p(s, "JZ done")
	p(s, "XORQ R15, R15") // channel
	p(s, "MOVQ bias+48(FP), BX")
	p(s, "VBROADCASTSS lo+64(FP), %s", R(11))
	for c := 1; c <= 3; c++ {
		p(s, "MOVL $%d, AX", c)
		p(s, "MOVQ AX, X%d", 11+c)
		p(s, "VPBROADCASTD X%d, %s", 11+c, R(11+c)) // codes 1, 2, 3 in 12, 13, 14
	}
	s.WriteString("plane:\n")
	p(s, "VXORPS %s, %s, %s", R(10), R(10), R(10))
	p(s, "TESTQ BX, BX")
	p(s, "JZ nobias")
	p(s, "VBROADCASTSS (BX)(R15*4), %s", R(10))
	s.WriteString("nobias:\n")
	p(s, "MOVQ h+32(FP), R13")
	p(s, "SHRQ $1, R13") // oh
	s.WriteString("row:\n")
	p(s, "XORQ R9, R9") // ox0
	s.WriteString("step:\n")
	p(s, "LEAQ (SI)(R9*8), AX") // &x[2oy][2ox0]
	p(s, "VMOVUPS (AX), %s", R(0))
	p(s, "VMOVUPS %d(AX), %s", 8*v/2*1, R(1))
	p(s, "ADDQ R8, AX")
	p(s, "VMOVUPS (AX), %s", R(2))
	p(s, "VMOVUPS %d(AX), %s", 8*v/2*1, R(3))
	// Even and odd lanes of each row pair (in order: VSHUFPS works within
	// 128-bit lanes, VPERMPD puts the 64-bit halves back in order).
	p(s, "VSHUFPS $0x88, %s, %s, %s", R(1), R(0), R(4)) // a
	p(s, "VSHUFPS $0xdd, %s, %s, %s", R(1), R(0), R(5)) // b
	p(s, "VSHUFPS $0x88, %s, %s, %s", R(3), R(2), R(6)) // c
	p(s, "VSHUFPS $0xdd, %s, %s, %s", R(3), R(2), R(7)) // d
	if v == 8 {
		for i := 4; i <= 7; i++ {
			p(s, "VPERMPD $0xd8, %s, %s", R(i), R(i))
		}
	}
	p(s, "VPXOR %s, %s, %s", R(8), R(8), R(8)) // code 0
	for i, c := range []int{5, 6, 7} {
		p(s, "VCMPPS $0x1e, %s, %s, %s", R(4), R(c), R(9)) // candidate > best
		p(s, "VBLENDVPS %s, %s, %s, %s", R(9), R(c), R(4), R(4))
		p(s, "VBLENDVPS %s, %s, %s, %s", R(9), R(12+i), R(8), R(8))
	}
	p(s, "VADDPS %s, %s, %s", R(10), R(4), R(4))
	p(s, "VMAXPS %s, %s, %s", R(11), R(4), R(4))
	p(s, "VMOVUPS %s, (DI)(R9*4)", R(4))
	// Codes: 32-bit lanes to bytes.
	p(s, "VPACKSSDW %s, %s, %s", R(8), R(8), R(8))
	p(s, "VPACKUSWB %s, %s, %s", R(8), R(8), R(8))
	if v == 8 {
		p(s, "VEXTRACTI128 $1, Y8, X9")
		p(s, "VPUNPCKLDQ X9, X8, X8")
		p(s, "MOVQ X8, (R11)(R9*1)")
	} else {
		p(s, "MOVQ X8, AX")
		p(s, "MOVL AX, (R11)(R9*1)")
	}
	p(s, "ADDQ $%d, R9", v)
	p(s, "CMPQ R9, R12")
	p(s, "JGE rowdone")
	p(s, "CMPQ R9, R10")
	p(s, "JLE step")
	p(s, "MOVQ R10, R9") // the last step overlaps the one before
	p(s, "JMP step")
	s.WriteString("rowdone:\n")
	p(s, "LEAQ (DI)(R12*4), DI")
	p(s, "ADDQ R12, R11")
	p(s, "LEAQ (SI)(R8*2), SI")
	p(s, "DECQ R13")
	p(s, "JNZ row")
	p(s, "TESTQ $1, h+32(FP)")
	p(s, "JZ evenh")
	p(s, "ADDQ R8, SI") // skip an odd last row
	s.WriteString("evenh:\n")
	p(s, "INCQ R15")
	p(s, "CMPQ R15, nc+56(FP)")
	p(s, "JLT samec")
	p(s, "XORQ R15, R15")
	s.WriteString("samec:\n")
	p(s, "DECQ R14")
	p(s, "JNZ plane")
	s.WriteString("done:\n")
	p(s, "VZEROUPPER")
	p(s, "RET")
}
