//go:build amd64 && !purego

#include "textflag.h"

// func im2col512(dst, src *float32, c, h, w, kh, kw, oh, ow int)
//
// For each kernel offset (c, i, j) in order, copies the oh rows of ow floats
// starting at src[c][i][j] (row stride w) to consecutive floats of dst:
// 16-lane moves plus one masked move for the ow%16 tail. All counts ≥ 1.
TEXT ·im2col512(SB), NOSPLIT, $0-72
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ w+32(FP), R8
	SHLQ $2, R8             // source row stride in bytes
	MOVQ ow+64(FP), R10
	MOVQ R10, CX
	ANDQ $15, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1            // tail lanes
	MOVQ CX, R9
	SHLQ $2, R9             // tail bytes
	SHRQ $4, R10            // full 16-lane chunks per row
	MOVQ c+16(FP), R11

chan:
	MOVQ kh+40(FP), R12
	MOVQ SI, R13            // &src[c][i][0]

krow:
	MOVQ kw+48(FP), R14
	MOVQ R13, R15           // &src[c][i][j]

kcol:
	MOVQ oh+56(FP), BX
	MOVQ R15, DX            // &src[c][oy+i][j]

orow:
	MOVQ DX, AX
	MOVQ R10, CX
	TESTQ CX, CX
	JZ tail

full:
	VMOVUPS (AX), Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, AX
	ADDQ $64, DI
	DECQ CX
	JNZ full

tail:
	VMOVUPS.Z (AX), K1, Z0
	VMOVUPS Z0, K1, (DI)
	ADDQ R9, DI
	ADDQ R8, DX
	DECQ BX
	JNZ orow
	ADDQ $4, R15
	DECQ R14
	JNZ kcol
	ADDQ R8, R13
	DECQ R12
	JNZ krow
	MOVQ h+24(FP), AX
	IMULQ R8, AX
	ADDQ AX, SI             // next channel plane
	DECQ R11
	JNZ chan
	VZEROUPPER
	RET

// func col2imPlane512(dx, cols *float32, h, w, kh, kw, oh, ow int)
//
// Gather form of col2im for one channel: for each image row y and 16-lane
// chunk x0 of it, sums in a register the contributions of every kernel
// offset (i, j) with 0 ≤ y−i < oh, read from column-matrix row (i·kw+j),
// output row y−i, shifted right by j (a merge-masked add, lanes l with
// 0 ≤ x0+l−j < ow), then stores the chunk. Each dx element is written once.
// Requires w < 64.
TEXT ·col2imPlane512(SB), NOSPLIT, $0-64
	MOVQ ow+56(FP), CX
	MOVQ $1, R13
	SHLQ CX, R13
	DECQ R13                // ow lanes: (1<<ow)-1
	XORQ R8, R8             // y

yloop:
	XORQ R9, R9             // x0

xloop:
	VPXORD Z0, Z0, Z0
	// i from max(0, y-oh+1) to min(kh-1, y)
	MOVQ R8, R10
	SUBQ oh+48(FP), R10
	INCQ R10
	XORQ AX, AX
	CMPQ R10, AX
	CMOVQLT AX, R10         // ilo
	MOVQ kh+32(FP), R12
	DECQ R12
	CMPQ R12, R8
	CMOVQGT R8, R12         // ihi
	CMPQ R10, R12
	JGT store

iloop:
	// R14 = cols + (i*kw*oh*ow + (y-i)*ow)*4 - x0... computed as element index
	MOVQ oh+48(FP), AX
	IMULQ ow+56(FP), AX     // P
	MOVQ AX, DX             // DX = P (stride between j rows)
	IMULQ kw+40(FP), AX
	IMULQ R10, AX           // i*kw*P
	MOVQ R8, BX
	SUBQ R10, BX
	IMULQ ow+56(FP), BX     // (y-i)*ow
	ADDQ BX, AX
	ADDQ R9, AX             // + x0
	MOVQ cols+8(FP), R14
	LEAQ (R14)(AX*4), R14   // &cols[i][j=0][y-i][x0]
	SHLQ $2, DX             // P bytes
	XORQ R11, R11           // j

