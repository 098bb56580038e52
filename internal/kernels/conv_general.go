package kernels

// The column matrix of a convolution whose axes differ in stride or
// padding, or whose kernel is dilated (ConvShape's per-axis fields), moved
// in pure Go: the same on every kernel set, and exact. im2colGeneral
// copies; col2imGeneral adds each image element's entries in the order of
// the column matrix's rows, then of its columns, as the other paths do, so
// a uniform shape run through it would give their bits.

// im2colGeneral writes the K()×P() column matrix of x (C×H×W) into cols,
// zeros where a kernel tap falls in the padding.
func im2colGeneral(cols, x []float32, s ConvShape) {
	oh, ow, p := s.OH(), s.OW(), s.P()
	sh, sw, ph, pw, dh, dw := s.sh(), s.sw(), s.ph(), s.pw(), s.dh(), s.dw()
	r := 0
	for c := range s.C {
		plane := x[c*s.H*s.W : (c+1)*s.H*s.W]
		for i := range s.KH {
			y0, y1 := span(oh, sh, i*dh-ph, s.H)
			for j := range s.KW {
				x0, x1 := span(ow, sw, j*dw-pw, s.W)
				dst := cols[r*p : (r+1)*p]
				r++
				if x0 >= x1 {
					clear(dst)
					continue
				}
				clear(dst[:y0*ow])
				for oy := y0; oy < y1; oy++ {
					d := dst[oy*ow : (oy+1)*ow]
					clear(d[:x0])
					clear(d[x1:])
					src := plane[(oy*sh+i*dh-ph)*s.W:][:s.W]
					if sw == 1 {
						copy(d[x0:x1], src[x0+j*dw-pw:])
						continue
					}
					gather(d[x0:x1], src[x0*sw+j*dw-pw:], sw)
				}
				clear(dst[max(y1, y0)*ow:])
			}
		}
	}
}

// col2imGeneral sets dx (C×H×W) to the sum of the entries of cols that
// im2colGeneral reads from each of its elements; entries of the padding
// are dropped.
func col2imGeneral(dx, cols []float32, s ConvShape) {
	oh, ow, p := s.OH(), s.OW(), s.P()
	sh, sw, ph, pw, dh, dw := s.sh(), s.sw(), s.ph(), s.pw(), s.dh(), s.dw()
	clear(dx[:s.InSize()])
	r := 0
	for c := range s.C {
		plane := dx[c*s.H*s.W : (c+1)*s.H*s.W]
		for i := range s.KH {
			y0, y1 := span(oh, sh, i*dh-ph, s.H)
			for j := range s.KW {
				x0, x1 := span(ow, sw, j*dw-pw, s.W)
				src := cols[r*p : (r+1)*p]
				r++
				if x0 >= x1 {
					continue
				}
				for oy := y0; oy < y1; oy++ {
					row := src[oy*ow : (oy+1)*ow]
					dst := plane[(oy*sh+i*dh-ph)*s.W:][:s.W]
					if sw == 1 {
						d := dst[x0+j*dw-pw:][:x1-x0]
						for k, v := range row[x0:x1] {
							d[k] += v
						}
						continue
					}
					scatterAdd(dst[x0*sw+j*dw-pw:], row[x0:x1], sw)
				}
			}
		}
	}
}
