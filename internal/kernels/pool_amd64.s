//go:build amd64 && !purego

#include "textflag.h"

// Permutation tables: even and odd lanes of a 32-float pair of registers,
// and the inverse interleave of two 16-float registers.
DATA poolEven<>+0(SB)/4, $0
DATA poolEven<>+4(SB)/4, $2
DATA poolEven<>+8(SB)/4, $4
DATA poolEven<>+12(SB)/4, $6
DATA poolEven<>+16(SB)/4, $8
DATA poolEven<>+20(SB)/4, $10
DATA poolEven<>+24(SB)/4, $12
DATA poolEven<>+28(SB)/4, $14
DATA poolEven<>+32(SB)/4, $16
DATA poolEven<>+36(SB)/4, $18
DATA poolEven<>+40(SB)/4, $20
DATA poolEven<>+44(SB)/4, $22
DATA poolEven<>+48(SB)/4, $24
DATA poolEven<>+52(SB)/4, $26
DATA poolEven<>+56(SB)/4, $28
DATA poolEven<>+60(SB)/4, $30
GLOBL poolEven<>(SB), RODATA|NOPTR, $64

DATA poolOdd<>+0(SB)/4, $1
DATA poolOdd<>+4(SB)/4, $3
DATA poolOdd<>+8(SB)/4, $5
DATA poolOdd<>+12(SB)/4, $7
DATA poolOdd<>+16(SB)/4, $9
DATA poolOdd<>+20(SB)/4, $11
DATA poolOdd<>+24(SB)/4, $13
DATA poolOdd<>+28(SB)/4, $15
DATA poolOdd<>+32(SB)/4, $17
DATA poolOdd<>+36(SB)/4, $19
DATA poolOdd<>+40(SB)/4, $21
DATA poolOdd<>+44(SB)/4, $23
DATA poolOdd<>+48(SB)/4, $25
DATA poolOdd<>+52(SB)/4, $27
DATA poolOdd<>+56(SB)/4, $29
DATA poolOdd<>+60(SB)/4, $31
GLOBL poolOdd<>(SB), RODATA|NOPTR, $64

DATA poolIlvLo<>+0(SB)/4, $0
DATA poolIlvLo<>+4(SB)/4, $16
DATA poolIlvLo<>+8(SB)/4, $1
DATA poolIlvLo<>+12(SB)/4, $17
DATA poolIlvLo<>+16(SB)/4, $2
DATA poolIlvLo<>+20(SB)/4, $18
DATA poolIlvLo<>+24(SB)/4, $3
DATA poolIlvLo<>+28(SB)/4, $19
DATA poolIlvLo<>+32(SB)/4, $4
DATA poolIlvLo<>+36(SB)/4, $20
DATA poolIlvLo<>+40(SB)/4, $5
DATA poolIlvLo<>+44(SB)/4, $21
DATA poolIlvLo<>+48(SB)/4, $6
DATA poolIlvLo<>+52(SB)/4, $22
DATA poolIlvLo<>+56(SB)/4, $7
DATA poolIlvLo<>+60(SB)/4, $23
GLOBL poolIlvLo<>(SB), RODATA|NOPTR, $64

DATA poolIlvHi<>+0(SB)/4, $8
DATA poolIlvHi<>+4(SB)/4, $24
DATA poolIlvHi<>+8(SB)/4, $9
DATA poolIlvHi<>+12(SB)/4, $25
DATA poolIlvHi<>+16(SB)/4, $10
DATA poolIlvHi<>+20(SB)/4, $26
DATA poolIlvHi<>+24(SB)/4, $11
DATA poolIlvHi<>+28(SB)/4, $27
DATA poolIlvHi<>+32(SB)/4, $12
DATA poolIlvHi<>+36(SB)/4, $28
DATA poolIlvHi<>+40(SB)/4, $13
DATA poolIlvHi<>+44(SB)/4, $29
DATA poolIlvHi<>+48(SB)/4, $14
DATA poolIlvHi<>+52(SB)/4, $30
DATA poolIlvHi<>+56(SB)/4, $15
DATA poolIlvHi<>+60(SB)/4, $31
GLOBL poolIlvHi<>(SB), RODATA|NOPTR, $64

