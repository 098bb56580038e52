package kernels

import "fmt"

// Transpose writes the transpose of the rows×cols row-major matrix src
// (row stride lds) into dst (cols×rows, row stride ldd): dst[j*ldd+i] =
// src[i*lds+j]. Whole 16×16 blocks (8×8 on AVX2 and NEON) move through
// vector registers; the ragged edges are copied element by element. It
// panics if a stride is too small or a slice too short.
func Transpose(dst []float32, ldd int, src []float32, lds, rows, cols int) {
	if rows < 0 || cols < 0 || lds < max(1, cols) || ldd < max(1, rows) {
		panic(fmt.Sprintf("kernels: Transpose: bad shape %d×%d with strides lds=%d ldd=%d", rows, cols, lds, ldd))
	}
	if need := extent(rows, cols, lds, 1, 0); len(src) < need {
		panic(fmt.Sprintf("kernels: Transpose: len(src) = %d, want ≥ %d", len(src), need))
	}
	if need := extent(cols, rows, ldd, 1, 0); len(dst) < need {
		panic(fmt.Sprintf("kernels: Transpose: len(dst) = %d, want ≥ %d", len(dst), need))
	}
	transpose(use(), dst, ldd, src, lds, rows, cols)
}

func transpose(ks *kernelSet, dst []float32, ldd int, src []float32, lds, rows, cols int) {
	blk := 0 // whole blk×blk blocks move through vector registers; none in pure Go
	switch ks.isa {
	case isaAVX512:
		blk = 16
	case isaAVX2, isaNEON:
		blk = 8
	}
	bm, bn := 0, 0
	if blk > 0 && rows >= blk && cols >= blk {
		bm, bn = rows/blk, cols/blk
		switch ks.isa {
		case isaAVX512:
			transposeAsm(dst, ldd, src, lds, bm, bn)
		case isaAVX2:
			transposeAVX2(dst, ldd, src, lds, bm, bn)
		default:
			transposeNEON(dst, ldd, src, lds, bm, bn)
		}
	}
	// Element-wise: the rows below the blocks, then the columns right of them.
	for i := blk * bm; i < rows; i++ {
		for j, v := range src[i*lds : i*lds+cols] {
			dst[j*ldd+i] = v
		}
	}
	for i := range blk * bm {
		for j := blk * bn; j < cols; j++ {
			dst[j*ldd+i] = src[i*lds+j]
		}
	}
}
