//go:build amd64 && !purego

#include "textflag.h"

// AVX2 float64 exponential (exp64.go): each lane runs exactly the
// operations of detmath.Exp (the FMA path of Go's amd64 math.Exp), so the
// results are its bits. k = RoundToEven(x·log₂e) (VROUNDPD, imm 0); two
// FMA reductions r = x − k·ln2Hi − k·ln2Lo, as math.FMA(−k, ln2Hi, x)
// rounds them; r/16; the Horner FMA chain 1/8! … 1/2, 1; s = r·p squared
// as (1 + s)² − 1 three times and FMA(s, s + 2, 1) the fourth; then
// ldexpAMD64: s·2ᵏ for −1022 ≤ k ≤ 1023, (s·2^(k+1022))·2⁻¹⁰²² for
// −1075 ≤ k ≤ −1023 (its rounding into the subnormals), +0 below, +Inf
// for k ≥ 1024 (every x above Exp's overflow threshold, +Inf included,
// rounds to such a k), and NaN kept. detmath.Exp's clamp of k to int32's
// range changes no lane: an out-of-range k gives +0 there (−2³¹) and here
// (k < −1075), or +Inf on both sides (x above the threshold).

// The constants, each in the four lanes of a YMM.
#define LOG2E  exp64c<>+0(SB)
#define LN2HI  exp64c<>+32(SB)
#define LN2LO  exp64c<>+64(SB)
#define SIXTNTH exp64c<>+96(SB)
#define SER0   exp64c<>+128(SB)
#define SER1   exp64c<>+160(SB)
#define SER2   exp64c<>+192(SB)
#define SER3   exp64c<>+224(SB)
#define SER4   exp64c<>+256(SB)
#define SER5   exp64c<>+288(SB)
#define SER6   exp64c<>+320(SB)
#define ONE    exp64c<>+352(SB)
#define TWO    exp64c<>+384(SB)
#define SUBK   exp64c<>+416(SB)
#define SUBADD exp64c<>+448(SB)
#define MAGIC  exp64c<>+480(SB)
#define TINY   exp64c<>+512(SB)
#define ZEROK  exp64c<>+544(SB)
#define INFK   exp64c<>+576(SB)
#define INF    exp64c<>+608(SB)

// EXP4 sets p to e^x for the four lanes at x, a memory operand; k, r, t
// and m are scratch (k is NaN where x is); Y15 holds 1.0 in each lane. The result is multiplied by 2⁻¹⁰²² only in
// the subnormal lanes (by 1 elsewhere): a subnormal product in every lane
// would cost the CPU a slow path on every vector with a negative k.
#define EXP4(x, k, r, p, t, m) \
	VMOVUPD      x, r; \
	VMULPD       LOG2E, r, k; \
	VROUNDPD     $0, k, k; \
	VFNMADD231PD LN2HI, k, r; \
	VFNMADD231PD LN2LO, k, r; \
	VMULPD       SIXTNTH, r, r; \
	VMOVUPD      SER0, p; \
	VFMADD213PD  SER1, r, p; \
	VFMADD213PD  SER2, r, p; \
	VFMADD213PD  SER3, r, p; \
	VFMADD213PD  SER4, r, p; \
	VFMADD213PD  SER5, r, p; \
	VFMADD213PD  SER6, r, p; \
	VFMADD213PD  ONE, r, p; \
	VMULPD       r, p, p; \
	VADDPD       TWO, p, t; \
	VMULPD       t, p, p; \
	VADDPD       TWO, p, t; \
	VMULPD       t, p, p; \
	VADDPD       TWO, p, t; \
	VMULPD       t, p, p; \
	VADDPD       TWO, p, t; \
	VFMADD213PD  ONE, t, p; \
	VCMPPD       $1, SUBK, k, m; \
	VANDPD       SUBADD, m, t; \
	VADDPD       k, t, t; \
	VADDPD       MAGIC, t, t; \
	VPSLLQ       $52, t, t; \
	VMULPD       t, p, p; \
	VBLENDVPD    m, TINY, Y15, t; \
	VMULPD       t, p, p; \
	VCMPPD       $1, ZEROK, k, m; \
	VANDNPD      p, m, p; \
	VCMPPD       $13, INFK, k, m; \
	VBLENDVPD    m, INF, p, p; \
	VCMPPD       $3, k, k, m; \
	VBLENDVPD    m, x, p, p

