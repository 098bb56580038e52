//go:build amd64 && !purego

#include "textflag.h"

// Hand-written AVX2 elementwise kernels (ReLU, its gradient, Add). Each
// output is one exact operation on its inputs, so the results are the bits
// of the pure-Go loops in activation.go and window.go. n is a multiple of
// 8 (the Go callers run the tail); 32 floats a step, then 8.

// func reluAVX2(y, x *float32, n int)
//
// y = x where !(x <= 0) (x > 0 or NaN), else +0: VCMPPS NLE_US and a mask.
TEXT ·reluAVX2(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VXORPS Y15, Y15, Y15
	CMPQ CX, $32
	JLT  relu8

relu32:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VCMPPS  $6, Y15, Y0, Y4
	VCMPPS  $6, Y15, Y1, Y5
	VCMPPS  $6, Y15, Y2, Y6
	VCMPPS  $6, Y15, Y3, Y7
	VANDPS  Y0, Y4, Y4
	VANDPS  Y1, Y5, Y5
	VANDPS  Y2, Y6, Y6
	VANDPS  Y3, Y7, Y7
	VMOVUPS Y4, (DI)
	VMOVUPS Y5, 32(DI)
	VMOVUPS Y6, 64(DI)
	VMOVUPS Y7, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, CX
	CMPQ    CX, $32
	JGE     relu32

relu8:
	TESTQ CX, CX
	JZ    reludone

relu8loop:
	VMOVUPS (SI), Y0
	VCMPPS  $6, Y15, Y0, Y4
	VANDPS  Y0, Y4, Y4
	VMOVUPS Y4, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     relu8loop

reludone:
	VZEROUPPER
	RET

// func reluBackAVX2(dx, dy, y *float32, n int)
//
// dx = dy where y > 0, else +0: VCMPPS GT_OS and a mask.
TEXT ·reluBackAVX2(SB), NOSPLIT, $0-32
	MOVQ dx+0(FP), DI
	MOVQ dy+8(FP), SI
	MOVQ y+16(FP), DX
	MOVQ n+24(FP), CX
	VXORPS Y15, Y15, Y15
	CMPQ CX, $32
	JLT  back8

back32:
	VMOVUPS (DX), Y0
	VMOVUPS 32(DX), Y1
	VMOVUPS 64(DX), Y2
	VMOVUPS 96(DX), Y3
	VCMPPS  $14, Y15, Y0, Y0
	VCMPPS  $14, Y15, Y1, Y1
	VCMPPS  $14, Y15, Y2, Y2
	VCMPPS  $14, Y15, Y3, Y3
	VANDPS  (SI), Y0, Y0
	VANDPS  32(SI), Y1, Y1
	VANDPS  64(SI), Y2, Y2
	VANDPS  96(SI), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, DX
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, CX
	CMPQ    CX, $32
	JGE     back32

back8:
	TESTQ CX, CX
	JZ    backdone

back8loop:
	VMOVUPS (DX), Y0
	VCMPPS  $14, Y15, Y0, Y0
	VANDPS  (SI), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DX
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     back8loop

backdone:
	VZEROUPPER
	RET

// func addAVX2(y, a, b *float32, n int)
//
// y = a + b.
TEXT ·addAVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	CMPQ CX, $32
	JLT  add8

add32:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VADDPS  (DX), Y0, Y0
	VADDPS  32(DX), Y1, Y1
	VADDPS  64(DX), Y2, Y2
	VADDPS  96(DX), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, DX
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, CX
	CMPQ    CX, $32
	JGE     add32

add8:
	TESTQ CX, CX
	JZ    adddone

add8loop:
	VMOVUPS (SI), Y0
	VADDPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DX
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JNZ     add8loop

adddone:
	VZEROUPPER
	RET

// func gnApplyAVX2(y, x *float32, n int, mean, rstd float64, scale, shift float32)
//
// GroupNorm's output, 4 values a step (n a multiple of 4), as
// groupNormApply computes it: x̂ = float32((float64(x) − mean)·rstd), then
// y = float32(scale·x̂) + shift.
TEXT ·gnApplyAVX2(SB), NOSPLIT, $0-48
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSD mean+24(FP), Y14
	VBROADCASTSD rstd+32(FP), Y13
	VBROADCASTSS scale+40(FP), X12
	VBROADCASTSS shift+44(FP), X11
	CMPQ         CX, $8
	JLT          apply4

apply8:
	VCVTPS2PD  (SI), Y0
	VCVTPS2PD  16(SI), Y1
	VSUBPD     Y14, Y0, Y0
	VSUBPD     Y14, Y1, Y1
	VMULPD     Y13, Y0, Y0
	VMULPD     Y13, Y1, Y1
	VCVTPD2PSY Y0, X0
	VCVTPD2PSY Y1, X1
	VMULPS     X12, X0, X0
	VMULPS     X12, X1, X1
	VADDPS     X11, X0, X0
	VADDPS     X11, X1, X1
	VMOVUPS    X0, (DI)
	VMOVUPS    X1, 16(DI)
	ADDQ       $32, SI
	ADDQ       $32, DI
	SUBQ       $8, CX
	CMPQ       CX, $8
	JGE        apply8

apply4:
	TESTQ CX, CX
	JZ    applydone
	VCVTPS2PD  (SI), Y0
	VSUBPD     Y14, Y0, Y0
	VMULPD     Y13, Y0, Y0
	VCVTPD2PSY Y0, X0
	VMULPS     X12, X0, X0
	VADDPS     X11, X0, X0
	VMOVUPS    X0, (DI)

applydone:
	VZEROUPPER
	RET

// func gnInputGradAVX2(dx, dy, x *float32, n int, mean, rstd, gam, m1, m2 float64)
//
// GroupNorm's input gradient, 4 values a step (n a multiple of 4), as
// groupNormInputGrad computes it: x̂ as in gnApplyAVX2, then
// dx = float32(rstd·((gam·dy − m1) − x̂·m2)) in float64.
TEXT ·gnInputGradAVX2(SB), NOSPLIT, $0-72
	MOVQ         dx+0(FP), DI
	MOVQ         dy+8(FP), DX
	MOVQ         x+16(FP), SI
	MOVQ         n+24(FP), CX
	VBROADCASTSD mean+32(FP), Y14
	VBROADCASTSD rstd+40(FP), Y13
	VBROADCASTSD gam+48(FP), Y12
	VBROADCASTSD m1+56(FP), Y11
	VBROADCASTSD m2+64(FP), Y10
	TESTQ        CX, CX
	JZ           igdone

ig4:
	VCVTPS2PD  (SI), Y0
	VSUBPD     Y14, Y0, Y0
	VMULPD     Y13, Y0, Y0
	VCVTPD2PSY Y0, X0
	VCVTPS2PD  X0, Y0
	VMULPD     Y10, Y0, Y0
	VCVTPS2PD  (DX), Y1
	VMULPD     Y12, Y1, Y1
	VSUBPD     Y11, Y1, Y1
	VSUBPD     Y0, Y1, Y1
	VMULPD     Y13, Y1, Y1
	VCVTPD2PSY Y1, X1
	VMOVUPS    X1, (DI)
	ADDQ       $16, SI
	ADDQ       $16, DX
	ADDQ       $16, DI
	SUBQ       $4, CX
	JNZ        ig4

igdone:
	VZEROUPPER
	RET
