//go:build amd64 && !purego

#include "textflag.h"

// AVX2 float64 erf (erf_block.go) in two passes around exp64AVX2 (which
// takes the exponent arguments of the steps of four with a lane from
// 1.25 only, packed by erfPrepAVX2 without a branch): each
// lane runs exactly the operations of detmath.Erf on |x| for its range,
// each a VADDPD, VSUBPD, VMULPD or VDIVPD as detmath rounds it (no FMA),
// and takes the sign of x (detmath.Erf is odd bit for bit). The range's
// rational approximation P(t)/Q(t) is one Horner chain, its coefficients
// picked per lane by VPERMD from tables of the four ranges' (numerators
// padded with leading zeros: 0 + t·0 = 0, c + t·0 = c, so the padding
// changes no bit); t is |x|² below 0.84375, |x| − 1 below 1.25, 1/|x|²
// above. Lanes below 2⁻²⁸ and NaN keep x, their bits clear in the lane
// mask; erfs gives them to detmath.Erf.

#define ABS erfc<>+0(SB)
#define SIGN erfc<>+32(SB)
#define HI32 erfc<>+64(SB)
#define ONEHI erfc<>+96(SB)
#define ONE erfc<>+128(SB)
#define SMALL erfc<>+160(SB)
#define B1 erfc<>+192(SB)
#define B2 erfc<>+224(SB)
#define B3 erfc<>+256(SB)
#define B4 erfc<>+288(SB)
#define ERX erfc<>+320(SB)
#define C0562 erfc<>+352(SB)
#define NUM7 erfc<>+384(SB)
#define NUM6 erfc<>+416(SB)
#define NUM5 erfc<>+448(SB)
#define NUM4 erfc<>+480(SB)
#define NUM3 erfc<>+512(SB)
#define NUM2 erfc<>+544(SB)
#define NUM1 erfc<>+576(SB)
#define NUM0 erfc<>+608(SB)
#define DEN8 erfc<>+640(SB)
#define DEN7 erfc<>+672(SB)
#define DEN6 erfc<>+704(SB)
#define DEN5 erfc<>+736(SB)
#define DEN4 erfc<>+768(SB)
#define DEN3 erfc<>+800(SB)
#define DEN2 erfc<>+832(SB)
#define DEN1 erfc<>+864(SB)
#define DEN0 erfc<>+896(SB)

// func erfPrepAVX2(w, e, src *float64, n int) int
//
// w gets the result below 1.25. For each step of four with a lane from
// 1.25, e gets the two exponent arguments, −z² − 0.5625 and
// (z − |x|)(z + |x|) + P/Q, z being |x| with its low 32 bits cleared,
// eight values (the four first arguments, then the four second); it
// returns how many it wrote. n is a multiple of 4.
TEXT ·erfPrepAVX2(SB), NOSPLIT, $0-40
	MOVQ w+0(FP), DI
	MOVQ e+8(FP), R8
	MOVQ R8, R9
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX

