package main

import (
	"bytes"
	"fmt"
)

// genPoolNEON writes maxpoolNEONx{v}: the NEON form of maxpool256x{v},
// v = 8 or 4 outputs a step, in groups of four (one register). VLD2 splits
// each row's 2v floats into even and odd columns. A row needs ow ≥ v: its
// last step starts at ow − v and overlaps the one before, rewriting the
// same values, so no step is partial.
//
//	y[p][oy][ox] = t > lo ? t : lo, t = m + bias[p mod nc]
//
// where m is the first maximum (by >: FCMGT then VBIT) of the window at
// (2oy, 2ox) in the order (0,0), (0,1), (1,0), (1,1), whose position goes
// to code; the clamp is FCMGT then VBIF, which gives lo where t is NaN or
// t = −0 and lo = +0, as VMAXPS(t, lo) does.
func genPoolNEON(s, d *bytes.Buffer, v int) {
	name := fmt.Sprintf("maxpoolNEONx%d", v)
	fmt.Fprintf(d, "//go:noescape\nfunc %s(y *float32, code *uint8, x *float32, planes, h, w int, bias *float32, nc int, lo float32)\n\n", name)
	fmt.Fprintf(s, "\n// func %s(y *float32, code *uint8, x *float32, planes, h, w int, bias *float32, nc int, lo float32)\n", name)
	fmt.Fprintf(s, "TEXT ·%s(SB), NOSPLIT, $0-68\n", name)
	ng := v / 4 // groups of four outputs
	p(s, "MOVD y+0(FP), R0")
	p(s, "MOVD code+8(FP), R1")
	p(s, "MOVD x+16(FP), R2")
	p(s, "MOVD w+40(FP), R3")
	p(s, "LSR $1, R3, R4")     // ow
	p(s, "LSL $2, R3, R3")     // input row bytes
	p(s, "SUB $%d, R4, R5", v) // start of a row's last step
	p(s, "MOVD planes+24(FP), R6")
	p(s, "CBZ R6, done")
	p(s, "MOVD $0, R7") // channel
	p(s, "MOVD bias+48(FP), R8")
	p(s, "FMOVS lo+64(FP), F28")
	p(s, "VDUP V28.S[0], V28.S4")
	poolCodesNEON(s)
	s.WriteString("plane:\n")
	p(s, "VEOR V27.B16, V27.B16, V27.B16") // bias +0: m + 0 as in Go
	p(s, "CBZ R8, nobias")
	p(s, "ADD R7<<2, R8, R11")
	p(s, "VLD1R (R11), [V27.S4]")
	s.WriteString("nobias:\n")
	p(s, "MOVD h+32(FP), R10")
	p(s, "LSR $1, R10, R10") // oh
	s.WriteString("row:\n")
	p(s, "MOVD $0, R9") // ox0
	s.WriteString("step:\n")
	p(s, "ADD R9<<3, R2, R11") // &x[2oy][2ox0]
	p(s, "ADD R3, R11, R12")   // &x[2oy+1][2ox0]
	// Group g: V(8g) = (0,0) then the maximum, V(8g+1) (0,1), V(8g+2)
	// (1,0), V(8g+3) (1,1), V(8g+4) the codes, V(8g+5) a mask.
	for g := 0; g < ng; g++ {
		p(s, "VLD2.P 32(R11), %s", vlist(8*g, 2))
		p(s, "VLD2.P 32(R12), %s", vlist(8*g+2, 2))
	}
	for g := 0; g < ng; g++ {
		best, code, m := 8*g, 8*g+4, 8*g+5
		p(s, "VEOR V%d.B16, V%d.B16, V%d.B16", code, code, code) // code 0
		for c := 1; c <= 3; c++ {
			p(s, "%s", fcmgt4s(m, 8*g+c, best)) // candidate > best
			p(s, "VBIT V%d.B16, V%d.B16, V%d.B16", m, 8*g+c, best)
			p(s, "VBIT V%d.B16, V%d.B16, V%d.B16", m, 28+c, code)
		}
		t := 16 + g
		p(s, "%s", fadd4s(t, best, 27))              // t = m + bias
		p(s, "%s", fcmgt4s(m, t, 28))                // t > lo
		p(s, "VBIF V%d.B16, V28.B16, V%d.B16", m, t) // else lo
	}
	p(s, "ADD R9<<2, R0, R11")
	p(s, "VST1 %s, (R11)", vlist(16, ng))
	// Codes: the low byte of each 32-bit lane.
	if ng == 2 {
		p(s, "VUZP1 V12.H8, V4.H8, V20.H8")
	} else {
		p(s, "VUZP1 V4.H8, V4.H8, V20.H8")
	}
	p(s, "VUZP1 V20.B16, V20.B16, V20.B16")
	p(s, "ADD R9, R1, R11")
	if ng == 2 {
		p(s, "FMOVD F20, (R11)")
	} else {
		p(s, "FMOVS F20, (R11)")
	}
	overlapStepNEON(s, v, "R4", "R5")
	s.WriteString("rowdone:\n")
	p(s, "ADD R4<<2, R0, R0")
	p(s, "ADD R4, R1, R1")
	p(s, "ADD R3<<1, R2, R2")
	p(s, "SUBS $1, R10, R10")
	p(s, "BNE row")
	p(s, "MOVD h+32(FP), R11")
	p(s, "TBZ $0, R11, evenh")
	p(s, "ADD R3, R2, R2") // skip an odd last row
	s.WriteString("evenh:\n")
	poolNextPlaneNEON(s, "R7", "R6", "nc+56(FP)")
}

