//go:build arm64 && !purego

package kernels

var neonSet = &kernelSet{name: "neon", isa: isaNEON, maxMR: maxMRNEON, dotMR: dotMRNEON, dotNR: dotNRNEON, lanes: 4}

// available returns the NEON kernels (every arm64 CPU has Advanced SIMD)
// and the pure-Go ones.
func available() []*kernelSet { return []*kernelSet{neonSet, generic} }

// bcastNEON runs the NEON broadcast kernel on np whole panels.
func bcastNEON(mr, pv, np, k, nb int, a []float32, aoff, rsa, csa, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32) {
	bcastNEONAsm(mr, pv, k, nb, &a[aoff], rsa, csa, sta, &b[boff], ldb, stb, &c[coff], ldc, alpha, beta, np)
}

// dotNEON runs the NEON dot kernel; the k % 16 tail of each segment goes
// through the kernel's zero-padded buffer.
func dotNEON(mr, nr, k, nb int, a []float32, aoff, lda, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32) {
	dotNEONAsm(mr, nr, k/16, k%16, nb, &a[aoff], lda, sta, &b[boff], ldb, stb, &c[coff], ldc, alpha, beta)
}

// maxpoolNEON runs the NEON pooling kernel, 8 outputs per step where rows
// have 8 or more and 4 otherwise (it needs s.OW() ≥ 4).
func maxpoolNEON(y []float32, code []uint8, x []float32, s PoolShape, bias []float32, lo float32) {
	b := first(bias)
	if s.OW() >= 8 {
		maxpoolNEONx8(&y[0], &code[0], &x[0], s.Planes, s.H, s.W, b, max(1, len(bias)), lo)
		return
	}
	maxpoolNEONx4(&y[0], &code[0], &x[0], s.Planes, s.H, s.W, b, max(1, len(bias)), lo)
}

// maxpoolBackNEON runs the NEON pooling adjoint (it needs s.OW() ≥ 4).
func maxpoolBackNEON(dx, dy, y []float32, code []uint8, s PoolShape, sums []float64) {
	yp, sp := first(y), first(sums)
	if s.OW() >= 8 {
		maxpoolBackNEONx8(&dx[0], &dy[0], yp, &code[0], s.Planes, s.H, s.W, sp, max(1, len(sums)))
		return
	}
	maxpoolBackNEONx4(&dx[0], &dy[0], yp, &code[0], s.Planes, s.H, s.W, sp, max(1, len(sums)))
}

// im2colNEON runs the NEON im2col, 16, 8 or 4 floats a step as the rows
// allow (it needs s.OW() ≥ 4).
func im2colNEON(cols, x []float32, s ConvShape) {
	switch ow := s.OW(); {
	case ow >= 16:
		im2colNEONx16(&cols[0], &x[0], s.C, s.H, s.W, s.KH, s.KW, s.OH(), ow)
	case ow >= 8:
		im2colNEONx8(&cols[0], &x[0], s.C, s.H, s.W, s.KH, s.KW, s.OH(), ow)
	default:
		im2colNEONx4(&cols[0], &x[0], s.C, s.H, s.W, s.KH, s.KW, s.OH(), ow)
	}
}

// col2imNEON zeroes dx and runs the NEON col2im.
func col2imNEON(dx, cols []float32, s ConvShape) {
	clear(dx[:s.InSize()])
	col2imNEONx16(&dx[0], &cols[0], s.C, s.H, s.W, s.KH, s.KW, s.OH(), s.OW())
}

// transposeNEON transposes bm×bn blocks of 8×8 floats.
func transposeNEON(dst []float32, ldd int, src []float32, lds, bm, bn int) {
	transposeNEONx8(&dst[0], &src[0], bm, bn, lds, ldd)
}

// first returns &s[0], or nil for an empty slice.
func first[T any](s []T) *T {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}