prep:
	CMPQ      CX, $4
	JLT       prepdone
	VMOVUPD   0(SI), Y0
	VANDPD    ABS, Y0, Y1        // a = |x|
	VCMPPD    $13, B1, Y1, Y2    // a ≥ 0.84375
	VCMPPD    $13, B2, Y1, Y3    // a ≥ 1.25
	VCMPPD    $13, B3, Y1, Y4    // a ≥ 1/0.35
	VPADDQ    Y3, Y2, Y5
	VPADDQ    Y4, Y5, Y5
	VPXOR     Y6, Y6, Y6
	VPSUBQ    Y5, Y6, Y5         // the range r, 0 to 3
	VPADDQ    Y5, Y5, Y5
	VPSLLQ    $32, Y5, Y6
	VPOR      Y6, Y5, Y5
	VPOR      ONEHI, Y5, Y5      // the dword indices 2r, 2r + 1
	VMULPD    Y1, Y1, Y6         // a²
	VSUBPD    ONE, Y1, Y7        // a − 1
	VBLENDVPD Y2, Y7, Y6, Y7
	VMOVUPD   ONE, Y8
	VDIVPD    Y6, Y8, Y8         // 1/a²
	VBLENDVPD Y3, Y8, Y7, Y6     // t
	VPERMD    NUM7, Y5, Y8
	VPERMD    NUM6, Y5, Y10
	VMULPD    Y6, Y8, Y8
	VADDPD    Y10, Y8, Y8
	VPERMD    NUM5, Y5, Y10
	VMULPD    Y6, Y8, Y8
	VADDPD    Y10, Y8, Y8
	VPERMD    NUM4, Y5, Y10
	VMULPD    Y6, Y8, Y8
	VADDPD    Y10, Y8, Y8
	VPERMD    NUM3, Y5, Y10
	VMULPD    Y6, Y8, Y8
	VADDPD    Y10, Y8, Y8
	VPERMD    NUM2, Y5, Y10
	VMULPD    Y6, Y8, Y8
	VADDPD    Y10, Y8, Y8
	VPERMD    NUM1, Y5, Y10
	VMULPD    Y6, Y8, Y8
	VADDPD    Y10, Y8, Y8
	VPERMD    NUM0, Y5, Y10
	VMULPD    Y6, Y8, Y8
	VADDPD    Y10, Y8, Y8
	VPERMD    DEN8, Y5, Y9
	VPERMD    DEN7, Y5, Y10
	VMULPD    Y6, Y9, Y9
	VADDPD    Y10, Y9, Y9
	VPERMD    DEN6, Y5, Y10
	VMULPD    Y6, Y9, Y9
	VADDPD    Y10, Y9, Y9
	VPERMD    DEN5, Y5, Y10
	VMULPD    Y6, Y9, Y9
	VADDPD    Y10, Y9, Y9
	VPERMD    DEN4, Y5, Y10
	VMULPD    Y6, Y9, Y9
	VADDPD    Y10, Y9, Y9
	VPERMD    DEN3, Y5, Y10
	VMULPD    Y6, Y9, Y9
	VADDPD    Y10, Y9, Y9
	VPERMD    DEN2, Y5, Y10
	VMULPD    Y6, Y9, Y9
	VADDPD    Y10, Y9, Y9
	VPERMD    DEN1, Y5, Y10
	VMULPD    Y6, Y9, Y9
	VADDPD    Y10, Y9, Y9
	VPERMD    DEN0, Y5, Y10
	VMULPD    Y6, Y9, Y9
	VADDPD    Y10, Y9, Y9
	VDIVPD    Y9, Y8, Y8         // y = P/Q
	VMULPD    Y8, Y1, Y9
	VADDPD    Y1, Y9, Y9         // a + a·y
	VADDPD    ERX, Y8, Y10       // erx + y
	VBLENDVPD Y2, Y10, Y9, Y9
	VMOVUPD   Y9, 0(DI)
	VANDPD    HI32, Y1, Y10      // z
	VMULPD    Y10, Y10, Y11
	VXORPD    SIGN, Y11, Y11
	VSUBPD    C0562, Y11, Y11    // −z² − 0.5625
	VMOVUPD   Y11, 0(R8)
	VSUBPD    Y1, Y10, Y12
	VADDPD    Y1, Y10, Y13
	VMULPD    Y13, Y12, Y12
	VADDPD    Y8, Y12, Y12       // (z − a)(z + a) + y
	VMOVUPD   Y12, 32(R8)
	VMOVMSKPD Y3, AX             // lanes from 1.25: keep the arguments
	TESTL     AX, AX
	SETNE     AL
	MOVBQZX   AL, AX
	SHLQ      $6, AX
	ADDQ      AX, R8
	ADDQ      $32, SI
	ADDQ      $32, DI
	SUBQ      $4, CX
	JMP       prep

prepdone:
	SUBQ      R9, R8
	SHRQ      $3, R8
	MOVQ      R8, ret+32(FP)
	VZEROUPPER
	RET