// genPoolBackNEON writes maxpoolBackNEONx{v}, the NEON form of
// maxpoolBack256x{v}: dx gets g = dy (gated by y > 0 when y is not nil) at
// the window position code names and zeros elsewhere, v outputs a step
// with an overlapping last step (ow ≥ v); VST2 interleaves each row's even
// and odd columns. When sums is not nil, Σ g of plane p goes to
// sums[p mod nc] in float64, summed as maxpoolBack512 sums it: in 16 lanes
// (four accumulators), output ox of a row to lane ox mod 16, the dead lanes
// of a row's last chunk adding +0 (the chunk is ANDed with a lane mask),
// folded as the dot kernels fold. That chunk is loaded whole when its 16
// floats lie inside dy (and so y); only near the end of dy are its live
// floats first copied to a stack buffer, so nothing is read past dy or y.
func genPoolBackNEON(s, d *bytes.Buffer, v int) {
	name := fmt.Sprintf("maxpoolBackNEONx%d", v)
	fmt.Fprintf(d, "//go:noescape\nfunc %s(dx, dy, y *float32, code *uint8, planes, h, w int, sums *float64, nc int)\n\n", name)
	fmt.Fprintf(s, "\n// func %s(dx, dy, y *float32, code *uint8, planes, h, w int, sums *float64, nc int)\n", name)
	fmt.Fprintf(s, "TEXT ·%s(SB), NOSPLIT, $144-72\n", name) // a 128-byte buffer at 16(RSP)
	poolBackNEONArgs(s, v)
	s.WriteString("plane:\n")
	for a := 24; a < 28; a++ { // Σ g, lanes 0–15
		p(s, "VEOR V%d.B16, V%d.B16, V%d.B16", a, a, a)
	}
	p(s, "MOVD h+40(FP), R10")
	p(s, "LSR $1, R10, R10") // oh
	s.WriteString("row:\n")
	p(s, "CBZ R13, scatter")
	poolBackNEONSumChunks(s)
	poolBackNEONSumPart(s)
	poolBackNEONScatter(s, v)
	overlapStepNEON(s, v, "R5", "R6")
	s.WriteString("rowdone:\n")
	p(s, "ADD R5<<2, R1, R1")
	p(s, "CBZ R2, nexty")
	p(s, "ADD R5<<2, R2, R2")
	s.WriteString("nexty:\n")
	p(s, "ADD R5, R3, R3")
	p(s, "ADD R4<<1, R0, R0")
	p(s, "SUBS $1, R10, R10")
	p(s, "BNE row")
	p(s, "MOVD h+40(FP), R11")
	p(s, "TBZ $0, R11, evenh")
	p(s, "ADD R4, R0, R0") // skip an odd last row
	s.WriteString("evenh:\n")
	poolBackNEONAddSums(s)
	poolNextPlaneNEON(s, "R8", "R7", "nc+64(FP)")
}

// poolBackNEONArgs emits maxpoolBackNEONx{v}'s argument loads and
// constants, including the end of dy in R14, and returns through done when
// there are no planes.
func poolBackNEONArgs(s *bytes.Buffer, v int) {
	p(s, "MOVD dx+0(FP), R0")
	p(s, "MOVD dy+8(FP), R1")
	p(s, "MOVD y+16(FP), R2")
	p(s, "MOVD code+24(FP), R3")
	p(s, "MOVD w+48(FP), R4")
	p(s, "LSR $1, R4, R5")     // ow
	p(s, "LSL $2, R4, R4")     // row bytes
	p(s, "SUB $%d, R5, R6", v) // start of a row's last step
	p(s, "VEOR V28.B16, V28.B16, V28.B16")
	poolCodesNEON(s)
	p(s, "MOVD planes+32(FP), R7")
	p(s, "CBZ R7, done")
	p(s, "MOVD h+40(FP), R10")
	p(s, "LSR $1, R10, R10")
	p(s, "MUL R5, R10, R11")
	p(s, "MUL R7, R11, R11")
	p(s, "ADD R11<<2, R1, R14") // end of dy
	p(s, "MOVD $0, R8")         // channel
	p(s, "MOVD sums+56(FP), R13")
	p(s, "ADD $16, RSP, R15") // chunk buffer: dy, then y at +64
	p(s, "MOVD $poolMaskNEON<>+64(SB), R16")
}

