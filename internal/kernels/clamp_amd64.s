//go:build amd64 && !purego

#include "textflag.h"

// AVX2 Clamp and ClampBackward (clamp.go). n is a multiple of 8 (the Go
// callers run the tail). Each output is a compare-and-select of its inputs,
// the bits of the pure-Go loops.

// func clampAVX2(y, x *float32, n int, lo, hi float32)
//
// t = (lo > x) ? lo : x, then y = (hi < t) ? hi : t: VMAXPS and VMINPS
// with the bound as the first source, which return the second source (x,
// t) when the compare is false: on NaN and on zeros of either sign, as
// the branches x < lo and x > hi do.
TEXT ·clampAVX2(SB), NOSPLIT, $0-32
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS lo+24(FP), Y14
	VBROADCASTSS hi+28(FP), Y15
	TESTQ        CX, CX
	JZ           clampdone

clamploop:
	VMOVUPS (SI), Y0
	VMAXPS  Y0, Y14, Y0
	VMINPS  Y0, Y15, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     clamploop

clampdone:
	VZEROUPPER
	RET

// func clampBackAVX2(dx, dy, x *float32, n int, lo, hi float32)
//
// dx = dy where x > lo and x < hi (ordered compares: false on NaN), else
// +0.
TEXT ·clampBackAVX2(SB), NOSPLIT, $0-40
	MOVQ         dx+0(FP), DI
	MOVQ         dy+8(FP), SI
	MOVQ         x+16(FP), DX
	MOVQ         n+24(FP), CX
	VBROADCASTSS lo+32(FP), Y14
	VBROADCASTSS hi+36(FP), Y15
	TESTQ        CX, CX
	JZ           backdone

backloop:
	VMOVUPS (DX), Y0
	VCMPPS  $14, Y14, Y0, Y1 // x > lo
	VCMPPS  $1, Y15, Y0, Y2  // x < hi
	VANDPS  Y1, Y2, Y1
	VANDPS  (SI), Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ    $32, DX
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     backloop

backdone:
	VZEROUPPER
	RET
