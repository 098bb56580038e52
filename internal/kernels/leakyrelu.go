package kernels

// LeakyReLU sets y = x where x > 0 and alpha·x elsewhere (torch's
// leaky_relu, NaN kept), elementwise, in pure Go on every kernel set; y
// and x may be the same slice.
func LeakyReLU(y, x []float32, alpha float32) {
	y = y[:len(x)]
	for i, v := range x {
		if !(v > 0) {
			v *= alpha
		}
		y[i] = v
	}
}

// LeakyReLUBackward sets dx = dy where x > 0 and alpha·dy elsewhere, x
// being the LeakyReLU's input (its output does not tell the sides apart
// for a negative alpha); dx and dy may be the same slice.
func LeakyReLUBackward(dx, dy, x []float32, alpha float32) {
	dx = dx[:len(dy)]
	x = x[:len(dy)]
	for i, g := range dy {
		if !(x[i] > 0) {
			g *= alpha
		}
		dx[i] = g
	}
}