jloop:
	MOVQ R13, AX
	MOVQ R11, CX
	SHLQ CX, AX             // lanes x with j ≤ x < j+ow
	MOVQ R9, CX
	SHRQ CX, AX             // relative to x0
	KMOVW AX, K1
	MOVQ R11, AX
	SHLQ $2, AX
	MOVQ R14, R15
	SUBQ AX, R15            // element (x0 - j) of the row
	VADDPS (R15), Z0, K1, Z0
	ADDQ DX, R14            // next j row
	INCQ R11
	CMPQ R11, kw+40(FP)
	JLT jloop
	INCQ R10
	CMPQ R10, R12
	JLE iloop

store:
	MOVQ w+24(FP), CX
	SUBQ R9, CX             // lanes left in the row
	CMPQ CX, $16
	JLT partial
	MOVQ $0xffff, AX
	JMP write

partial:
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX

write:
	KMOVW AX, K2
	MOVQ R8, AX
	IMULQ w+24(FP), AX
	ADDQ R9, AX
	MOVQ dx+0(FP), BX
	VMOVUPS Z0, K2, (BX)(AX*4)
	ADDQ $16, R9
	CMPQ R9, w+24(FP)
	JLT xloop
	INCQ R8
	CMPQ R8, h+16(FP)
	JLT yloop
	VZEROUPPER
	RET

// func im2colPerm512(dst, src *float32, tbl *int32, nchunk, c, h, w, kh, kw, p int)
//
// Table-driven im2col: the p output pixels of a column-matrix row are cut
// into 16-pixel chunks; chunk q's pixels come from a window of at most 32
// consecutive source floats starting at tbl[20q+16] (relative to
// src[c][i][0]), at window offsets tbl[20q:20q+16], the window's lanes
// being tbl[20q+17] and the chunk's live pixels tbl[20q+18]. For each
// (c, i, chunk) the window is loaded once and the kw rows j of the column
// matrix are one permute each (offsets + j) and a full-width store.
TEXT ·im2colPerm512(SB), NOSPLIT, $0-80
	MOVQ p+72(FP), R8
	SHLQ $2, R8                  // column-matrix row bytes
	MOVQ w+48(FP), R14
	SHLQ $2, R14                 // source row bytes
	MOVL $1, AX
	VPBROADCASTD AX, Z31         // +1 for the next j
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ c+32(FP), R13

chan:
	MOVQ kh+56(FP), R12
	MOVQ SI, R15                 // &src[c][i][0]

krow:
	MOVQ tbl+16(FP), R9
	MOVQ nchunk+24(FP), R10
	MOVQ DI, BX                  // &dst[(c,i,0)][chunk 0]

chunk:
	MOVLQSX 64(R9), AX           // window start
	LEAQ (R15)(AX*4), AX
	KMOVD 68(R9), K2
	KSHIFTRD $16, K2, K3
	KMOVW 72(R9), K4
	VMOVUPS.Z (AX), K2, Z0
	VMOVUPS.Z 64(AX), K3, Z1
	VMOVDQU32 (R9), Z2           // window offsets
	MOVQ BX, DX
	MOVQ kw+64(FP), R11

jloop:
	VMOVDQA32 Z2, Z3
	VPERMI2PS Z1, Z0, Z3
	VMOVUPS Z3, K4, (DX)
	VPADDD Z31, Z2, Z2
	ADDQ R8, DX
	DECQ R11
	JNZ jloop
	ADDQ $80, R9
	ADDQ $64, BX
	DECQ R10
	JNZ chunk
	MOVQ kw+64(FP), AX
	IMULQ R8, AX
	ADDQ AX, DI                  // kw column-matrix rows on
	ADDQ R14, R15
	DECQ R12
	JNZ krow
	MOVQ h+40(FP), AX
	IMULQ R14, AX
	ADDQ AX, SI                  // next channel plane
	DECQ R13
	JNZ chan
	VZEROUPPER
	RET