// func maxpool512(y *float32, code *uint8, x *float32, planes, h, w int, bias *float32, nc int, lo float32)
//
// 2×2, stride-2 max-pooling of planes h×w planes: y[p][oy][ox] =
// max(m + bias[p mod nc], lo) (bias 0 when the pointer is nil) where m is the
// first maximum, in the order (0,0), (0,1), (1,0), (1,1), of the window at
// (2oy, 2ox), whose position in that order goes to code. Sixteen outputs
// per step: the window's four values are the even and odd lanes of the two
// input rows. Requires h, w ≥ 2.
TEXT ·maxpool512(SB), NOSPLIT, $0-68
	MOVQ y+0(FP), DI
	MOVQ code+8(FP), R11
	MOVQ x+16(FP), SI
	MOVQ w+40(FP), R8
	SHLQ $2, R8                  // input row bytes
	MOVQ w+40(FP), R12
	SHRQ $1, R12                 // ow
	MOVQ planes+24(FP), R14
	TESTQ R14, R14
	JZ done
	XORQ R15, R15                // channel
	MOVQ bias+48(FP), BX
	VBROADCASTSS lo+64(FP), Z21
	VMOVUPS poolEven<>(SB), Z22
	VMOVUPS poolOdd<>(SB), Z23
	MOVL $1, AX
	VPBROADCASTD AX, Z24         // code 1
	MOVL $2, AX
	VPBROADCASTD AX, Z25         // code 2
	MOVL $3, AX
	VPBROADCASTD AX, Z26         // code 3

plane:
	VPXORD Z20, Z20, Z20
	TESTQ BX, BX
	JZ nobias
	VBROADCASTSS (BX)(R15*4), Z20

nobias:
	MOVQ h+32(FP), R13
	SHRQ $1, R13                 // oh

row:
	XORQ R9, R9                  // ox0

chunk:
	MOVQ R12, CX
	SUBQ R9, CX                  // outputs left in the row
	CMPQ CX, $16
	JLT part
	MOVQ $16, CX

part:
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVW AX, K1                 // output lanes
	SHLQ $1, CX                  // input lanes 2·cnt ≤ 32
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVD AX, K2
	KSHIFTRD $16, K2, K3         // K2: lanes 0–15, K3: lanes 16–31
	LEAQ (SI)(R9*8), AX          // &x[2oy][2ox0]
	VMOVUPS.Z (AX), K2, Z0
	VMOVUPS.Z 64(AX), K3, Z1
	ADDQ R8, AX
	VMOVUPS.Z (AX), K2, Z2
	VMOVUPS.Z 64(AX), K3, Z3
	VMOVAPS Z22, Z4
	VPERMI2PS Z1, Z0, Z4         // a = row 0, even
	VMOVAPS Z23, Z5
	VPERMI2PS Z1, Z0, Z5         // b = row 0, odd
	VMOVAPS Z22, Z6
	VPERMI2PS Z3, Z2, Z6         // c = row 1, even
	VMOVAPS Z23, Z7
	VPERMI2PS Z3, Z2, Z7         // d = row 1, odd
	VPXORD Z8, Z8, Z8            // code 0
	VCMPPS $0x1e, Z4, Z5, K4     // b > best
	VMOVAPS Z5, K4, Z4
	VMOVDQA32 Z24, K4, Z8
	VCMPPS $0x1e, Z4, Z6, K4     // c > best
	VMOVAPS Z6, K4, Z4
	VMOVDQA32 Z25, K4, Z8
	VCMPPS $0x1e, Z4, Z7, K4     // d > best
	VMOVAPS Z7, K4, Z4
	VMOVDQA32 Z26, K4, Z8
	VADDPS Z20, Z4, Z4
	VMAXPS Z21, Z4, Z4
	VMOVUPS Z4, K1, (DI)(R9*4)
	VPMOVDB Z8, K1, (R11)(R9*1)
	ADDQ $16, R9
	CMPQ R9, R12
	JLT chunk
	LEAQ (DI)(R12*4), DI
	ADDQ R12, R11
	LEAQ (SI)(R8*2), SI
	DECQ R13
	JNZ row
	TESTQ $1, h+32(FP)
	JZ evenh
	ADDQ R8, SI                  // skip an odd last row

evenh:
	INCQ R15
	CMPQ R15, nc+56(FP)
	JLT samec
	XORQ R15, R15

samec:
	DECQ R14
	JNZ plane

done:
	VZEROUPPER
	RET