// func erfDoneAVX2(dst, src, w, e *float64, n int, own *uint8)
//
// dst gets w below 1.25, 1 − e₁·e₂/|x| below 6 (e₁, e₂ the exponentials
// erfPrepAVX2's arguments became, in e), 1 above, with x's sign, and x
// below 2⁻²⁸ and for NaN; own[i/4] has bit i%4 set for the others.
TEXT ·erfDoneAVX2(SB), NOSPLIT, $0-48
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ w+16(FP), BX
	MOVQ e+24(FP), R8
	MOVQ n+32(FP), CX
	MOVQ own+40(FP), R10

done:
	CMPQ      CX, $4
	JLT       donedone
	VMOVUPD   0(SI), Y0
	VANDPD    ABS, Y0, Y1        // a
	VANDPD    SIGN, Y0, Y2
	VMOVUPD   0(R8), Y3
	VMULPD    32(R8), Y3, Y3     // e₁·e₂
	VDIVPD    Y1, Y3, Y3
	VMOVUPD   ONE, Y4
	VSUBPD    Y3, Y4, Y3         // 1 − e1·e2/a
	VCMPPD    $13, B4, Y1, Y4
	VBLENDVPD Y4, ONE, Y3, Y3    // 1 from 6
	VCMPPD    $13, B2, Y1, Y4
	VMOVMSKPD Y4, DX             // lanes from 1.25: the next eight of e
	TESTL     DX, DX
	SETNE     DL
	MOVBQZX   DL, DX
	SHLQ      $6, DX
	ADDQ      DX, R8
	VMOVUPD   0(BX), Y5
	VBLENDVPD Y4, Y3, Y5, Y3     // w below 1.25
	VORPD     Y2, Y3, Y3         // x's sign
	VCMPPD    $13, SMALL, Y1, Y4 // a ≥ 2⁻²⁸, not NaN
	VBLENDVPD Y4, Y3, Y0, Y3
	VMOVMSKPD Y4, AX
	MOVB      AX, 0(R10)
	INCQ      R10
	VMOVUPD   Y3, 0(DI)
	ADDQ      $32, SI
	ADDQ      $32, DI
	ADDQ      $32, BX
	SUBQ      $4, CX
	JMP       done

donedone:
	VZEROUPPER
	RET