// poolBackNEONGateAdd emits the gate of the chunk in V0–V3 by y > 0 (y in
// V4–V7; the caller jumps to label when y is nil) and its addition to the
// sums.
func poolBackNEONGateAdd(s *bytes.Buffer, label string) {
	for i := 0; i < 4; i++ {
		p(s, "%s", fcmgt4s(4+i, 4+i, 28)) // y > 0
		p(s, "VAND V%d.B16, V%d.B16, V%d.B16", 4+i, i, i)
	}
	s.WriteString(label + ":\n")
	for i := 0; i < 4; i++ {
		p(s, "%s", fadd4s(24+i, 24+i, i))
	}
}

// poolBackNEONSumChunks emits the loop that adds a row's whole 16-float
// chunks of g to the sums, going on to sumpart for a partial last chunk.
func poolBackNEONSumChunks(s *bytes.Buffer) {
	p(s, "MOVD R1, R11")
	p(s, "MOVD R2, R12")
	p(s, "MOVD R5, R19") // floats left in the row
	s.WriteString("sumchunk:\n")
	p(s, "CMP $16, R19")
	p(s, "BLT sumpart")
	p(s, "VLD1.P 64(R11), %s", vlist(0, 4))
	p(s, "CBZ R12, sumng")
	p(s, "VLD1.P 64(R12), %s", vlist(4, 4))
	poolBackNEONGateAdd(s, "sumng")
	p(s, "SUBS $16, R19, R19")
	p(s, "BNE sumchunk")
	p(s, "B scatter")
}

// poolBackNEONSumPart emits the addition of a row's partial last chunk to
// the sums, its dead lanes masked to +0, copied first to the stack buffer
// when a whole chunk would reach past the end of dy.
func poolBackNEONSumPart(s *bytes.Buffer) {
	s.WriteString("sumpart:\n") // 1 ≤ R19 ≤ 15 live floats
	p(s, "ADD $64, R11, R20")
	p(s, "CMP R14, R20")
	p(s, "BLS sumload") // the whole chunk lies inside dy
	p(s, "MOVD R19, R20")
	p(s, "MOVD R15, R21")
	s.WriteString("copy:\n")
	p(s, "MOVWU.P 4(R11), R22")
	p(s, "MOVW R22, (R21)")
	p(s, "CBZ R12, copyng")
	p(s, "MOVWU.P 4(R12), R23")
	p(s, "MOVW R23, 64(R21)")
	s.WriteString("copyng:\n")
	p(s, "ADD $4, R21, R21")
	p(s, "SUBS $1, R20, R20")
	p(s, "BNE copy")
	p(s, "MOVD R15, R11")
	p(s, "CBZ R12, sumload")
	p(s, "ADD $64, R15, R12")
	s.WriteString("sumload:\n")
	p(s, "VLD1 (R11), %s", vlist(0, 4))
	p(s, "SUB R19<<2, R16, R20") // mask: R19 ones, then zeros
	p(s, "VLD1 (R20), %s", vlist(8, 4))
	for i := 0; i < 4; i++ {
		p(s, "VAND V%d.B16, V%d.B16, V%d.B16", 8+i, i, i)
	}
	p(s, "CBZ R12, sumpartng")
	p(s, "VLD1 (R12), %s", vlist(4, 4))
	poolBackNEONGateAdd(s, "sumpartng")
}