// Code below: col2imNarrow512 kernels, one per kernel width kw ≤ 7, for image rows of at most 16 floats.

// func col2imNarrow512x1(dx, cols *float32, c, h, w, kh, oh, ow int)
//
// Gather-form col2im with the 1 kernel columns unrolled: row y of
// channel plane c is the masked sum, over i with 0 ≤ y−i < oh and j < 1,
// of column-matrix row (c,i,j), output row y−i, shifted right by j (lane
// mask K(j+1) = ow lanes from j), added into one accumulator in (i, j)
// order, the order of the pure-Go scatter. One store per image row.
TEXT ·col2imNarrow512x1(SB), NOSPLIT, $0-64
	MOVQ ow+56(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX                      // ow lanes
	KMOVW AX, K1
	MOVQ w+32(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K7
	MOVQ oh+48(FP), R8
	IMULQ ow+56(FP), R8           // P
	LEAQ -4(R8*4), R9            // S = (P-1)·4: next j
	LEAQ (R9)(R9*2), R10         // 3S
	LEAQ (R9)(R9*4), R11         // 5S
	LEAQ (R10)(R9*4), R12        // 7S
	IMULQ $1, R8                // kw·P
	MOVQ R8, R13
	SUBQ ow+56(FP), R13
	SHLQ $2, R13                 // IS = (kw·P − ow)·4: next i
	IMULQ kh+40(FP), R8
	SHLQ $2, R8                  // kh·kw·P·4: next channel of cols
	MOVQ dx+0(FP), DI
	MOVQ cols+8(FP), SI
	MOVQ c+16(FP), R14
chan:
	XORQ R15, R15                // y
yloop:
	VPXORD Z0, Z0, Z0
	// i from max(0, y−oh+1) to min(kh−1, y)
	MOVQ R15, CX
	SUBQ oh+48(FP), CX
	INCQ CX
	XORQ AX, AX
	CMPQ CX, AX
	CMOVQLT AX, CX              // ilo
	MOVQ kh+40(FP), DX
	DECQ DX
	CMPQ DX, R15
	CMOVQGT R15, DX             // ihi
	SUBQ CX, DX
	INCQ DX                      // number of i
	MOVQ R15, BX
	IMULQ ow+56(FP), BX          // y·ow
	IMULQ R13, CX                // ilo·IS
	LEAQ (SI)(BX*4), BX
	ADDQ CX, BX                  // lane 0 of (ilo, j=0, y−ilo)
iloop:
	VADDPS (BX), Z0, K1, Z0
	ADDQ R13, BX
	DECQ DX
	JNZ iloop
	MOVQ R15, AX
	IMULQ w+32(FP), AX
	VMOVUPS Z0, K7, (DI)(AX*4)
	INCQ R15
	CMPQ R15, h+24(FP)
	JLT yloop
	MOVQ h+24(FP), AX
	IMULQ w+32(FP), AX
	LEAQ (DI)(AX*4), DI          // next dx plane
	ADDQ R8, SI
	DECQ R14
	JNZ chan
	VZEROUPPER
	RET

// func col2imNarrow512x2(dx, cols *float32, c, h, w, kh, oh, ow int)
//
// Gather-form col2im with the 2 kernel columns unrolled: row y of
// channel plane c is the masked sum, over i with 0 ≤ y−i < oh and j < 2,
// of column-matrix row (c,i,j), output row y−i, shifted right by j (lane
// mask K(j+1) = ow lanes from j), added into one accumulator in (i, j)
// order, the order of the pure-Go scatter. One store per image row.
TEXT ·col2imNarrow512x2(SB), NOSPLIT, $0-64
	MOVQ ow+56(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX                      // ow lanes
	KMOVW AX, K1
	SHLL $1, AX
	KMOVW AX, K2
	MOVQ w+32(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K7
	MOVQ oh+48(FP), R8
	IMULQ ow+56(FP), R8           // P
	LEAQ -4(R8*4), R9            // S = (P-1)·4: next j
	LEAQ (R9)(R9*2), R10         // 3S
	LEAQ (R9)(R9*4), R11         // 5S
	LEAQ (R10)(R9*4), R12        // 7S
	IMULQ $2, R8                // kw·P
	MOVQ R8, R13
	SUBQ ow+56(FP), R13
	SHLQ $2, R13                 // IS = (kw·P − ow)·4: next i
	IMULQ kh+40(FP), R8
	SHLQ $2, R8                  // kh·kw·P·4: next channel of cols
	MOVQ dx+0(FP), DI
	MOVQ cols+8(FP), SI
	MOVQ c+16(FP), R14
chan:
	XORQ R15, R15                // y
yloop:
	VPXORD Z0, Z0, Z0
	// i from max(0, y−oh+1) to min(kh−1, y)
	MOVQ R15, CX
	SUBQ oh+48(FP), CX
	INCQ CX
	XORQ AX, AX
	CMPQ CX, AX
	CMOVQLT AX, CX              // ilo
	MOVQ kh+40(FP), DX
	DECQ DX
	CMPQ DX, R15
	CMOVQGT R15, DX             // ihi
	SUBQ CX, DX
	INCQ DX                      // number of i
	MOVQ R15, BX
	IMULQ ow+56(FP), BX          // y·ow
	IMULQ R13, CX                // ilo·IS
	LEAQ (SI)(BX*4), BX
	ADDQ CX, BX                  // lane 0 of (ilo, j=0, y−ilo)
iloop:
	VADDPS (BX), Z0, K1, Z0
	VADDPS (BX)(R9*1), Z0, K2, Z0
	ADDQ R13, BX
	DECQ DX
	JNZ iloop
	MOVQ R15, AX
	IMULQ w+32(FP), AX
	VMOVUPS Z0, K7, (DI)(AX*4)
	INCQ R15
	CMPQ R15, h+24(FP)
	JLT yloop
	MOVQ h+24(FP), AX
	IMULQ w+32(FP), AX
	LEAQ (DI)(AX*4), DI          // next dx plane
	ADDQ R8, SI
	DECQ R14
	JNZ chan
	VZEROUPPER
	RET

// func col2imNarrow512x3(dx, cols *float32, c, h, w, kh, oh, ow int)
//
// Gather-form col2im with the 3 kernel columns unrolled: row y of
// channel plane c is the masked sum, over i with 0 ≤ y−i < oh and j < 3,
// of column-matrix row (c,i,j), output row y−i, shifted right by j (lane
// mask K(j+1) = ow lanes from j), added into one accumulator in (i, j)
// order, the order of the pure-Go scatter. One store per image row.
TEXT ·col2imNarrow512x3(SB), NOSPLIT, $0-64
	MOVQ ow+56(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX                      // ow lanes
	KMOVW AX, K1
	SHLL $1, AX
	KMOVW AX, K2
	SHLL $1, AX
	KMOVW AX, K3
	MOVQ w+32(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K7
	MOVQ oh+48(FP), R8
	IMULQ ow+56(FP), R8           // P
	LEAQ -4(R8*4), R9            // S = (P-1)·4: next j
	LEAQ (R9)(R9*2), R10         // 3S
	LEAQ (R9)(R9*4), R11         // 5S
	LEAQ (R10)(R9*4), R12        // 7S
	IMULQ $3, R8                // kw·P
	MOVQ R8, R13
	SUBQ ow+56(FP), R13
	SHLQ $2, R13                 // IS = (kw·P − ow)·4: next i
	IMULQ kh+40(FP), R8
	SHLQ $2, R8                  // kh·kw·P·4: next channel of cols
	MOVQ dx+0(FP), DI
	MOVQ cols+8(FP), SI
	MOVQ c+16(FP), R14
chan:
	XORQ R15, R15                // y
yloop:
	VPXORD Z0, Z0, Z0
	// i from max(0, y−oh+1) to min(kh−1, y)
	MOVQ R15, CX
	SUBQ oh+48(FP), CX
	INCQ CX
	XORQ AX, AX
	CMPQ CX, AX
	CMOVQLT AX, CX              // ilo
	MOVQ kh+40(FP), DX
	DECQ DX
	CMPQ DX, R15
	CMOVQGT R15, DX             // ihi
	SUBQ CX, DX
	INCQ DX                      // number of i
	MOVQ R15, BX
	IMULQ ow+56(FP), BX          // y·ow
	IMULQ R13, CX                // ilo·IS
	LEAQ (SI)(BX*4), BX
	ADDQ CX, BX                  // lane 0 of (ilo, j=0, y−ilo)
iloop:
	VADDPS (BX), Z0, K1, Z0
	VADDPS (BX)(R9*1), Z0, K2, Z0
	VADDPS (BX)(R9*2), Z0, K3, Z0
	ADDQ R13, BX
	DECQ DX
	JNZ iloop
	MOVQ R15, AX
	IMULQ w+32(FP), AX
	VMOVUPS Z0, K7, (DI)(AX*4)
	INCQ R15
	CMPQ R15, h+24(FP)
	JLT yloop
	MOVQ h+24(FP), AX
	IMULQ w+32(FP), AX
	LEAQ (DI)(AX*4), DI          // next dx plane
	ADDQ R8, SI
	DECQ R14
	JNZ chan
	VZEROUPPER
	RET

// func col2imNarrow512x4(dx, cols *float32, c, h, w, kh, oh, ow int)
//
// Gather-form col2im with the 4 kernel columns unrolled: row y of
// channel plane c is the masked sum, over i with 0 ≤ y−i < oh and j < 4,
// of column-matrix row (c,i,j), output row y−i, shifted right by j (lane
// mask K(j+1) = ow lanes from j), added into one accumulator in (i, j)
// order, the order of the pure-Go scatter. One store per image row.
TEXT ·col2imNarrow512x4(SB), NOSPLIT, $0-64
	MOVQ ow+56(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX                      // ow lanes
	KMOVW AX, K1
	SHLL $1, AX
	KMOVW AX, K2
	SHLL $1, AX
	KMOVW AX, K3
	SHLL $1, AX
	KMOVW AX, K4
	MOVQ w+32(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K7
	MOVQ oh+48(FP), R8
	IMULQ ow+56(FP), R8           // P
	LEAQ -4(R8*4), R9            // S = (P-1)·4: next j
	LEAQ (R9)(R9*2), R10         // 3S
	LEAQ (R9)(R9*4), R11         // 5S
	LEAQ (R10)(R9*4), R12        // 7S
	IMULQ $4, R8                // kw·P
	MOVQ R8, R13
	SUBQ ow+56(FP), R13
	SHLQ $2, R13                 // IS = (kw·P − ow)·4: next i
	IMULQ kh+40(FP), R8
	SHLQ $2, R8                  // kh·kw·P·4: next channel of cols
	MOVQ dx+0(FP), DI
	MOVQ cols+8(FP), SI
	MOVQ c+16(FP), R14
chan:
	XORQ R15, R15                // y
yloop:
	VPXORD Z0, Z0, Z0
	// i from max(0, y−oh+1) to min(kh−1, y)
	MOVQ R15, CX
	SUBQ oh+48(FP), CX
	INCQ CX
	XORQ AX, AX
	CMPQ CX, AX
	CMOVQLT AX, CX              // ilo
	MOVQ kh+40(FP), DX
	DECQ DX
	CMPQ DX, R15
	CMOVQGT R15, DX             // ihi
	SUBQ CX, DX
	INCQ DX                      // number of i
	MOVQ R15, BX
	IMULQ ow+56(FP), BX          // y·ow
	IMULQ R13, CX                // ilo·IS
	LEAQ (SI)(BX*4), BX
	ADDQ CX, BX                  // lane 0 of (ilo, j=0, y−ilo)
iloop:
	VADDPS (BX), Z0, K1, Z0
	VADDPS (BX)(R9*1), Z0, K2, Z0
	VADDPS (BX)(R9*2), Z0, K3, Z0
	VADDPS (BX)(R10*1), Z0, K4, Z0
	ADDQ R13, BX
	DECQ DX
	JNZ iloop
	MOVQ R15, AX
	IMULQ w+32(FP), AX
	VMOVUPS Z0, K7, (DI)(AX*4)
	INCQ R15
	CMPQ R15, h+24(FP)
	JLT yloop
	MOVQ h+24(FP), AX
	IMULQ w+32(FP), AX
	LEAQ (DI)(AX*4), DI          // next dx plane
	ADDQ R8, SI
	DECQ R14
	JNZ chan
	VZEROUPPER
	RET

// func col2imNarrow512x5(dx, cols *float32, c, h, w, kh, oh, ow int)
//
// Gather-form col2im with the 5 kernel columns unrolled: row y of
// channel plane c is the masked sum, over i with 0 ≤ y−i < oh and j < 5,
// of column-matrix row (c,i,j), output row y−i, shifted right by j (lane
// mask K(j+1) = ow lanes from j), added into one accumulator in (i, j)
// order, the order of the pure-Go scatter. One store per image row.
TEXT ·col2imNarrow512x5(SB), NOSPLIT, $0-64
	MOVQ ow+56(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX                      // ow lanes
	KMOVW AX, K1
	SHLL $1, AX
	KMOVW AX, K2
	SHLL $1, AX
	KMOVW AX, K3
	SHLL $1, AX
	KMOVW AX, K4
	SHLL $1, AX
	KMOVW AX, K5
	MOVQ w+32(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K7
	MOVQ oh+48(FP), R8
	IMULQ ow+56(FP), R8           // P
	LEAQ -4(R8*4), R9            // S = (P-1)·4: next j
	LEAQ (R9)(R9*2), R10         // 3S
	LEAQ (R9)(R9*4), R11         // 5S
	LEAQ (R10)(R9*4), R12        // 7S
	IMULQ $5, R8                // kw·P
	MOVQ R8, R13
	SUBQ ow+56(FP), R13
	SHLQ $2, R13                 // IS = (kw·P − ow)·4: next i
	IMULQ kh+40(FP), R8
	SHLQ $2, R8                  // kh·kw·P·4: next channel of cols
	MOVQ dx+0(FP), DI
	MOVQ cols+8(FP), SI
	MOVQ c+16(FP), R14
chan:
	XORQ R15, R15                // y
yloop:
	VPXORD Z0, Z0, Z0
	// i from max(0, y−oh+1) to min(kh−1, y)
	MOVQ R15, CX
	SUBQ oh+48(FP), CX
	INCQ CX
	XORQ AX, AX
	CMPQ CX, AX
	CMOVQLT AX, CX              // ilo
	MOVQ kh+40(FP), DX
	DECQ DX
	CMPQ DX, R15
	CMOVQGT R15, DX             // ihi
	SUBQ CX, DX
	INCQ DX                      // number of i
	MOVQ R15, BX
	IMULQ ow+56(FP), BX          // y·ow
	IMULQ R13, CX                // ilo·IS
	LEAQ (SI)(BX*4), BX
	ADDQ CX, BX                  // lane 0 of (ilo, j=0, y−ilo)
iloop:
	VADDPS (BX), Z0, K1, Z0
	VADDPS (BX)(R9*1), Z0, K2, Z0
	VADDPS (BX)(R9*2), Z0, K3, Z0
	VADDPS (BX)(R10*1), Z0, K4, Z0
	VADDPS (BX)(R9*4), Z0, K5, Z0
	ADDQ R13, BX
	DECQ DX
	JNZ iloop
	MOVQ R15, AX
	IMULQ w+32(FP), AX
	VMOVUPS Z0, K7, (DI)(AX*4)
	INCQ R15
	CMPQ R15, h+24(FP)
	JLT yloop
	MOVQ h+24(FP), AX
	IMULQ w+32(FP), AX
	LEAQ (DI)(AX*4), DI          // next dx plane
	ADDQ R8, SI
	DECQ R14
	JNZ chan
	VZEROUPPER
	RET

// func col2imNarrow512x6(dx, cols *float32, c, h, w, kh, oh, ow int)
//
// Gather-form col2im with the 6 kernel columns unrolled: row y of
// channel plane c is the masked sum, over i with 0 ≤ y−i < oh and j < 6,
// of column-matrix row (c,i,j), output row y−i, shifted right by j (lane
// mask K(j+1) = ow lanes from j), added into one accumulator in (i, j)
// order, the order of the pure-Go scatter. One store per image row.
TEXT ·col2imNarrow512x6(SB), NOSPLIT, $0-64
	MOVQ ow+56(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX                      // ow lanes
	KMOVW AX, K1
	SHLL $1, AX
	KMOVW AX, K2
	SHLL $1, AX
	KMOVW AX, K3
	SHLL $1, AX
	KMOVW AX, K4
	SHLL $1, AX
	KMOVW AX, K5
	SHLL $1, AX
	KMOVW AX, K6
	MOVQ w+32(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K7
	MOVQ oh+48(FP), R8
	IMULQ ow+56(FP), R8           // P
	LEAQ -4(R8*4), R9            // S = (P-1)·4: next j
	LEAQ (R9)(R9*2), R10         // 3S
	LEAQ (R9)(R9*4), R11         // 5S
	LEAQ (R10)(R9*4), R12        // 7S
	IMULQ $6, R8                // kw·P
	MOVQ R8, R13
	SUBQ ow+56(FP), R13
	SHLQ $2, R13                 // IS = (kw·P − ow)·4: next i
	IMULQ kh+40(FP), R8
	SHLQ $2, R8                  // kh·kw·P·4: next channel of cols
	MOVQ dx+0(FP), DI
	MOVQ cols+8(FP), SI
	MOVQ c+16(FP), R14
chan:
	XORQ R15, R15                // y
yloop:
	VPXORD Z0, Z0, Z0
	// i from max(0, y−oh+1) to min(kh−1, y)
	MOVQ R15, CX
	SUBQ oh+48(FP), CX
	INCQ CX
	XORQ AX, AX
	CMPQ CX, AX
	CMOVQLT AX, CX              // ilo
	MOVQ kh+40(FP), DX
	DECQ DX
	CMPQ DX, R15
	CMOVQGT R15, DX             // ihi
	SUBQ CX, DX
	INCQ DX                      // number of i
	MOVQ R15, BX
	IMULQ ow+56(FP), BX          // y·ow
	IMULQ R13, CX                // ilo·IS
	LEAQ (SI)(BX*4), BX
	ADDQ CX, BX                  // lane 0 of (ilo, j=0, y−ilo)
iloop:
	VADDPS (BX), Z0, K1, Z0
	VADDPS (BX)(R9*1), Z0, K2, Z0
	VADDPS (BX)(R9*2), Z0, K3, Z0
	VADDPS (BX)(R10*1), Z0, K4, Z0
	VADDPS (BX)(R9*4), Z0, K5, Z0
	VADDPS (BX)(R11*1), Z0, K6, Z0
	ADDQ R13, BX
	DECQ DX
	JNZ iloop
	MOVQ R15, AX
	IMULQ w+32(FP), AX
	VMOVUPS Z0, K7, (DI)(AX*4)
	INCQ R15
	CMPQ R15, h+24(FP)
	JLT yloop
	MOVQ h+24(FP), AX
	IMULQ w+32(FP), AX
	LEAQ (DI)(AX*4), DI          // next dx plane
	ADDQ R8, SI
	DECQ R14
	JNZ chan
	VZEROUPPER
	RET

// func col2imNarrow512x7(dx, cols *float32, c, h, w, kh, oh, ow int)
//
// Gather-form col2im with the 7 kernel columns unrolled: row y of
// channel plane c is the masked sum, over i with 0 ≤ y−i < oh and j < 7,
// of column-matrix row (c,i,j), output row y−i, shifted right by j (lane
// mask K(j+1) = ow lanes from j), added into one accumulator in (i, j)
// order, the order of the pure-Go scatter. One store per image row.
TEXT ·col2imNarrow512x7(SB), NOSPLIT, $0-64
	MOVQ ow+56(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX                      // ow lanes
	KMOVW AX, K1
	SHLL $1, AX
	KMOVW AX, K2
	SHLL $1, AX
	KMOVW AX, K3
	SHLL $1, AX
	KMOVW AX, K4
	SHLL $1, AX
	KMOVW AX, K5
	SHLL $1, AX
	KMOVW AX, K6
	SHLL $1, AX
	KMOVW AX, K7
	MOVQ w+32(FP), CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	MOVQ oh+48(FP), R8
	IMULQ ow+56(FP), R8           // P
	LEAQ -4(R8*4), R9            // S = (P-1)·4: next j
	LEAQ (R9)(R9*2), R10         // 3S
	LEAQ (R9)(R9*4), R11         // 5S
	LEAQ (R10)(R9*4), R12        // 7S
	IMULQ $7, R8                // kw·P
	MOVQ R8, R13
	SUBQ ow+56(FP), R13
	SHLQ $2, R13                 // IS = (kw·P − ow)·4: next i
	IMULQ kh+40(FP), R8
	SHLQ $2, R8                  // kh·kw·P·4: next channel of cols
	MOVQ dx+0(FP), DI
	MOVQ cols+8(FP), SI
	MOVQ c+16(FP), R14
chan:
	XORQ R15, R15                // y
yloop:
	VPXORD Z0, Z0, Z0
	// i from max(0, y−oh+1) to min(kh−1, y)
	MOVQ R15, CX
	SUBQ oh+48(FP), CX
	INCQ CX
	XORQ AX, AX
	CMPQ CX, AX
	CMOVQLT AX, CX              // ilo
	MOVQ kh+40(FP), DX
	DECQ DX
	CMPQ DX, R15
	CMOVQGT R15, DX             // ihi
	SUBQ CX, DX
	INCQ DX                      // number of i
	MOVQ R15, BX
	IMULQ ow+56(FP), BX          // y·ow
	IMULQ R13, CX                // ilo·IS
	LEAQ (SI)(BX*4), BX
	ADDQ CX, BX                  // lane 0 of (ilo, j=0, y−ilo)
iloop:
	VADDPS (BX), Z0, K1, Z0
	VADDPS (BX)(R9*1), Z0, K2, Z0
	VADDPS (BX)(R9*2), Z0, K3, Z0
	VADDPS (BX)(R10*1), Z0, K4, Z0
	VADDPS (BX)(R9*4), Z0, K5, Z0
	VADDPS (BX)(R11*1), Z0, K6, Z0
	VADDPS (BX)(R10*2), Z0, K7, Z0
	ADDQ R13, BX
	DECQ DX
	JNZ iloop
	MOVQ R15, AX
	IMULQ w+32(FP), AX
	MOVQ w+32(FP), CX
	MOVL $1, DX
	SHLL CX, DX
	DECL DX
	KMOVW DX, K7
	VMOVUPS Z0, K7, (DI)(AX*4)
	MOVQ ow+56(FP), CX
	MOVL $1, DX
	SHLL CX, DX
	DECL DX
	SHLL $6, DX
	KMOVW DX, K7
	INCQ R15
	CMPQ R15, h+24(FP)
	JLT yloop
	MOVQ h+24(FP), AX
	IMULQ w+32(FP), AX
	LEAQ (DI)(AX*4), DI          // next dx plane
	ADDQ R8, SI
	DECQ R14
	JNZ chan
	VZEROUPPER
	RET
