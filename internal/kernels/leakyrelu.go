package kernels

// LeakyReLU sets y = x where x > 0 and alpha·x elsewhere (torch's
// leaky_relu, NaN kept), elementwise, in pure Go on every kernel set (branch-free: pick32); y
// and x may be the same slice.
func LeakyReLU(y, x []float32, alpha float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] = pick32(v > 0, v, v*alpha)
	}
}

// LeakyReLUBackward sets dx = dy where x > 0 and alpha·dy elsewhere, x
// being the LeakyReLU's input (its output does not tell the sides apart
// for a negative alpha); dx and dy may be the same slice.
func LeakyReLUBackward(dx, dy, x []float32, alpha float32) {
	dx = dx[:len(dy)]
	x = x[:len(dy)]
	for i, g := range dy {
		dx[i] = pick32(x[i] > 0, g, g*alpha)
	}
}
