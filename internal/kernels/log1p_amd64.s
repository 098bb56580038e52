//go:build amd64 && !purego

#include "textflag.h"

// AVX2 float64 log1p (log1p_block.go): four lanes a YMM run exactly the
// operations of each of detmath.Log1p's cases for √2/2 − 1 < x < 2⁵³ (x
// itself below 2⁻⁵⁴, x − x²·½ below 2⁻²⁹, f = x and k = 0 below √2 − 1,
// else u = 1 + x normalised by its exponent k with the correction c, and
// the short form where the normalised mantissa is 0), each a VADDPD,
// VSUBPD, VMULPD or VDIVPD as detmath rounds it (no FMA), and select each
// lane's case by masks. The other lanes (x ≤ √2/2 − 1, x ≥ 2⁵³, Inf,
// NaN) keep x, and their bits are clear in the lane mask stored at own,
// a byte each step; log1ps gives them to detmath.Log1p.

#define ONE log1pc<>+0(SB)
#define TWO log1pc<>+32(SB)
#define HALF log1pc<>+64(SB)
#define KBIAS log1pc<>+96(SB)
#define EXPOR log1pc<>+128(SB)
#define MANT log1pc<>+160(SB)
#define SQRT2M log1pc<>+192(SB)
#define EXP1 log1pc<>+224(SB)
#define EXPH log1pc<>+256(SB)
#define ABS log1pc<>+288(SB)
#define SQ2M1 log1pc<>+320(SB)
#define LN2HI log1pc<>+352(SB)
#define LN2LO log1pc<>+384(SB)
#define TINY log1pc<>+416(SB)
#define SMALL log1pc<>+448(SB)
#define LP7 log1pc<>+480(SB)
#define LP6 log1pc<>+512(SB)
#define LP5 log1pc<>+544(SB)
#define LP4 log1pc<>+576(SB)
#define LP3 log1pc<>+608(SB)
#define LP2 log1pc<>+640(SB)
#define LP1 log1pc<>+672(SB)
#define TWOTHIRDS log1pc<>+704(SB)
#define MHI log1pc<>+736(SB)
#define SQ2HM1 log1pc<>+768(SB)
#define TWO53 log1pc<>+800(SB)

// func log1pAVX2(dst, src *float64, n int, own *uint8)
TEXT ·log1pAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ own+24(FP), R8