// func exp64AVX2(dst, src *float64, n int)
//
// n is a multiple of 4; 12 values a step (three independent chains), then
// 4 at a time. dst and src may be the same.
TEXT ·exp64AVX2(SB), NOSPLIT, $0-24
	MOVQ    dst+0(FP), DI
	MOVQ    src+8(FP), SI
	MOVQ    n+16(FP), CX
	VMOVUPD ONE, Y15
	CMPQ    CX, $12
	JLT     exp4

exp12:
	EXP4(0(SI), Y0, Y1, Y2, Y3, Y4)
	EXP4(32(SI), Y5, Y6, Y7, Y8, Y9)
	EXP4(64(SI), Y10, Y11, Y12, Y13, Y14)
	VMOVUPD Y2, 0(DI)
	VMOVUPD Y7, 32(DI)
	VMOVUPD Y12, 64(DI)
	ADDQ    $96, SI
	ADDQ    $96, DI
	SUBQ    $12, CX
	CMPQ    CX, $12
	JGE     exp12

exp4:
	TESTQ CX, CX
	JZ    expdone
	EXP4(0(SI), Y0, Y1, Y2, Y3, Y4)
	VMOVUPD Y2, 0(DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $4, CX
	JMP     exp4

expdone:
	VZEROUPPER
	RET

DATA exp64c<>+0(SB)/8, $0x3ff71547652b82fe // log2e
DATA exp64c<>+8(SB)/8, $0x3ff71547652b82fe
DATA exp64c<>+16(SB)/8, $0x3ff71547652b82fe
DATA exp64c<>+24(SB)/8, $0x3ff71547652b82fe
DATA exp64c<>+32(SB)/8, $0x3fe62e42fefa3000 // ln2hi
DATA exp64c<>+40(SB)/8, $0x3fe62e42fefa3000
DATA exp64c<>+48(SB)/8, $0x3fe62e42fefa3000
DATA exp64c<>+56(SB)/8, $0x3fe62e42fefa3000
DATA exp64c<>+64(SB)/8, $0x3d53de6af278ece6 // ln2lo
DATA exp64c<>+72(SB)/8, $0x3d53de6af278ece6
DATA exp64c<>+80(SB)/8, $0x3d53de6af278ece6
DATA exp64c<>+88(SB)/8, $0x3d53de6af278ece6
DATA exp64c<>+96(SB)/8, $0x3fb0000000000000 // 1/16
DATA exp64c<>+104(SB)/8, $0x3fb0000000000000
DATA exp64c<>+112(SB)/8, $0x3fb0000000000000
DATA exp64c<>+120(SB)/8, $0x3fb0000000000000
DATA exp64c<>+128(SB)/8, $0x3efa01a01a01a01a // 1/8!
DATA exp64c<>+136(SB)/8, $0x3efa01a01a01a01a
DATA exp64c<>+144(SB)/8, $0x3efa01a01a01a01a
DATA exp64c<>+152(SB)/8, $0x3efa01a01a01a01a
DATA exp64c<>+160(SB)/8, $0x3f2a01a01a01a01a // 1/7!
DATA exp64c<>+168(SB)/8, $0x3f2a01a01a01a01a
DATA exp64c<>+176(SB)/8, $0x3f2a01a01a01a01a
DATA exp64c<>+184(SB)/8, $0x3f2a01a01a01a01a
DATA exp64c<>+192(SB)/8, $0x3f56c16c16c16c17 // 1/6!
DATA exp64c<>+200(SB)/8, $0x3f56c16c16c16c17
DATA exp64c<>+208(SB)/8, $0x3f56c16c16c16c17
DATA exp64c<>+216(SB)/8, $0x3f56c16c16c16c17
DATA exp64c<>+224(SB)/8, $0x3f81111111111111 // 1/5!
DATA exp64c<>+232(SB)/8, $0x3f81111111111111
DATA exp64c<>+240(SB)/8, $0x3f81111111111111
DATA exp64c<>+248(SB)/8, $0x3f81111111111111
DATA exp64c<>+256(SB)/8, $0x3fa5555555555555 // 1/4!
DATA exp64c<>+264(SB)/8, $0x3fa5555555555555
DATA exp64c<>+272(SB)/8, $0x3fa5555555555555
DATA exp64c<>+280(SB)/8, $0x3fa5555555555555
DATA exp64c<>+288(SB)/8, $0x3fc5555555555555 // 1/3!
DATA exp64c<>+296(SB)/8, $0x3fc5555555555555
DATA exp64c<>+304(SB)/8, $0x3fc5555555555555
DATA exp64c<>+312(SB)/8, $0x3fc5555555555555
DATA exp64c<>+320(SB)/8, $0x3fe0000000000000 // 1/2
DATA exp64c<>+328(SB)/8, $0x3fe0000000000000
DATA exp64c<>+336(SB)/8, $0x3fe0000000000000
DATA exp64c<>+344(SB)/8, $0x3fe0000000000000
DATA exp64c<>+352(SB)/8, $0x3ff0000000000000 // 1
DATA exp64c<>+360(SB)/8, $0x3ff0000000000000
DATA exp64c<>+368(SB)/8, $0x3ff0000000000000
DATA exp64c<>+376(SB)/8, $0x3ff0000000000000
DATA exp64c<>+384(SB)/8, $0x4000000000000000 // 2
DATA exp64c<>+392(SB)/8, $0x4000000000000000
DATA exp64c<>+400(SB)/8, $0x4000000000000000
DATA exp64c<>+408(SB)/8, $0x4000000000000000
DATA exp64c<>+416(SB)/8, $0xc08ff00000000000 // -1022
DATA exp64c<>+424(SB)/8, $0xc08ff00000000000
DATA exp64c<>+432(SB)/8, $0xc08ff00000000000
DATA exp64c<>+440(SB)/8, $0xc08ff00000000000
DATA exp64c<>+448(SB)/8, $0x408ff00000000000 // 1022
DATA exp64c<>+456(SB)/8, $0x408ff00000000000
DATA exp64c<>+464(SB)/8, $0x408ff00000000000
DATA exp64c<>+472(SB)/8, $0x408ff00000000000
DATA exp64c<>+480(SB)/8, $0x43380000000003ff // 1023 + 1.5·2⁵²
DATA exp64c<>+488(SB)/8, $0x43380000000003ff
DATA exp64c<>+496(SB)/8, $0x43380000000003ff
DATA exp64c<>+504(SB)/8, $0x43380000000003ff
DATA exp64c<>+512(SB)/8, $0x0010000000000000 // 2⁻¹⁰²²
DATA exp64c<>+520(SB)/8, $0x0010000000000000
DATA exp64c<>+528(SB)/8, $0x0010000000000000
DATA exp64c<>+536(SB)/8, $0x0010000000000000
DATA exp64c<>+544(SB)/8, $0xc090cc0000000000 // -1075
DATA exp64c<>+552(SB)/8, $0xc090cc0000000000
DATA exp64c<>+560(SB)/8, $0xc090cc0000000000
DATA exp64c<>+568(SB)/8, $0xc090cc0000000000
DATA exp64c<>+576(SB)/8, $0x4090000000000000 // 1024
DATA exp64c<>+584(SB)/8, $0x4090000000000000
DATA exp64c<>+592(SB)/8, $0x4090000000000000
DATA exp64c<>+600(SB)/8, $0x4090000000000000
DATA exp64c<>+608(SB)/8, $0x7ff0000000000000 // +Inf
DATA exp64c<>+616(SB)/8, $0x7ff0000000000000
DATA exp64c<>+624(SB)/8, $0x7ff0000000000000
DATA exp64c<>+632(SB)/8, $0x7ff0000000000000
GLOBL exp64c<>(SB), RODATA|NOPTR, $640

