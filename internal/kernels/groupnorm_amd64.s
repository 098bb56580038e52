//go:build amd64 && !purego

#include "textflag.h"

// GroupNorm's float64 sums, eight chains at once, one a float64 vector
// lane: eight image groups (forward) or eight planes (backward) of stride
// values each, starting at the given pointer. Each chain adds its values
// in memory order with the operations groupnorm.go's Go loops do (a
// product rounded to float64, then added; never fused), and with the
// accumulator as the first operand of each addition and x̂ as the first of
// each product, as the compiled Go code has them, so that NaN payloads
// come out the same too. n, the values a chain takes here, is a multiple
// of 8: the Go code adds the rest.
//
// A step loads 8 floats of each of four chains into a register and
// transposes the 4×4 blocks in each 128-bit half, TRANSPOSE4: row k
// then holds value k of the four chains in its low half and value k+4 in
// its high half.

// TRANSPOSE4 transposes the 4×4 float blocks of each 128-bit half of a,
// b, c, d in place, with the temporaries t0–t3.
#define TRANSPOSE4(a, b, c, d, t0, t1, t2, t3) \
	VUNPCKLPS b, a, t0; \
	VUNPCKHPS b, a, t1; \
	VUNPCKLPS d, c, t2; \
	VUNPCKHPS d, c, t3; \
	VUNPCKLPD t2, t0, a; \
	VUNPCKHPD t2, t0, b; \
	VUNPCKLPD t3, t1, c; \
	VUNPCKHPD t3, t1, d

// SUM adds the four floats xr (four chains' values) to the chains of acc:
// acc += float64(v).
#define SUM(xr, t, acc) \
	VCVTPS2PD xr, t; \
	VADDPD    t, acc, acc

// SUMHI is SUM of the high half of yr, through the temporary xt/t.
#define SUMHI(yr, xt, t, acc) \
	VEXTRACTF128 $1, yr, xt; \
	VCVTPS2PD    xt, t; \
	VADDPD       t, acc, acc

// SQ adds the squared deviations of the four floats xr from the means at
// mean to the chains of acc: d = float64(v) − mean, acc += d·d.
#define SQ(xr, t, mean, acc) \
	VCVTPS2PD xr, t; \
	VSUBPD    mean, t, t; \
	VMULPD    t, t, t; \
	VADDPD    t, acc, acc

#define SQHI(yr, xt, t, mean, acc) \
	VEXTRACTF128 $1, yr, xt; \
	SQ(xt, t, mean, acc)

// LOAD8 loads 8 floats of each of the four chains at p, p+r8, p+2·r8 and
// p+r9 = p+3·r8.
#define LOAD8(p, a, b, c, d) \
	VMOVUPS (p), a; \
	VMOVUPS (p)(R8*1), b; \
	VMOVUPS (p)(R8*2), c; \
	VMOVUPS (p)(R9*1), d

// PLANE adds one transposed row half of four planes to their chains: the
// four floats xr of x and xe of dy give e = float64(dy) and
// x̂ = float64(float32((float64(x) − mean)·rstd)), with mean and rstd
// broadcast in the frame at 0(SP) and 32(SP); then g += x̂·e and b += e.
// VCVTPD2PS rounds to nearest even under the MXCSR Go runs with (no FTZ
// or DAZ), as the CVTSD2SS of Go's float32() does, NaNs alike.
#define PLANE(xr, xe, t, u, g, b) \
	VCVTPS2PD  xr, t; \
	VSUBPD     0(SP), t, t; \
	VMULPD     32(SP), t, t; \
	VCVTPD2PSY t, xr; \
	VCVTPS2PD  xr, t; \
	VCVTPS2PD  xe, u; \
	VMULPD     u, t, t; \
	VADDPD     t, g, g; \
	VADDPD     u, b, b

// QUAD adds 8 values of each of four planes of x at px and dy at pd to
// the chains g and b.
#define QUAD(px, pd, g, b) \
	LOAD8(px, Y0, Y1, Y2, Y3); \
	LOAD8(pd, Y4, Y5, Y6, Y7); \
	TRANSPOSE4(Y0, Y1, Y2, Y3, Y8, Y9, Y10, Y11); \
	TRANSPOSE4(Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11); \
	VEXTRACTF128 $1, Y0, X10; \
	VEXTRACTF128 $1, Y4, X11; \
	PLANE(X0, X4, Y8, Y9, g, b); \
	VEXTRACTF128 $1, Y1, X0; \
	VEXTRACTF128 $1, Y5, X4; \
	PLANE(X1, X5, Y8, Y9, g, b); \
	VEXTRACTF128 $1, Y2, X1; \
	VEXTRACTF128 $1, Y6, X5; \
	PLANE(X2, X6, Y8, Y9, g, b); \
	VEXTRACTF128 $1, Y3, X2; \
	VEXTRACTF128 $1, Y7, X6; \
	PLANE(X3, X7, Y8, Y9, g, b); \
	PLANE(X10, X11, Y8, Y9, g, b); \
	PLANE(X0, X4, Y8, Y9, g, b); \
	PLANE(X1, X5, Y8, Y9, g, b); \
	PLANE(X2, X6, Y8, Y9, g, b)

// func gnSums8AVX2(x *float32, stride, n int, s *[8]float64)
//
// s[j] = Σ float64(x[j·stride+i]) for i < n, in order.
TEXT ·gnSums8AVX2(SB), NOSPLIT, $0-32
	MOVQ   x+0(FP), SI
	MOVQ   stride+8(FP), R8
	MOVQ   n+16(FP), CX
	MOVQ   s+24(FP), DX
	SHLQ   $2, R8
	LEAQ   (R8)(R8*2), R9
	LEAQ   (SI)(R8*4), DI
	VXORPD Y12, Y12, Y12
	VXORPD Y13, Y13, Y13
	TESTQ  CX, CX
	JZ     sumsdone