DATA erfc<>+0(SB)/8, $0x7fffffffffffffff // sign mask complement
DATA erfc<>+8(SB)/8, $0x7fffffffffffffff
DATA erfc<>+16(SB)/8, $0x7fffffffffffffff
DATA erfc<>+24(SB)/8, $0x7fffffffffffffff
DATA erfc<>+32(SB)/8, $0x8000000000000000 // sign mask
DATA erfc<>+40(SB)/8, $0x8000000000000000
DATA erfc<>+48(SB)/8, $0x8000000000000000
DATA erfc<>+56(SB)/8, $0x8000000000000000
DATA erfc<>+64(SB)/8, $0xffffffff00000000 // high 32 bits
DATA erfc<>+72(SB)/8, $0xffffffff00000000
DATA erfc<>+80(SB)/8, $0xffffffff00000000
DATA erfc<>+88(SB)/8, $0xffffffff00000000
DATA erfc<>+96(SB)/8, $0x0000000100000000 // 1 in the high dword
DATA erfc<>+104(SB)/8, $0x0000000100000000
DATA erfc<>+112(SB)/8, $0x0000000100000000
DATA erfc<>+120(SB)/8, $0x0000000100000000
DATA erfc<>+128(SB)/8, $0x3ff0000000000000 // 1
DATA erfc<>+136(SB)/8, $0x3ff0000000000000
DATA erfc<>+144(SB)/8, $0x3ff0000000000000
DATA erfc<>+152(SB)/8, $0x3ff0000000000000
DATA erfc<>+160(SB)/8, $0x3e30000000000000 // 2⁻²⁸
DATA erfc<>+168(SB)/8, $0x3e30000000000000
DATA erfc<>+176(SB)/8, $0x3e30000000000000
DATA erfc<>+184(SB)/8, $0x3e30000000000000
DATA erfc<>+192(SB)/8, $0x3feb000000000000 // 0.84375
DATA erfc<>+200(SB)/8, $0x3feb000000000000
DATA erfc<>+208(SB)/8, $0x3feb000000000000
DATA erfc<>+216(SB)/8, $0x3feb000000000000
DATA erfc<>+224(SB)/8, $0x3ff4000000000000 // 1.25
DATA erfc<>+232(SB)/8, $0x3ff4000000000000
DATA erfc<>+240(SB)/8, $0x3ff4000000000000
DATA erfc<>+248(SB)/8, $0x3ff4000000000000
DATA erfc<>+256(SB)/8, $0x4006db6db6db6db7 // 1/0.35
DATA erfc<>+264(SB)/8, $0x4006db6db6db6db7
DATA erfc<>+272(SB)/8, $0x4006db6db6db6db7
DATA erfc<>+280(SB)/8, $0x4006db6db6db6db7
DATA erfc<>+288(SB)/8, $0x4018000000000000 // 6
DATA erfc<>+296(SB)/8, $0x4018000000000000
DATA erfc<>+304(SB)/8, $0x4018000000000000
DATA erfc<>+312(SB)/8, $0x4018000000000000
DATA erfc<>+320(SB)/8, $0x3feb0ac160000000 // erx
DATA erfc<>+328(SB)/8, $0x3feb0ac160000000
DATA erfc<>+336(SB)/8, $0x3feb0ac160000000
DATA erfc<>+344(SB)/8, $0x3feb0ac160000000
DATA erfc<>+352(SB)/8, $0x3fe2000000000000 // 0.5625
DATA erfc<>+360(SB)/8, $0x3fe2000000000000
DATA erfc<>+368(SB)/8, $0x3fe2000000000000
DATA erfc<>+376(SB)/8, $0x3fe2000000000000
DATA erfc<>+384(SB)/8, $0x0000000000000000 // t^7 in the numerators of the four ranges
DATA erfc<>+392(SB)/8, $0x0000000000000000
DATA erfc<>+400(SB)/8, $0xc023a0efc69ac25c
DATA erfc<>+408(SB)/8, $0x0000000000000000
DATA erfc<>+416(SB)/8, $0x0000000000000000 // t^6 in the numerators of the four ranges
DATA erfc<>+424(SB)/8, $0xbf61bf380a96073f
DATA erfc<>+432(SB)/8, $0xc054526557e4d2f2
DATA erfc<>+440(SB)/8, $0xc07e384e9bdc383f
DATA erfc<>+448(SB)/8, $0x0000000000000000 // t^5 in the numerators of the four ranges
DATA erfc<>+456(SB)/8, $0x3fa22a36599795eb
DATA erfc<>+464(SB)/8, $0xc067135cebccabb2
DATA erfc<>+472(SB)/8, $0xc09004616a2e5992
DATA erfc<>+480(SB)/8, $0xbef8ead6120016ac // t^4 in the numerators of the four ranges
DATA erfc<>+488(SB)/8, $0xbfbc63983d3e28ec
DATA erfc<>+496(SB)/8, $0xc0644cb184282266
DATA erfc<>+504(SB)/8, $0xc083ec881375f228
DATA erfc<>+512(SB)/8, $0xbf77a291236668e4 // t^3 in the numerators of the four ranges
DATA erfc<>+520(SB)/8, $0x3fd45fca805120e4
DATA erfc<>+528(SB)/8, $0xc04f300ae4cba38d
DATA erfc<>+536(SB)/8, $0xc064145d43c5ed98
DATA erfc<>+544(SB)/8, $0xbf9d2a51dbd7194f // t^2 in the numerators of the four ranges
DATA erfc<>+552(SB)/8, $0xbfd7d240fbb8c3f1
DATA erfc<>+560(SB)/8, $0xc0251e0441b0e726
DATA erfc<>+568(SB)/8, $0xc031c209555f995a
DATA erfc<>+576(SB)/8, $0xbfd4cd7d691cb913 // t^1 in the numerators of the four ranges
DATA erfc<>+584(SB)/8, $0x3fda8d00ad92b34d
DATA erfc<>+592(SB)/8, $0xbfe63416e4ba7360
DATA erfc<>+600(SB)/8, $0xbfe993ba70c285de
DATA erfc<>+608(SB)/8, $0x3fc06eba8214db68 // t^0 in the numerators of the four ranges
DATA erfc<>+616(SB)/8, $0xbf6359b8bef77538
DATA erfc<>+624(SB)/8, $0xbf843412600d6435
DATA erfc<>+632(SB)/8, $0xbf84341239e86f4a
DATA erfc<>+640(SB)/8, $0x0000000000000000 // t^8 in the denominators
DATA erfc<>+648(SB)/8, $0x0000000000000000
DATA erfc<>+656(SB)/8, $0xbfaeeff2ee749a62
DATA erfc<>+664(SB)/8, $0x0000000000000000
DATA erfc<>+672(SB)/8, $0x0000000000000000 // t^7 in the denominators
DATA erfc<>+680(SB)/8, $0x0000000000000000
DATA erfc<>+688(SB)/8, $0x401a47ef8e484a93
DATA erfc<>+696(SB)/8, $0xc03670e242712d62
DATA erfc<>+704(SB)/8, $0x0000000000000000 // t^6 in the denominators
DATA erfc<>+712(SB)/8, $0x3f888b545735151d
DATA erfc<>+720(SB)/8, $0x405b28a3ee48ae2c
DATA erfc<>+728(SB)/8, $0x407da874e79fe763
DATA erfc<>+736(SB)/8, $0xbed09c4342a26120 // t^5 in the denominators
DATA erfc<>+744(SB)/8, $0x3f8bedc26b51dd1c
DATA erfc<>+752(SB)/8, $0x407ad02157700314
DATA erfc<>+760(SB)/8, $0x40a3f219cedf3be6
DATA erfc<>+768(SB)/8, $0x3f215dc9221c1a10 // t^4 in the denominators
DATA erfc<>+776(SB)/8, $0x3fc02660e763351f
DATA erfc<>+784(SB)/8, $0x40842b1921ec2868
DATA erfc<>+792(SB)/8, $0x40a8ffb7688c246a
DATA erfc<>+800(SB)/8, $0x3f74d022c4d36b0f // t^3 in the denominators
DATA erfc<>+808(SB)/8, $0x3fb2635cd99fe9a7
DATA erfc<>+816(SB)/8, $0x407b290dd58a1a71
DATA erfc<>+824(SB)/8, $0x409802eb189d5118
DATA erfc<>+832(SB)/8, $0x3fb0a54c5536ceba // t^2 in the denominators
DATA erfc<>+840(SB)/8, $0x3fe14af092eb6f33
DATA erfc<>+848(SB)/8, $0x4061350c526ae721
DATA erfc<>+856(SB)/8, $0x40745cae221b9f0a
DATA erfc<>+864(SB)/8, $0x3fd97779cddadc09 // t^1 in the denominators
DATA erfc<>+872(SB)/8, $0x3fbb3e6618eee323
DATA erfc<>+880(SB)/8, $0x4033a6b9bd707687
DATA erfc<>+888(SB)/8, $0x403e568b261d5190
DATA erfc<>+896(SB)/8, $0x3ff0000000000000 // t^0 in the denominators
DATA erfc<>+904(SB)/8, $0x3ff0000000000000
DATA erfc<>+912(SB)/8, $0x3ff0000000000000
DATA erfc<>+920(SB)/8, $0x3ff0000000000000
GLOBL erfc<>(SB), RODATA|NOPTR, $928