step:
	CMPQ CX, $4
	JLT  done
	VMOVUPD 0(SI), Y0            // x
	VADDPD  ONE, Y0, Y1          // u = 1 + x
	VPSRLQ  $52, Y1, Y2
	VPOR    EXPOR, Y2, Y2
	VSUBPD  KBIAS, Y2, Y2        // k = u's exponent − 1023, exactly
	VSUBPD  Y0, Y1, Y3
	VMOVUPD ONE, Y4
	VSUBPD  Y3, Y4, Y3           // 1 − (u − x)
	VSUBPD  ONE, Y1, Y4
	VSUBPD  Y4, Y0, Y4           // x − (u − 1)
	VXORPD  Y5, Y5, Y5
	VCMPPD  $1, Y2, Y5, Y6       // 0 < k
	VBLENDVPD Y6, Y3, Y4, Y3
	VDIVPD  Y1, Y3, Y3           // c = (k > 0 ? 1 − (u − x) : x − (u − 1))/u
	VPAND   MANT, Y1, Y4         // iu = u's mantissa
	VMOVDQU SQRT2M, Y5
	VPCMPGTQ Y4, Y5, Y5          // lo: iu < √2's mantissa
	VADDPD  ONE, Y2, Y6
	VBLENDVPD Y5, Y2, Y6, Y2     // k, or k + 1 above √2
	VMOVUPD EXPH, Y6
	VBLENDVPD Y5, EXP1, Y6, Y6
	VPOR    Y4, Y6, Y6           // u normalised to [1, 2) or [½, 1)
	VPXOR   Y5, Y5, Y5
	VPCMPEQQ Y5, Y4, Y5
	VPCMPGTQ MHI, Y4, Y1
	VPOR    Y1, Y5, Y5           // the normalised mantissa is 0: iu = 0 or > 2⁵² − 4
	VSUBPD  ONE, Y6, Y6          // f = u − 1
	VANDPD  ABS, Y0, Y7          // |x|
	VCMPPD  $1, SQ2M1, Y7, Y8    // |x| < √2 − 1: k = 0, f = x
	VBLENDVPD Y8, Y0, Y6, Y6
	VANDNPD Y2, Y8, Y2
	VADDPD  TWO, Y6, Y9
	VDIVPD  Y9, Y6, Y9           // s = f/(2 + f)
	VMULPD  Y9, Y9, Y10          // z = s²
	VMULPD  LP7, Y10, Y11        // R = z·Lp7, then z·(Lpᵢ + R)
	VADDPD  LP6, Y11, Y11
	VMULPD  Y10, Y11, Y11
	VADDPD  LP5, Y11, Y11
	VMULPD  Y10, Y11, Y11
	VADDPD  LP4, Y11, Y11
	VMULPD  Y10, Y11, Y11
	VADDPD  LP3, Y11, Y11
	VMULPD  Y10, Y11, Y11
	VADDPD  LP2, Y11, Y11
	VMULPD  Y10, Y11, Y11
	VADDPD  LP1, Y11, Y11
	VMULPD  Y10, Y11, Y11
	VMULPD  HALF, Y6, Y12
	VMULPD  Y6, Y12, Y12         // hfsq = ½f·f
	VADDPD  Y11, Y12, Y13
	VMULPD  Y9, Y13, Y13         // s·(hfsq + R)
	VSUBPD  Y13, Y12, Y14
	VSUBPD  Y14, Y6, Y14         // k = 0: f − (hfsq − s·(hfsq + R))
	VMULPD  LN2LO, Y2, Y15
	VADDPD  Y3, Y15, Y15
	VADDPD  Y15, Y13, Y15
	VSUBPD  Y15, Y12, Y15
	VSUBPD  Y6, Y15, Y15
	VMULPD  LN2HI, Y2, Y13
	VSUBPD  Y15, Y13, Y15        // k·ln2Hi − ((hfsq − (s·(hfsq + R) + (k·ln2Lo + c))) − f)
	VXORPD  Y13, Y13, Y13
	VCMPPD  $0, Y13, Y2, Y13     // k = 0
	VBLENDVPD Y13, Y14, Y15, Y14 // r
	VMULPD  TWOTHIRDS, Y6, Y1    // the normalised mantissa 0 (|f| < 2⁻²⁰):
	VMOVUPD ONE, Y4
	VSUBPD  Y1, Y4, Y1
	VMULPD  Y1, Y12, Y1          // R = hfsq·(1 − ⅔f)
	VSUBPD  Y1, Y6, Y9           // k = 0: f − R
	VMULPD  LN2LO, Y2, Y10
	VADDPD  Y3, Y10, Y11
	VSUBPD  Y11, Y1, Y11
	VSUBPD  Y6, Y11, Y11
	VMULPD  LN2HI, Y2, Y4
	VSUBPD  Y11, Y4, Y11         // k·ln2Hi − ((R − (k·ln2Lo + c)) − f)
	VADDPD  Y3, Y10, Y10
	VADDPD  Y10, Y4, Y10         // f = 0: k·ln2Hi + (c + k·ln2Lo)
	VBLENDVPD Y13, Y9, Y11, Y11
	VANDNPD Y10, Y13, Y10        // f = 0 and k = 0: 0
	VXORPD  Y15, Y15, Y15
	VCMPPD  $0, Y15, Y6, Y15
	VBLENDVPD Y15, Y10, Y11, Y11
	VANDNPD Y5, Y8, Y5
	VBLENDVPD Y5, Y11, Y14, Y14  // r, or the mantissa-0 case where k ≠ 0
	VMULPD  Y0, Y0, Y15
	VMULPD  HALF, Y15, Y15
	VSUBPD  Y15, Y0, Y15         // x − x·x·½
	VCMPPD  $1, TINY, Y7, Y13
	VBLENDVPD Y13, Y0, Y15, Y15  // x below 2⁻⁵⁴
	VCMPPD  $1, SMALL, Y7, Y13
	VBLENDVPD Y13, Y15, Y14, Y14 // below 2⁻²⁹
	VMOVUPD SQ2HM1, Y1
	VCMPPD  $1, Y0, Y1, Y1
	VCMPPD  $1, TWO53, Y0, Y4
	VANDPD  Y4, Y1, Y1           // ours: √2/2 − 1 < x < 2⁵²
	VBLENDVPD Y1, Y14, Y0, Y14   // x kept in the others
	VMOVMSKPD Y1, AX
	MOVB    AX, 0(R8)
	INCQ    R8
	VMOVUPD Y14, 0(DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $4, CX
	JMP     step

done:
	VZEROUPPER
	RET

DATA log1pc<>+0(SB)/8, $0x3ff0000000000000 // 1
DATA log1pc<>+8(SB)/8, $0x3ff0000000000000
DATA log1pc<>+16(SB)/8, $0x3ff0000000000000
DATA log1pc<>+24(SB)/8, $0x3ff0000000000000
DATA log1pc<>+32(SB)/8, $0x4000000000000000 // 2
DATA log1pc<>+40(SB)/8, $0x4000000000000000
DATA log1pc<>+48(SB)/8, $0x4000000000000000
DATA log1pc<>+56(SB)/8, $0x4000000000000000
DATA log1pc<>+64(SB)/8, $0x3fe0000000000000 // 0.5
DATA log1pc<>+72(SB)/8, $0x3fe0000000000000
DATA log1pc<>+80(SB)/8, $0x3fe0000000000000
DATA log1pc<>+88(SB)/8, $0x3fe0000000000000
DATA log1pc<>+96(SB)/8, $0x43300000000003ff // 2⁵² + 1023
DATA log1pc<>+104(SB)/8, $0x43300000000003ff
DATA log1pc<>+112(SB)/8, $0x43300000000003ff
DATA log1pc<>+120(SB)/8, $0x43300000000003ff
DATA log1pc<>+128(SB)/8, $0x4330000000000000 // 2⁵² as bits, or'ed over the exponent
DATA log1pc<>+136(SB)/8, $0x4330000000000000
DATA log1pc<>+144(SB)/8, $0x4330000000000000
DATA log1pc<>+152(SB)/8, $0x4330000000000000
DATA log1pc<>+160(SB)/8, $0x000fffffffffffff // mantissa mask
DATA log1pc<>+168(SB)/8, $0x000fffffffffffff
DATA log1pc<>+176(SB)/8, $0x000fffffffffffff
DATA log1pc<>+184(SB)/8, $0x000fffffffffffff
DATA log1pc<>+192(SB)/8, $0x0006a09e667f3bcd // √2's mantissa
DATA log1pc<>+200(SB)/8, $0x0006a09e667f3bcd
DATA log1pc<>+208(SB)/8, $0x0006a09e667f3bcd
DATA log1pc<>+216(SB)/8, $0x0006a09e667f3bcd
DATA log1pc<>+224(SB)/8, $0x3ff0000000000000 // exponent of [1, 2)
DATA log1pc<>+232(SB)/8, $0x3ff0000000000000
DATA log1pc<>+240(SB)/8, $0x3ff0000000000000
DATA log1pc<>+248(SB)/8, $0x3ff0000000000000
DATA log1pc<>+256(SB)/8, $0x3fe0000000000000 // exponent of [½, 1)
DATA log1pc<>+264(SB)/8, $0x3fe0000000000000
DATA log1pc<>+272(SB)/8, $0x3fe0000000000000
DATA log1pc<>+280(SB)/8, $0x3fe0000000000000
DATA log1pc<>+288(SB)/8, $0x7fffffffffffffff // sign mask complement
DATA log1pc<>+296(SB)/8, $0x7fffffffffffffff
DATA log1pc<>+304(SB)/8, $0x7fffffffffffffff
DATA log1pc<>+312(SB)/8, $0x7fffffffffffffff
DATA log1pc<>+320(SB)/8, $0x3fda827999fcef32 // √2 − 1
DATA log1pc<>+328(SB)/8, $0x3fda827999fcef32
DATA log1pc<>+336(SB)/8, $0x3fda827999fcef32
DATA log1pc<>+344(SB)/8, $0x3fda827999fcef32
DATA log1pc<>+352(SB)/8, $0x3fe62e42fee00000 // ln2Hi
DATA log1pc<>+360(SB)/8, $0x3fe62e42fee00000
DATA log1pc<>+368(SB)/8, $0x3fe62e42fee00000
DATA log1pc<>+376(SB)/8, $0x3fe62e42fee00000
DATA log1pc<>+384(SB)/8, $0x3dea39ef35793c76 // ln2Lo
DATA log1pc<>+392(SB)/8, $0x3dea39ef35793c76
DATA log1pc<>+400(SB)/8, $0x3dea39ef35793c76
DATA log1pc<>+408(SB)/8, $0x3dea39ef35793c76
DATA log1pc<>+416(SB)/8, $0x3c90000000000000 // 2⁻⁵⁴
DATA log1pc<>+424(SB)/8, $0x3c90000000000000
DATA log1pc<>+432(SB)/8, $0x3c90000000000000
DATA log1pc<>+440(SB)/8, $0x3c90000000000000
DATA log1pc<>+448(SB)/8, $0x3e20000000000000 // 2⁻²⁹
DATA log1pc<>+456(SB)/8, $0x3e20000000000000
DATA log1pc<>+464(SB)/8, $0x3e20000000000000
DATA log1pc<>+472(SB)/8, $0x3e20000000000000
DATA log1pc<>+480(SB)/8, $0x3fc2f112df3e5244 // Lp7
DATA log1pc<>+488(SB)/8, $0x3fc2f112df3e5244
DATA log1pc<>+496(SB)/8, $0x3fc2f112df3e5244
DATA log1pc<>+504(SB)/8, $0x3fc2f112df3e5244
DATA log1pc<>+512(SB)/8, $0x3fc39a09d078c69f // Lp6
DATA log1pc<>+520(SB)/8, $0x3fc39a09d078c69f
DATA log1pc<>+528(SB)/8, $0x3fc39a09d078c69f
DATA log1pc<>+536(SB)/8, $0x3fc39a09d078c69f
DATA log1pc<>+544(SB)/8, $0x3fc7466496cb03de // Lp5
DATA log1pc<>+552(SB)/8, $0x3fc7466496cb03de
DATA log1pc<>+560(SB)/8, $0x3fc7466496cb03de
DATA log1pc<>+568(SB)/8, $0x3fc7466496cb03de
DATA log1pc<>+576(SB)/8, $0x3fcc71c51d8e78af // Lp4
DATA log1pc<>+584(SB)/8, $0x3fcc71c51d8e78af
DATA log1pc<>+592(SB)/8, $0x3fcc71c51d8e78af
DATA log1pc<>+600(SB)/8, $0x3fcc71c51d8e78af
DATA log1pc<>+608(SB)/8, $0x3fd2492494229359 // Lp3
DATA log1pc<>+616(SB)/8, $0x3fd2492494229359
DATA log1pc<>+624(SB)/8, $0x3fd2492494229359
DATA log1pc<>+632(SB)/8, $0x3fd2492494229359
DATA log1pc<>+640(SB)/8, $0x3fd999999997fa04 // Lp2
DATA log1pc<>+648(SB)/8, $0x3fd999999997fa04
DATA log1pc<>+656(SB)/8, $0x3fd999999997fa04
DATA log1pc<>+664(SB)/8, $0x3fd999999997fa04
DATA log1pc<>+672(SB)/8, $0x3fe5555555555593 // Lp1
DATA log1pc<>+680(SB)/8, $0x3fe5555555555593
DATA log1pc<>+688(SB)/8, $0x3fe5555555555593
DATA log1pc<>+696(SB)/8, $0x3fe5555555555593
DATA log1pc<>+704(SB)/8, $0x3fe5555555555555 // 0.66666666666666666
DATA log1pc<>+712(SB)/8, $0x3fe5555555555555
DATA log1pc<>+720(SB)/8, $0x3fe5555555555555
DATA log1pc<>+728(SB)/8, $0x3fe5555555555555
DATA log1pc<>+736(SB)/8, $0x000ffffffffffffc // 2⁵² − 4: above it (2⁵² − iu)/4 is 0
DATA log1pc<>+744(SB)/8, $0x000ffffffffffffc
DATA log1pc<>+752(SB)/8, $0x000ffffffffffffc
DATA log1pc<>+760(SB)/8, $0x000ffffffffffffc
DATA log1pc<>+768(SB)/8, $0xbfd2bec333018867 // √2/2 − 1
DATA log1pc<>+776(SB)/8, $0xbfd2bec333018867
DATA log1pc<>+784(SB)/8, $0xbfd2bec333018867
DATA log1pc<>+792(SB)/8, $0xbfd2bec333018867
DATA log1pc<>+800(SB)/8, $0x4340000000000000 // 2⁵³
DATA log1pc<>+808(SB)/8, $0x4340000000000000
DATA log1pc<>+816(SB)/8, $0x4340000000000000
DATA log1pc<>+824(SB)/8, $0x4340000000000000
GLOBL log1pc<>(SB), RODATA|NOPTR, $832
