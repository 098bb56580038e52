package kernels

// The output size and AvgPool divisor of a WindowShape with Ceil
// (PyTorch's ceil_mode=True). Its pooling runs the padded kernels of
// window_pad.go, which clip every window to the plane.

// ceilSide returns the number of windows of k moved by stride over a side
// of size with pad on each end, rounded up as PyTorch's pooling_output_shape
// does: ⌈(size+2·pad−k)/stride⌉+1, less the last window where it would
// start at or past size+pad, in the trailing padding.
func ceilSide(size, k, stride, pad int) int {
	o := (size+2*pad-k+stride-1)/stride + 1
	if (o-1)*stride >= size+pad {
		o--
	}
	return o
}

// ceilDivisor returns the extent of a window at offset o (o = out·stride −
// pad) along a side of size, counting its padding but clipped at the
// trailing padding's end size+pad: min(o+k, size+pad) − o, PyTorch's
// avg_pool2d divisor factor with count_include_pad=True. It is k for every
// window that ends within that padding, so every window of a floor-mode
// shape.
func ceilDivisor(o, k, size, pad int) int {
	return min(o+k, size+pad) - o
}
