package kernels

import "fmt"

// AddBiasRows adds bias[j] to column j of x, a rows×len(bias) row-major
// matrix (a fully connected layer's output), and with relu clamps the
// result at zero.
func AddBiasRows(x, bias []float32, rows int, relu bool) {
	n := len(bias)
	if len(x) < rows*n {
		panic(fmt.Sprintf("kernels: AddBiasRows: x has %d elements, want ≥ %d", len(x), rows*n))
	}
	for r := range rows {
		row := x[r*n : (r+1)*n]
		if relu {
			for j, b := range bias {
				row[j] = max(row[j]+b, 0)
			}
			continue
		}
		for j, b := range bias {
			row[j] += b
		}
	}
}

// AddBiasPlanes adds bias[c] to every element of plane c of each of the n
// images of x (NCHW, planes of plane elements), and with relu clamps the
// result at zero.
func AddBiasPlanes(x, bias []float32, n, plane int, relu bool) {
	c := len(bias)
	if len(x) < n*c*plane {
		panic(fmt.Sprintf("kernels: AddBiasPlanes: x has %d elements, want ≥ %d", len(x), n*c*plane))
	}
	for i := range n * c {
		p := x[i*plane : (i+1)*plane]
		b := bias[i%c]
		if relu {
			for j := range p {
				p[j] = max(p[j]+b, 0)
			}
			continue
		}
		for j := range p {
			p[j] += b
		}
	}
}

// ReLU sets y = max(x, 0) elementwise (y = x where x > 0 or x is NaN, +0
// elsewhere); y and x may be the same slice.
func ReLU(y, x []float32) { reluSet(use(), y, x) }

func reluSet(ks *kernelSet, y, x []float32) {
	y = y[:len(x)]
	i := 0
	if n := len(x) &^ 7; n > 0 && elementwiseAsm(ks) {
		reluAVX2(&y[0], &x[0], n)
		i = n
	}
	for ; i < len(x); i++ {
		v := x[i]
		y[i] = pick32(v <= 0, 0, v) // a select, not a branch (pick.go)
	}
}

// ReLUBackward sets dx = dy where y > 0 and 0 elsewhere, y being the ReLU's
// output; dx and dy may be the same slice.
func ReLUBackward(dx, dy, y []float32) { reluBackwardSet(use(), dx, dy, y) }

func reluBackwardSet(ks *kernelSet, dx, dy, y []float32) {
	dx = dx[:len(dy)]
	y = y[:len(dy)]
	i := 0
	if n := len(dy) &^ 7; n > 0 && elementwiseAsm(ks) {
		reluBackAVX2(&dx[0], &dy[0], &y[0], n)
		i = n
	}
	for ; i < len(dy); i++ {
		dx[i] = pick32(y[i] > 0, dy[i], 0)
	}
}

// BiasGradRows adds to db[j] the sum of column j of dy, a rows×len(db)
// row-major matrix, accumulating in float64 (row by row, for blocks of up
// to 256 columns at a time: no allocation, whatever the width).
func BiasGradRows(db, dy []float32, rows int) {
	n := len(db)
	if len(dy) < rows*n {
		panic(fmt.Sprintf("kernels: BiasGradRows: dy has %d elements, want ≥ %d", len(dy), rows*n))
	}
	var buf [256]float64
	for j0 := 0; j0 < n; j0 += len(buf) {
		acc := buf[:min(len(buf), n-j0)]
		clear(acc)
		for r := range rows {
			for j, v := range dy[r*n+j0:][:len(acc)] {
				acc[j] += float64(v)
			}
		}
		for j, v := range acc {
			db[j0+j] += float32(v)
		}
	}
}

// BiasGradPlanes adds to db[c] the sum of plane c over the n images of dy
// (NCHW, planes of plane elements): float32 partial sums within a plane,
// float64 across planes, image by image.
func BiasGradPlanes(db, dy []float32, n, plane int) {
	c := len(db)
	if len(dy) < n*c*plane {
		panic(fmt.Sprintf("kernels: BiasGradPlanes: dy has %d elements, want ≥ %d", len(dy), n*c*plane))
	}
	for ch := range c {
		var acc float64
		for i := range n {
			acc += float64(sum32(dy[(i*c+ch)*plane : (i*c+ch+1)*plane]))
		}
		db[ch] += float32(acc)
	}
}

// sum32 adds x with eight interleaved float32 partial sums.
func sum32(x []float32) float32 {
	var s [8]float32
	i := 0
	for ; i+8 <= len(x); i += 8 {
		v := x[i : i+8 : i+8]
		s[0] += v[0]
		s[1] += v[1]
		s[2] += v[2]
		s[3] += v[3]
		s[4] += v[4]
		s[5] += v[5]
		s[6] += v[6]
		s[7] += v[7]
	}
	for ; i < len(x); i++ {
		s[0] += x[i]
	}
	return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
}
