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
	R := poolRegs(v)
	pool256Args(s, v)
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
	pool256LoadWindows(s, v)
	pool256Max(s, v)
	pool256StoreCodes(s, v)
	overlapStep(s, v, "R10")
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
	poolNextPlane(s, "nc+56(FP)")
}

// poolKind is the kind of vector register of the v-output pooling
// kernels: Y for v = 8, X for v = 4.
func poolKind(v int) string {
	if v == 4 {
		return "X"
	}
	return "Y"
}

// poolRegs returns the function that names vector register i of the
// v-output pooling kernels.
func poolRegs(v int) func(i int) string {
	r := poolKind(v)
	return func(i int) string { return fmt.Sprintf("%s%d", r, i) }
}

// pool256Args emits maxpool256x{v}'s argument loads and constants, and
// returns through done when there are no planes.
func pool256Args(s *bytes.Buffer, v int) {
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
	p(s, "VBROADCASTSS lo+64(FP), %s11", poolKind(v))
	poolCodes(s, poolKind(v))
}

// pool256LoadWindows emits the loads of a step's v windows, split into the
// window positions (0,0), (0,1), (1,0) and (1,1) in registers 4 to 7.
func pool256LoadWindows(s *bytes.Buffer, v int) {
	R := poolRegs(v)
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
}

// pool256Max emits the first maximum of each window and its code, then
// stores y = max(m + bias, lo).
func pool256Max(s *bytes.Buffer, v int) {
	R := poolRegs(v)
	p(s, "VPXOR %s, %s, %s", R(8), R(8), R(8)) // code 0
	for i, c := range []int{5, 6, 7} {
		p(s, "VCMPPS $0x1e, %s, %s, %s", R(4), R(c), R(9)) // candidate > best
		p(s, "VBLENDVPS %s, %s, %s, %s", R(9), R(c), R(4), R(4))
		p(s, "VBLENDVPS %s, %s, %s, %s", R(9), R(12+i), R(8), R(8))
	}
	p(s, "VADDPS %s, %s, %s", R(10), R(4), R(4))
	p(s, "VMAXPS %s, %s, %s", R(11), R(4), R(4))
	p(s, "VMOVUPS %s, (DI)(R9*4)", R(4))
}

// pool256StoreCodes emits the store of a step's v codes, packed from 32-bit
// lanes to bytes.
func pool256StoreCodes(s *bytes.Buffer, v int) {
	R := poolRegs(v)
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
}

// genPoolBack256 writes maxpoolBack256x{v}, the AVX2 form of
// maxpoolBack512: dx gets g = dy (gated by y > 0 when y is not nil) at the
// window position code names and zeros elsewhere, v outputs a step with an
// overlapping last step (ow ≥ v). When sums is not nil, Σ g of plane p goes
// to sums[p mod nc] in float64, summed as maxpoolBack512 sums it: in 16
// lanes (two YMM accumulators), output ox of a row to lane ox mod 16, the
// dead lanes of a row's last chunk adding +0, folded as the dot kernels
// fold. That pass masks its loads, so it never reads past a row.
func genPoolBack256(s, d *bytes.Buffer, v int) {
	name := fmt.Sprintf("maxpoolBack256x%d", v)
	fmt.Fprintf(d, "//go:noescape\nfunc %s(dx, dy, y *float32, code *uint8, planes, h, w int, sums *float64, nc int)\n\n", name)
	fmt.Fprintf(s, "\n// func %s(dx, dy, y *float32, code *uint8, planes, h, w int, sums *float64, nc int)\n", name)
	fmt.Fprintf(s, "TEXT ·%s(SB), NOSPLIT, $0-72\n", name)
	poolBack256Args(s, v)
	s.WriteString("plane:\n")
	p(s, "VXORPS Y10, Y10, Y10") // Σ g, lanes 0–7
	p(s, "VXORPS Y11, Y11, Y11") // lanes 8–15
	p(s, "MOVQ h+40(FP), R13")
	p(s, "SHRQ $1, R13") // oh
	s.WriteString("row:\n")
	p(s, "TESTQ BX, BX")
	p(s, "JZ scatter")
	p(s, "XORQ R9, R9")
	s.WriteString("sumstep:\n")
	poolBack256SumHalf(s, 0)
	poolBack256SumHalf(s, 1)
	p(s, "ADDQ $16, R9")
	p(s, "CMPQ R9, R12")
	p(s, "JLT sumstep")
	poolBack256Scatter(s, v)
	overlapStep(s, v, "DX")
	s.WriteString("rowdone:\n")
	p(s, "LEAQ (SI)(R12*4), SI")
	p(s, "TESTQ R10, R10")
	p(s, "JZ nexty")
	p(s, "LEAQ (R10)(R12*4), R10")
	s.WriteString("nexty:\n")
	p(s, "ADDQ R12, R11")
	p(s, "LEAQ (DI)(R8*2), DI")
	p(s, "DECQ R13")
	p(s, "JNZ row")
	p(s, "TESTQ $1, h+40(FP)")
	p(s, "JZ evenh")
	p(s, "ADDQ R8, DI") // skip an odd last row
	s.WriteString("evenh:\n")
	poolBack256AddSums(s)
	poolNextPlane(s, "nc+64(FP)")
}