// func maxpoolBack512(dx, dy, y *float32, code *uint8, planes, h, w int, sums *float64, nc int)
//
// Adjoint of maxpool512 over planes h×w planes: writes the first 2·(w/2)
// columns of the first 2·(h/2) rows of each dx plane: the gradient g = dy
// (gated by y > 0 when y is not nil) at the window position code names and
// zeros elsewhere; when sums is not nil, adds Σ g of plane p (a float32
// vector sum) to sums[p mod nc] in float64. The caller zeros an odd last row
// or column. Requires h, w ≥ 2.
TEXT ·maxpoolBack512(SB), NOSPLIT, $0-72
	MOVQ dx+0(FP), DI
	MOVQ dy+8(FP), SI
	MOVQ y+16(FP), R10
	MOVQ code+24(FP), R11
	MOVQ w+48(FP), R8
	SHLQ $2, R8                  // row bytes
	MOVQ w+48(FP), R12
	SHRQ $1, R12                 // ow
	VPXORD Z31, Z31, Z31         // zero
	MOVQ planes+32(FP), R14
	TESTQ R14, R14
	JZ done
	XORQ R15, R15                // channel
	MOVQ sums+56(FP), BX
	VMOVUPS poolIlvLo<>(SB), Z22
	VMOVUPS poolIlvHi<>(SB), Z23
	MOVL $1, AX
	VPBROADCASTD AX, Z24
	MOVL $2, AX
	VPBROADCASTD AX, Z25
	MOVL $3, AX
	VPBROADCASTD AX, Z26

plane:
	VPXORD Z30, Z30, Z30         // Σ g
	MOVQ h+40(FP), R13
	SHRQ $1, R13                 // oh

row:
	XORQ R9, R9                  // ox0

chunk:
	MOVQ R12, CX
	SUBQ R9, CX
	CMPQ CX, $16
	JLT part
	MOVQ $16, CX

part:
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVW AX, K1                 // gradient lanes
	SHLQ $1, CX                  // dx lanes 2·cnt ≤ 32
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVD AX, K2
	KSHIFTRD $16, K2, K3
	VMOVUPS.Z (SI)(R9*4), K1, Z0 // g
	TESTQ R10, R10
	JZ nogate
	VMOVUPS.Z (R10)(R9*4), K1, Z1
	VCMPPS $0x1e, Z31, Z1, K4    // y > 0
	VMOVAPS.Z Z0, K4, Z0

nogate:
	VADDPS Z0, Z30, Z30
	VMOVDQU8.Z (R11)(R9*1), K1, X1
	VPMOVZXBD X1, Z1             // codes
	VPCMPEQD Z31, Z1, K4
	VMOVAPS.Z Z0, K4, Z4         // a
	VPCMPEQD Z24, Z1, K4
	VMOVAPS.Z Z0, K4, Z5         // b
	VPCMPEQD Z25, Z1, K4
	VMOVAPS.Z Z0, K4, Z6         // c
	VPCMPEQD Z26, Z1, K4
	VMOVAPS.Z Z0, K4, Z7         // d
	VMOVAPS Z22, Z8
	VPERMI2PS Z5, Z4, Z8         // row 0, lanes 0–15
	VMOVAPS Z23, Z9
	VPERMI2PS Z5, Z4, Z9         // row 0, lanes 16–31
	VMOVAPS Z22, Z10
	VPERMI2PS Z7, Z6, Z10        // row 1, lanes 0–15
	VMOVAPS Z23, Z11
	VPERMI2PS Z7, Z6, Z11        // row 1, lanes 16–31
	LEAQ (DI)(R9*8), AX
	VMOVUPS Z8, K2, (AX)
	VMOVUPS Z9, K3, 64(AX)
	ADDQ R8, AX
	VMOVUPS Z10, K2, (AX)
	VMOVUPS Z11, K3, 64(AX)
	ADDQ $16, R9
	CMPQ R9, R12
	JLT chunk
	LEAQ (SI)(R12*4), SI
	TESTQ R10, R10
	JZ nexty
	LEAQ (R10)(R12*4), R10

nexty:
	ADDQ R12, R11
	LEAQ (DI)(R8*2), DI
	DECQ R13
	JNZ row
	TESTQ $1, h+40(FP)
	JZ evenh
	ADDQ R8, DI                  // skip an odd last row

evenh:
	TESTQ BX, BX
	JZ nextplane
	VEXTRACTF64X4 $1, Z30, Y0
	VADDPS Y0, Y30, Y0
	VEXTRACTF32X4 $1, Y0, X1
	VADDPS X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VADDPS X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VADDSS X1, X0, X0
	VCVTSS2SD X0, X0, X0
	VADDSD (BX)(R15*8), X0, X0
	VMOVSD X0, (BX)(R15*8)

nextplane:
	INCQ R15
	CMPQ R15, nc+64(FP)
	JLT samec
	XORQ R15, R15

samec:
	DECQ R14
	JNZ plane

done:
	VZEROUPPER
	RET
