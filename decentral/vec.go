package decentral

// Float32 kernels of the optimizer's inner loops. Each reslices its inputs to
// len(dst) so the compiler drops the bounds checks.

// setScaled sets dst = a·x.
func setScaled(dst []float32, a float32, x []float32) {
	x = x[:len(dst)]
	for k := range dst {
		dst[k] = a * x[k]
	}
}

// setScaled2 sets dst = a·x + b·y.
func setScaled2(dst []float32, a float32, x []float32, b float32, y []float32) {
	x, y = x[:len(dst)], y[:len(dst)]
	for k := range dst {
		dst[k] = float32(a*x[k]) + float32(b*y[k])
	}
}

// setScaled3 sets dst = a·x + b·y + c·z.
func setScaled3(dst []float32, a float32, x []float32, b float32, y []float32, c float32, z []float32) {
	x, y, z = x[:len(dst)], y[:len(dst)], z[:len(dst)]
	for k := range dst {
		dst[k] = float32(a*x[k]) + float32(b*y[k]) + float32(c*z[k])
	}
}

// setScaled4 sets dst = a·x + b·y + c·z + d·u.
func setScaled4(dst []float32, a float32, x []float32, b float32, y []float32, c float32, z []float32, d float32, u []float32) {
	x, y, z, u = x[:len(dst)], y[:len(dst)], z[:len(dst)], u[:len(dst)]
	for k := range dst {
		dst[k] = float32(a*x[k]) + float32(b*y[k]) + float32(c*z[k]) + float32(d*u[k])
	}
}

// addScaled sets dst += a·x.
func addScaled(dst []float32, a float32, x []float32) {
	x = x[:len(dst)]
	for k := range dst {
		dst[k] += float32(a * x[k])
	}
}

// addScaled2 sets dst += a·x + b·y.
func addScaled2(dst []float32, a float32, x []float32, b float32, y []float32) {
	x, y = x[:len(dst)], y[:len(dst)]
	for k := range dst {
		dst[k] += float32(a*x[k]) + float32(b*y[k])
	}
}

// addScaled3 sets dst += a·x + b·y + c·z.
func addScaled3(dst []float32, a float32, x []float32, b float32, y []float32, c float32, z []float32) {
	x, y, z = x[:len(dst)], y[:len(dst)], z[:len(dst)]
	for k := range dst {
		dst[k] += float32(a*x[k]) + float32(b*y[k]) + float32(c*z[k])
	}
}

// addScaled4 sets dst += a·x + b·y + c·z + d·u.
func addScaled4(dst []float32, a float32, x []float32, b float32, y []float32, c float32, z []float32, d float32, u []float32) {
	x, y, z, u = x[:len(dst)], y[:len(dst)], z[:len(dst)], u[:len(dst)]
	for k := range dst {
		dst[k] += float32(a*x[k]) + float32(b*y[k]) + float32(c*z[k]) + float32(d*u[k])
	}
}

// sub sets dst -= x.
func sub(dst, x []float32) {
	x = x[:len(dst)]
	for k := range dst {
		dst[k] -= x[k]
	}
}

// add sets dst += x.
func add(dst, x []float32) {
	x = x[:len(dst)]
	for k := range dst {
		dst[k] += x[k]
	}
}

// finite reports whether every value of x is neither NaN nor ±Inf.
func finite(x []float32) bool {
	for _, v := range x {
		if v-v != 0 {
			return false
		}
	}
	return true
}