sums8:
	LOAD8(SI, Y0, Y1, Y2, Y3)
	LOAD8(DI, Y4, Y5, Y6, Y7)
	TRANSPOSE4(Y0, Y1, Y2, Y3, Y8, Y9, Y10, Y11)
	TRANSPOSE4(Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11)
	SUM(X0, Y8, Y12)
	SUM(X4, Y9, Y13)
	SUM(X1, Y10, Y12)
	SUM(X5, Y11, Y13)
	SUM(X2, Y8, Y12)
	SUM(X6, Y9, Y13)
	SUM(X3, Y10, Y12)
	SUM(X7, Y11, Y13)
	SUMHI(Y0, X8, Y8, Y12)
	SUMHI(Y4, X9, Y9, Y13)
	SUMHI(Y1, X10, Y10, Y12)
	SUMHI(Y5, X11, Y11, Y13)
	SUMHI(Y2, X8, Y8, Y12)
	SUMHI(Y6, X9, Y9, Y13)
	SUMHI(Y3, X10, Y10, Y12)
	SUMHI(Y7, X11, Y11, Y13)
	ADDQ   $32, SI
	ADDQ   $32, DI
	SUBQ   $8, CX
	JNZ    sums8

sumsdone:
	VMOVUPD Y12, (DX)
	VMOVUPD Y13, 32(DX)
	VZEROUPPER
	RET

// func gnSqSums8AVX2(x *float32, stride, n int, mean, q *[8]float64)
//
// q[j] = Σ d·d, d = float64(x[j·stride+i]) − mean[j], for i < n, in order.
TEXT ·gnSqSums8AVX2(SB), NOSPLIT, $0-40
	MOVQ   x+0(FP), SI
	MOVQ   stride+8(FP), R8
	MOVQ   n+16(FP), CX
	MOVQ   mean+24(FP), R10
	MOVQ   q+32(FP), DX
	SHLQ   $2, R8
	LEAQ   (R8)(R8*2), R9
	LEAQ   (SI)(R8*4), DI
	VMOVUPD (R10), Y14
	VMOVUPD 32(R10), Y15
	VXORPD Y12, Y12, Y12
	VXORPD Y13, Y13, Y13
	TESTQ  CX, CX
	JZ     sqdone

sq8:
	LOAD8(SI, Y0, Y1, Y2, Y3)
	LOAD8(DI, Y4, Y5, Y6, Y7)
	TRANSPOSE4(Y0, Y1, Y2, Y3, Y8, Y9, Y10, Y11)
	TRANSPOSE4(Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11)
	SQ(X0, Y8, Y14, Y12)
	SQ(X4, Y9, Y15, Y13)
	SQ(X1, Y10, Y14, Y12)
	SQ(X5, Y11, Y15, Y13)
	SQ(X2, Y8, Y14, Y12)
	SQ(X6, Y9, Y15, Y13)
	SQ(X3, Y10, Y14, Y12)
	SQ(X7, Y11, Y15, Y13)
	SQHI(Y0, X8, Y8, Y14, Y12)
	SQHI(Y4, X9, Y9, Y15, Y13)
	SQHI(Y1, X10, Y10, Y14, Y12)
	SQHI(Y5, X11, Y11, Y15, Y13)
	SQHI(Y2, X8, Y8, Y14, Y12)
	SQHI(Y6, X9, Y9, Y15, Y13)
	SQHI(Y3, X10, Y10, Y14, Y12)
	SQHI(Y7, X11, Y11, Y15, Y13)
	ADDQ   $32, SI
	ADDQ   $32, DI
	SUBQ   $8, CX
	JNZ    sq8

sqdone:
	VMOVUPD Y12, (DX)
	VMOVUPD Y13, 32(DX)
	VZEROUPPER
	RET

// func gnPlaneSums8AVX2(dy, x *float32, stride, n int, mean, rstd float64, out *[16]float64)
//
// For the eight planes j of stride values at dy and x, out[j] = Σ x̂·e
// and out[8+j] = Σ e over i < n, in order, with e = float64(dy[j·stride+i])
// and x̂ normalised(x[j·stride+i], mean, rstd).
TEXT ·gnPlaneSums8AVX2(SB), NOSPLIT, $64-56
	MOVQ         dy+0(FP), DX
	MOVQ         x+8(FP), SI
	MOVQ         stride+16(FP), R8
	MOVQ         n+24(FP), CX
	MOVQ         out+48(FP), AX
	VBROADCASTSD mean+32(FP), Y8
	VBROADCASTSD rstd+40(FP), Y9
	VMOVUPD      Y8, 0(SP)
	VMOVUPD      Y9, 32(SP)
	SHLQ         $2, R8
	LEAQ         (R8)(R8*2), R9
	LEAQ         (SI)(R8*4), DI
	LEAQ         (DX)(R8*4), BX
	VXORPD       Y12, Y12, Y12
	VXORPD       Y13, Y13, Y13
	VXORPD       Y14, Y14, Y14
	VXORPD       Y15, Y15, Y15
	TESTQ        CX, CX
	JZ           planedone

plane8:
	QUAD(SI, DX, Y12, Y13)
	QUAD(DI, BX, Y14, Y15)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, DX
	ADDQ $32, BX
	SUBQ $8, CX
	JNZ  plane8

planedone:
	VMOVUPD Y12, (AX)
	VMOVUPD Y14, 32(AX)
	VMOVUPD Y13, 64(AX)
	VMOVUPD Y15, 96(AX)
	VZEROUPPER
	RET
