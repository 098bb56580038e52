//go:build amd64 && !purego

#include "textflag.h"

// func gather2AVX2(dst, src *float32, n, rows, ldd, lds int, mask *int32)
//
// The stride-2 gather of a strided convolution's column rows: for each of
// rows rows r, dst[r·ldd + k] = src[r·lds + 2k] for k < n (n ≥ 8), 8
// values a step with an overlapping last step. A step reads src[2k …
// 2k+14]: the second half with VMASKMOVPS under mask (7 live lanes), so
// nothing past the last value gathered is read. Copies only: the bits of
// the pure-Go gather.
TEXT ·gather2AVX2(SB), NOSPLIT, $0-56
	MOVQ    dst+0(FP), DI
	MOVQ    src+8(FP), SI
	MOVQ    n+16(FP), R13
	SUBQ    $8, R13            // the last step's start
	MOVQ    rows+24(FP), CX
	MOVQ    ldd+32(FP), R10
	SHLQ    $2, R10
	MOVQ    lds+40(FP), R11
	SHLQ    $2, R11
	MOVQ    mask+48(FP), AX
	VMOVDQU (AX), Y15
	TESTQ   CX, CX
	JZ      done

row:
	XORQ R9, R9

step:
	CMPQ R9, R13
	JLE  gather
	MOVQ R13, R9 // the overlapping last step

gather:
	VMOVUPS    (SI)(R9*8), Y0
	VMASKMOVPS 32(SI)(R9*8), Y15, Y1
	VSHUFPS    $0x88, Y1, Y0, Y2 // src[0 2 8 10 | 4 6 12 14] of the step
	VPERMPD    $0xd8, Y2, Y2     // src[0 2 4 6 8 10 12 14]
	VMOVUPS    Y2, (DI)(R9*4)
	CMPQ       R9, R13
	JGE        rowdone
	ADDQ       $8, R9
	JMP        step

rowdone:
	ADDQ R10, DI
	ADDQ R11, SI
	DECQ CX
	JNZ  row

done:
	VZEROUPPER
	RET

// func gather2x4AVX2(dst, src *float32, n, rows, ldd, lds int, mask *int32)
//
// gather2AVX2 for rows of 4 ≤ n < 8 values: 4 a step (XMM) with an
// overlapping last step, the second half of a step's src[2k … 2k+6] read
// under mask (3 live lanes).
TEXT ·gather2x4AVX2(SB), NOSPLIT, $0-56
	MOVQ    dst+0(FP), DI
	MOVQ    src+8(FP), SI
	MOVQ    n+16(FP), R13
	SUBQ    $4, R13            // the last step's start
	MOVQ    rows+24(FP), CX
	MOVQ    ldd+32(FP), R10
	SHLQ    $2, R10
	MOVQ    lds+40(FP), R11
	SHLQ    $2, R11
	MOVQ    mask+48(FP), AX
	VMOVDQU (AX), X15
	TESTQ   CX, CX
	JZ      done4

row4:
	XORQ R9, R9

step4:
	CMPQ R9, R13
	JLE  gather4
	MOVQ R13, R9 // the overlapping last step

gather4:
	VMOVUPS    (SI)(R9*8), X0
	VMASKMOVPS 16(SI)(R9*8), X15, X1
	VSHUFPS    $0x88, X1, X0, X2 // src[0 2 4 6] of the step
	VMOVUPS    X2, (DI)(R9*4)
	CMPQ       R9, R13
	JGE        rowdone4
	ADDQ       $4, R9
	JMP        step4

rowdone4:
	ADDQ R10, DI
	ADDQ R11, SI
	DECQ CX
	JNZ  row4

done4:
	RET