// poolBack256Args emits maxpoolBack256x{v}'s argument loads and constants,
// and returns through done when there are no planes.
func poolBack256Args(s *bytes.Buffer, v int) {
	p(s, "MOVQ dx+0(FP), DI")
	p(s, "MOVQ dy+8(FP), SI")
	p(s, "MOVQ y+16(FP), R10")
	p(s, "MOVQ code+24(FP), R11")
	p(s, "MOVQ w+48(FP), R8")
	p(s, "SHLQ $2, R8") // row bytes
	p(s, "MOVQ w+48(FP), R12")
	p(s, "SHRQ $1, R12") // ow
	p(s, "MOVQ R12, DX")
	p(s, "SUBQ $%d, DX", v) // start of a row's last step
	p(s, "VXORPS Y15, Y15, Y15")
	poolCodes(s, "Y")
	p(s, "MOVQ planes+32(FP), R14")
	p(s, "TESTQ R14, R14")
	p(s, "JZ done")
	p(s, "XORQ R15, R15") // channel
	p(s, "MOVQ sums+56(FP), BX")
}

// poolBack256SumHalf emits the masked load of lanes 8h to 8h+7 of a row's
// 16-float chunk of g (gated by y > 0 when y is not nil) and its addition
// to the sums.
func poolBack256SumHalf(s *bytes.Buffer, h int) {
	// Live lanes n = clamp(ow − ox0 − 8h, 0, 8); its mask is the 8
	// words of poolMask256 starting at 8 − n.
	p(s, "MOVQ R12, CX")
	p(s, "SUBQ R9, CX")
	if h == 1 {
		p(s, "SUBQ $8, CX")
	}
	p(s, "CMPQ CX, $8")
	p(s, "JLE le%d", h)
	p(s, "MOVQ $8, CX")
	fmt.Fprintf(s, "le%d:\n", h)
	p(s, "TESTQ CX, CX")
	p(s, "JGE ge%d", h)
	p(s, "XORQ CX, CX")
	fmt.Fprintf(s, "ge%d:\n", h)
	p(s, "SHLQ $2, CX")
	p(s, "LEAQ poolMask256<>+32(SB), AX")
	p(s, "SUBQ CX, AX")
	p(s, "VMOVDQU (AX), Y0")
	p(s, "LEAQ (SI)(R9*4), AX")
	p(s, "VMASKMOVPS %d(AX), Y0, Y1", 32*h)
	p(s, "TESTQ R10, R10")
	p(s, "JZ ng%d", h)
	p(s, "LEAQ (R10)(R9*4), AX")
	p(s, "VMASKMOVPS %d(AX), Y0, Y2", 32*h)
	p(s, "VCMPPS $0x1e, Y15, Y2, Y2") // y > 0
	p(s, "VANDPS Y2, Y1, Y1")
	fmt.Fprintf(s, "ng%d:\n", h)
	p(s, "VADDPS Y1, Y%d, Y%d", 10+h, 10+h)
}

// poolBack256Scatter emits a row's step loop up to its close: g (gated by
// y > 0) goes to the window position each code names, zeros elsewhere.
func poolBack256Scatter(s *bytes.Buffer, v int) {
	R := poolRegs(v)
	s.WriteString("scatter:\n")
	p(s, "XORQ R9, R9")
	s.WriteString("step:\n")
	p(s, "VMOVUPS (SI)(R9*4), %s", R(0)) // g
	p(s, "TESTQ R10, R10")
	p(s, "JZ nogate")
	p(s, "VMOVUPS (R10)(R9*4), %s", R(1))
	p(s, "VCMPPS $0x1e, %s, %s, %s", R(15), R(1), R(1))
	p(s, "VANDPS %s, %s, %s", R(1), R(0), R(0))
	s.WriteString("nogate:\n")
	p(s, "VPMOVZXBD (R11)(R9*1), %s", R(1)) // codes
	for i, c := range []int{15, 12, 13, 14} {
		p(s, "VPCMPEQD %s, %s, %s", R(c), R(1), R(2))
		p(s, "VANDPS %s, %s, %s", R(2), R(0), R(4+i)) // a, b, c, d
	}
	poolBack256StoreWindows(s, v)
}

