//go:build amd64 && !purego

// Go declarations and slice wrappers of the hand-written assembly kernels
// (conv_amd64.s, pool_amd64.s) and the generated transpose.

package kernels

//go:noescape
func im2col512(dst, src *float32, c, h, w, kh, kw, oh, ow int)

//go:noescape
func col2imPlane512(dx, cols *float32, h, w, kh, kw, oh, ow int)

//go:noescape
func im2colPerm512(dst, src *float32, tbl *int32, nchunk, c, h, w, kh, kw, p int)

//go:noescape
func col2imNarrow512x1(dx, cols *float32, c, h, w, kh, oh, ow int)

//go:noescape
func col2imNarrow512x2(dx, cols *float32, c, h, w, kh, oh, ow int)

//go:noescape
func col2imNarrow512x3(dx, cols *float32, c, h, w, kh, oh, ow int)

//go:noescape
func col2imNarrow512x4(dx, cols *float32, c, h, w, kh, oh, ow int)

//go:noescape
func col2imNarrow512x5(dx, cols *float32, c, h, w, kh, oh, ow int)

//go:noescape
func col2imNarrow512x6(dx, cols *float32, c, h, w, kh, oh, ow int)

//go:noescape
func col2imNarrow512x7(dx, cols *float32, c, h, w, kh, oh, ow int)

// im2colAsm uses the permute kernel when the shape has a gather table and
// the row-copy kernel otherwise.
func im2colAsm(cols, x []float32, s ConvShape, tbl []int32) {
	if tbl != nil {
		im2colPerm512(&cols[0], &x[0], &tbl[0], len(tbl)/permEntry, s.C, s.H, s.W, s.KH, s.KW, s.P())
		return
	}
	im2col512(&cols[0], &x[0], s.C, s.H, s.W, s.KH, s.KW, s.OH(), s.OW())
}

// im2colAVX2 runs the AVX2 im2col (it needs s.OW() ≥ 4): rows of 8 to 32
// floats (every CNN layer of the paper) by a kernel with the row written
// out, wider or narrower ones by a step loop.
func im2colAVX2(cols, x []float32, s ConvShape) {
	if ow := s.OW(); ow >= 8 && ow <= 32 {
		switch (ow - 1) / 8 {
		case 0:
			im2col256r0(&cols[0], &x[0], s.C, s.H, s.W, s.KH, s.KW, s.OH(), ow)
		case 1:
			im2col256r1(&cols[0], &x[0], s.C, s.H, s.W, s.KH, s.KW, s.OH(), ow)
		case 2:
			im2col256r2(&cols[0], &x[0], s.C, s.H, s.W, s.KH, s.KW, s.OH(), ow)
		default:
			im2col256r3(&cols[0], &x[0], s.C, s.H, s.W, s.KH, s.KW, s.OH(), ow)
		}
		return
	}
	if s.OW() >= 8 {
		im2col256x8(&cols[0], &x[0], s.C, s.H, s.W, s.KH, s.KW, s.OH(), s.OW())
		return
	}
	im2col256x4(&cols[0], &x[0], s.C, s.H, s.W, s.KH, s.KW, s.OH(), s.OW())
}

// col2imAVX2 zeroes dx and runs the AVX2 col2im.
func col2imAVX2(dx, cols []float32, s ConvShape) {
	clear(dx[:s.InSize()])
	col2im256(&dx[0], &cols[0], s.C, s.H, s.W, s.KH, s.KW, s.OH(), s.OW())
}

// col2imAsm runs the gather form of col2im: unrolled over the kernel
// columns for rows of at most 16 floats, else one channel plane at a time
// (needs W < 64: a row's lanes are selected with 64-bit masks).
func col2imAsm(dx, cols []float32, s ConvShape) {
	d, c := &dx[0], &cols[0]
	if s.W <= 16 {
		switch s.KW {
		case 1:
			col2imNarrow512x1(d, c, s.C, s.H, s.W, s.KH, s.OH(), s.OW())
			return
		case 2:
			col2imNarrow512x2(d, c, s.C, s.H, s.W, s.KH, s.OH(), s.OW())
			return
		case 3:
			col2imNarrow512x3(d, c, s.C, s.H, s.W, s.KH, s.OH(), s.OW())
			return
		case 4:
			col2imNarrow512x4(d, c, s.C, s.H, s.W, s.KH, s.OH(), s.OW())
			return
		case 5:
			col2imNarrow512x5(d, c, s.C, s.H, s.W, s.KH, s.OH(), s.OW())
			return
		case 6:
			col2imNarrow512x6(d, c, s.C, s.H, s.W, s.KH, s.OH(), s.OW())
			return
		case 7:
			col2imNarrow512x7(d, c, s.C, s.H, s.W, s.KH, s.OH(), s.OW())
			return
		}
	}
	plane, rows := s.H*s.W, s.KH*s.KW*s.P()
	for c := range s.C {
		col2imPlane512(&dx[c*plane], &cols[c*rows], s.H, s.W, s.KH, s.KW, s.OH(), s.OW())
	}
}

//go:noescape
func maxpool512(y *float32, code *uint8, x *float32, planes, h, w int, bias *float32, nc int, lo float32)

//go:noescape
func maxpoolBack512(dx, dy, y *float32, code *uint8, planes, h, w int, sums *float64, nc int)

func maxpoolAsm(y []float32, code []uint8, x []float32, s PoolShape, bias []float32, lo float32) {
	b := first(bias)
	maxpool512(&y[0], &code[0], &x[0], s.Planes, s.H, s.W, b, max(1, len(bias)), lo)
}

// maxpoolAVX2 runs the AVX2 pooling kernel, 8 outputs per step where rows
// have 8 or more and 4 otherwise (it needs s.OW() ≥ 4).
func maxpoolAVX2(y []float32, code []uint8, x []float32, s PoolShape, bias []float32, lo float32) {
	b := first(bias)
	if s.OW() >= 8 {
		maxpool256x8(&y[0], &code[0], &x[0], s.Planes, s.H, s.W, b, max(1, len(bias)), lo)
		return
	}
	maxpool256x4(&y[0], &code[0], &x[0], s.Planes, s.H, s.W, b, max(1, len(bias)), lo)
}

// maxpoolBackAVX2 runs the AVX2 pooling adjoint (it needs s.OW() ≥ 4).
func maxpoolBackAVX2(dx, dy, y []float32, code []uint8, s PoolShape, sums []float64) {
	yp, sp := first(y), first(sums)
	if s.OW() >= 8 {
		maxpoolBack256x8(&dx[0], &dy[0], yp, &code[0], s.Planes, s.H, s.W, sp, max(1, len(sums)))
		return
	}
	maxpoolBack256x4(&dx[0], &dy[0], yp, &code[0], s.Planes, s.H, s.W, sp, max(1, len(sums)))
}

func maxpoolBackAsm(dx, dy, y []float32, code []uint8, s PoolShape, sums []float64) {
	yp, sp := first(y), first(sums)
	maxpoolBack512(&dx[0], &dy[0], yp, &code[0], s.Planes, s.H, s.W, sp, max(1, len(sums)))
}

func transposeAsm(dst []float32, ldd int, src []float32, lds, bm, bn int) {
	transpose16x512(&dst[0], &src[0], bm, bn, lds, ldd)
}

func transposeAVX2(dst []float32, ldd int, src []float32, lds, bm, bn int) {
	transpose8x256(&dst[0], &src[0], bm, bn, lds, ldd)
}

// first returns &s[0], or nil for an empty slice.
func first[T any](s []T) *T {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}
