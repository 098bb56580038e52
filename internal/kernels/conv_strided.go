package kernels

import "fmt"

// The column matrix of a strided or padded convolution (ConvShape), moved
// in pure Go: the same on every kernel set, and exact (im2col copies,
// col2im adds each image element's entries in the order of the column
// matrix's rows, then of its columns, as the valid convolution's kernels
// do). A padded stride-1 convolution given scratch space runs the valid
// convolution's vector kernels on the padded image instead, with the same
// bits: the same copies, and the same additions in the same order.

// Scratch is the number of floats of scratch that Im2ColScratch and
// Col2ImScratch use: the padded image, C·(H+PH+PB)·(W+PW+PR) with PB and
// PR the bottom's and the right's padding, for a padded stride-1
// convolution that is not dilated; 0 for the others.
func (cv *Conv) Scratch() int {
	if cv.padded == nil {
		return 0
	}
	return cv.padded.s.InSize()
}

// Im2ColScratch is Im2Col for the Conv's shape, faster for a padded
// stride-1 convolution given Scratch() floats of scratch: it pads x into
// scratch and runs the valid convolution's kernels on it. The columns are
// Im2Col's.
func (cv *Conv) Im2ColScratch(cols, x, scratch []float32) {
	if cv.padded == nil {
		cv.Im2Col(cols, x)
		return
	}
	cv.s.mustValid("Conv.Im2ColScratch", len(x), cv.s.InSize(), len(cols))
	cv.checkScratch("Conv.Im2ColScratch", scratch)
	cv.im2colPadded(use(), cols, x, scratch)
}

func (cv *Conv) im2colPadded(ks *kernelSet, cols, x, scratch []float32) {
	s := cv.s
	top, left := s.ph(), s.pw()
	ph, pw := s.H+top+s.pb(), s.W+left+s.pr()
	clear(scratch[:s.C*ph*pw])
	for c := range s.C {
		for y := range s.H {
			copy(scratch[(c*ph+y+top)*pw+left:][:s.W], x[(c*s.H+y)*s.W:])
		}
	}
	im2col(ks, cols, scratch, cv.padded.s, cv.padded.tbl)
}

// Col2ImScratch is Col2Im for the Conv's shape, faster for a padded
// stride-1 convolution given Scratch() floats of scratch: it runs the
// valid convolution's col2im into the padded image in scratch, then copies
// out its interior. dx gets Col2Im's bits.
func (cv *Conv) Col2ImScratch(dx, cols, scratch []float32) {
	if cv.padded == nil {
		cv.Col2Im(dx, cols)
		return
	}
	cv.s.mustValid("Conv.Col2ImScratch", len(dx), cv.s.InSize(), len(cols))
	cv.checkScratch("Conv.Col2ImScratch", scratch)
	cv.col2imPadded(use(), dx, cols, scratch)
}

func (cv *Conv) col2imPadded(ks *kernelSet, dx, cols, scratch []float32) {
	s := cv.s
	col2im(ks, scratch, cols, cv.padded.s)
	top, left := s.ph(), s.pw()
	ph, pw := s.H+top+s.pb(), s.W+left+s.pr()
	for c := range s.C {
		for y := range s.H {
			copy(dx[(c*s.H+y)*s.W:][:s.W], scratch[(c*ph+y+top)*pw+left:])
		}
	}
}

func (cv *Conv) checkScratch(op string, scratch []float32) {
	if n := cv.Scratch(); len(scratch) < n {
		panic(fmt.Sprintf("kernels: %s: scratch has %d elements, want ≥ %d", op, len(scratch), n))
	}
}

// span returns the outputs o in [lo, hi) of a row or column of n outputs
// whose input index o·stride + off falls inside [0, size).
func span(n, stride, off, size int) (lo, hi int) {
	if off < 0 {
		lo = (-off + stride - 1) / stride
	}
	if last := size - 1 - off; last < 0 {
		hi = 0
	} else {
		hi = min(n, last/stride+1)
	}
	return min(lo, hi), hi
}

// im2colStrided writes the K()×P() column matrix of x (C×H×W) into cols,
// zeros where a kernel position falls in the padding; ks's vector gather
// moves the rows of a stride-2 convolution where it has one.
func im2colStrided(ks *kernelSet, cols, x []float32, s ConvShape) {
	oh, ow, p, st := s.OH(), s.OW(), s.P(), s.step()
	r := 0
	for c := range s.C {
		plane := x[c*s.H*s.W : (c+1)*s.H*s.W]
		for i := range s.KH {
			y0, y1 := span(oh, st, i-s.Pad, s.H)
			for j := range s.KW {
				x0, x1 := span(ow, st, j-s.Pad, s.W)
				dst := cols[r*p : (r+1)*p]
				clear(dst[:y0*ow])
				r++
				if st == 2 && y1 > y0 && x1 > x0 && gatherRows2(ks, dst[y0*ow+x0:], plane[(y0*st+i-s.Pad)*s.W+x0*st+j-s.Pad:], x1-x0, y1-y0, ow, st*s.W) {
					for oy := y0; oy < y1; oy++ {
						clear(dst[oy*ow : oy*ow+x0])
						clear(dst[oy*ow+x1 : (oy+1)*ow])
					}
					clear(dst[y1*ow:])
					continue
				}
				for oy := y0; oy < y1; oy++ {
					d := dst[oy*ow : (oy+1)*ow]
					clear(d[:x0])
					clear(d[x1:])
					if x0 == x1 { // a stride past the row's end: no tap in the image
						continue
					}
					src := plane[(oy*st+i-s.Pad)*s.W:][:s.W]
					if st == 1 {
						copy(d[x0:x1], src[x0+j-s.Pad:])
						continue
					}
					gather(d[x0:x1], src[x0*st+j-s.Pad:], st)
				}
				clear(dst[y1*ow:])
			}
		}
	}
}

// col2imStrided sets dx (C×H×W) to the sum of the entries of cols that
// im2colStrided reads from each of its elements; entries of the padding are
// dropped.
func col2imStrided(dx, cols []float32, s ConvShape) {
	oh, ow, p, st := s.OH(), s.OW(), s.P(), s.step()
	clear(dx[:s.InSize()])
	r := 0
	for c := range s.C {
		plane := dx[c*s.H*s.W : (c+1)*s.H*s.W]
		for i := range s.KH {
			y0, y1 := span(oh, st, i-s.Pad, s.H)
			for j := range s.KW {
				x0, x1 := span(ow, st, j-s.Pad, s.W)
				src := cols[r*p : (r+1)*p]
				for oy := y0; oy < y1 && x0 < x1; oy++ {
					row := src[oy*ow : (oy+1)*ow]
					dst := plane[(oy*st+i-s.Pad)*s.W:][:s.W]
					if st == 1 {
						d := dst[x0+j-s.Pad:][:x1-x0]
						for k, v := range row[x0:x1] {
							d[k] += v
						}
						continue
					}
					scatterAdd(dst[x0*st+j-s.Pad:], row[x0:x1], st)
				}
				r++
			}
		}
	}
}

// gather sets dst[k] = src[k·stride].
func gather(dst, src []float32, stride int) {
	if len(dst) == 0 {
		return
	}
	src = src[:(len(dst)-1)*stride+1]
	for k := range dst {
		dst[k] = src[k*stride]
	}
}

// scatterAdd adds src[k] to dst[k·stride], k in order.
func scatterAdd(dst, src []float32, stride int) {
	if len(src) == 0 {
		return
	}
	dst = dst[:(len(src)-1)*stride+1]
	for k, v := range src {
		dst[k*stride] += v
	}
}