// poolBack256StoreWindows emits the stores of the window positions a, b, c
// and d (registers 4 to 7), interleaved into dx's two rows.
func poolBack256StoreWindows(s *bytes.Buffer, v int) {
	R := poolRegs(v)
	p(s, "LEAQ (DI)(R9*8), AX")
	for row := 0; row < 2; row++ {
		lo, hi := R(4+2*row), R(5+2*row)
		p(s, "VUNPCKLPS %s, %s, %s", hi, lo, R(8))
		p(s, "VUNPCKHPS %s, %s, %s", hi, lo, R(9))
		if v == 8 {
			p(s, "VPERM2F128 $0x20, Y9, Y8, Y2")
			p(s, "VPERM2F128 $0x31, Y9, Y8, Y3")
			p(s, "VMOVUPS Y2, (AX)")
			p(s, "VMOVUPS Y3, 32(AX)")
		} else {
			p(s, "VMOVUPS X8, (AX)")
			p(s, "VMOVUPS X9, 16(AX)")
		}
		if row == 0 {
			p(s, "ADDQ R8, AX")
		}
	}
}

// poolBack256AddSums emits the fold of the plane's 16 lane sums, added in
// float64 to sums[p mod nc] when sums is not nil.
func poolBack256AddSums(s *bytes.Buffer) {
	p(s, "TESTQ BX, BX")
	p(s, "JZ nextplane")
	fold16(s, "Y10", "Y11", 0, 1, "X0")
	p(s, "VCVTSS2SD X0, X0, X0")
	p(s, "VADDSD (BX)(R15*8), X0, X0")
	p(s, "VMOVSD X0, (BX)(R15*8)")
	s.WriteString("nextplane:\n")
}

// genPoolMask256 writes the lane-mask table of the pooling kernels: eight
// all-ones words, then eight zero words.
func genPoolMask256(s *bytes.Buffer) {
	s.WriteString("\n")
	for i := 0; i < 16; i++ {
		v := "$0xffffffff"
		if i >= 8 {
			v = "$0"
		}
		fmt.Fprintf(s, "DATA poolMask256<>+%d(SB)/4, %s\n", 4*i, v)
	}
	s.WriteString("GLOBL poolMask256<>(SB), RODATA|NOPTR, $64\n")
}

// overlapStep closes a row's step loop over R9 (v outputs a step, ow in
// R12): the last step starts at the register last (ow − v), overlapping the
// one before, so that no step is partial.
func overlapStep(s *bytes.Buffer, v int, last string) {
	p(s, "ADDQ $%d, R9", v)
	p(s, "CMPQ R9, R12")
	p(s, "JGE rowdone")
	p(s, "CMPQ R9, %s", last)
	p(s, "JLE step")
	p(s, "MOVQ %s, R9", last) // the last step overlaps the one before
	p(s, "JMP step")
}

// poolCodes broadcasts the window codes 1, 2 and 3 into registers 12, 13
// and 14 of kind r (Y, or X for the 4-output kernels).
func poolCodes(s *bytes.Buffer, r string) {
	for c := 1; c <= 3; c++ {
		p(s, "MOVL $%d, AX", c)
		p(s, "MOVQ AX, X%d", 11+c)
		p(s, "VPBROADCASTD X%d, %s%d", 11+c, r, 11+c)
	}
}

// poolNextPlane closes the pooling kernels' plane loop: the channel R15
// wraps at the argument nc, R14 counts the planes left.
func poolNextPlane(s *bytes.Buffer, nc string) {
	p(s, "INCQ R15")
	p(s, "CMPQ R15, %s", nc)
	p(s, "JLT samec")
	p(s, "XORQ R15, R15")
	s.WriteString("samec:\n")
	p(s, "DECQ R14")
	p(s, "JNZ plane")
	s.WriteString("done:\n")
	p(s, "VZEROUPPER")
	p(s, "RET")
}