// poolBackNEONScatter emits a row's step loop up to its close: g (gated by
// y > 0) goes to the window position each code names, zeros elsewhere.
func poolBackNEONScatter(s *bytes.Buffer, v int) {
	ng := v / 4
	s.WriteString("scatter:\n")
	p(s, "MOVD $0, R9")
	s.WriteString("step:\n")
	p(s, "ADD R9<<2, R1, R11")
	p(s, "VLD1 (R11), %s", vlist(0, ng)) // g
	p(s, "CBZ R2, nogate")
	p(s, "ADD R9<<2, R2, R11")
	p(s, "VLD1 (R11), %s", vlist(2, ng))
	for g := 0; g < ng; g++ {
		p(s, "%s", fcmgt4s(2+g, 2+g, 28))
		p(s, "VAND V%d.B16, V%d.B16, V%d.B16", 2+g, g, g)
	}
	s.WriteString("nogate:\n")
	p(s, "ADD R9, R3, R11")
	if ng == 2 {
		p(s, "FMOVD (R11), F4")
	} else {
		p(s, "FMOVS (R11), F4")
	}
	p(s, "VUXTL V4.B8, V4.H8")
	p(s, "VUXTL V4.H4, V5.S4")
	if ng == 2 {
		p(s, "VUXTL2 V4.H8, V6.S4")
	}
	poolBackNEONStoreWindows(s, ng)
}

// poolBackNEONStoreWindows emits the split of ng groups of g by their
// codes (in V5 and V6) and its interleaved stores to dx's two rows.
func poolBackNEONStoreWindows(s *bytes.Buffer, ng int) {
	// Group g's outputs for codes 0–3 in V(16+4g)…V(16+4g+3): the row pairs
	// (0,0), (0,1) and (1,0), (1,1) are consecutive, as VST2 wants them.
	for g := 0; g < ng; g++ {
		for c := 0; c < 4; c++ {
			p(s, "VCMEQ V%d.S4, V%d.S4, V7.S4", 28+c, 5+g)
			p(s, "VAND V7.B16, V%d.B16, V%d.B16", g, 16+4*g+c)
		}
	}
	p(s, "ADD R9<<3, R0, R11")
	p(s, "ADD R4, R11, R12")
	for g := 0; g < ng; g++ {
		p(s, "VST2.P %s, 32(R11)", vlist(16+4*g, 2))
		p(s, "VST2.P %s, 32(R12)", vlist(16+4*g+2, 2))
	}
}

// poolBackNEONAddSums emits the fold of the plane's 16 lane sums, added in
// float64 to sums[p mod nc] when sums is not nil.
func poolBackNEONAddSums(s *bytes.Buffer) {
	p(s, "CBZ R13, nextplane")
	fold16NEON(s, 24)
	p(s, "FCVTSD F24, F24")
	p(s, "ADD R8<<3, R13, R11")
	p(s, "FMOVD (R11), F25")
	p(s, "FADDD F24, F25, F25") // sums[c] + Σ g
	p(s, "FMOVD F25, (R11)")
	s.WriteString("nextplane:\n")
}

// genPoolMaskNEON writes the lane-mask table of the pooling kernels: 16
// all-ones words, then 16 zero words; n live lanes start at word 16 − n.
func genPoolMaskNEON(s *bytes.Buffer) {
	s.WriteString("\n")
	for i := 0; i < 32; i++ {
		v := "$0xffffffff"
		if i >= 16 {
			v = "$0"
		}
		fmt.Fprintf(s, "DATA poolMaskNEON<>+%d(SB)/4, %s\n", 4*i, v)
	}
	s.WriteString("GLOBL poolMaskNEON<>(SB), RODATA|NOPTR, $128\n")
}

// poolCodesNEON broadcasts the window codes 1, 2 and 3 into V29–V31 (as
// 32-bit integers).
func poolCodesNEON(s *bytes.Buffer) {
	for c := 1; c <= 3; c++ {
		p(s, "MOVD $%d, R11", c)
		p(s, "VDUP R11, V%d.S4", 28+c)
	}
}

// overlapStepNEON closes a row's step loop over R9 (v outputs a step, ow
// in the register ow): the last step starts at the register last (ow − v),
// overlapping the one before, so that no step is partial.
func overlapStepNEON(s *bytes.Buffer, v int, ow, last string) {
	p(s, "ADD $%d, R9, R9", v)
	p(s, "CMP %s, R9", ow)
	p(s, "BGE rowdone")
	p(s, "CMP %s, R9", last)
	p(s, "BLE step")
	p(s, "MOVD %s, R9", last) // the last step overlaps the one before
	p(s, "B step")
}

// poolNextPlaneNEON closes the pooling kernels' plane loop: the channel
// register ch wraps at the argument nc, left counts the planes left.
func poolNextPlaneNEON(s *bytes.Buffer, ch, left, nc string) {
	p(s, "ADD $1, %s, %s", ch, ch)
	p(s, "MOVD %s, R11", nc)
	p(s, "CMP R11, %s", ch)
	p(s, "BLT samec")
	p(s, "MOVD $0, %s", ch)
	s.WriteString("samec:\n")
	p(s, "SUBS $1, %s, %s", left, left)
	p(s, "BNE plane")
	s.WriteString("done:\n")
	p(s, "RET")
}
