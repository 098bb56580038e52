package kernels

import "fmt"

// Mul sets y = a·b elementwise, one float32 product per element (pure Go:
// a product rounds the same on every kernel set). y may be a or b. It
// serves dropout, whose mask b is 0 or the keep scale 1/(1−p).
func Mul(y, a, b []float32) {
	if len(a) != len(b) || len(y) < len(a) {
		panic(fmt.Sprintf("kernels: Mul: %d · %d values into %d", len(a), len(b), len(y)))
	}
	y = y[:len(a)]
	b = b[:len(a)]
	for i, v := range a {
		y[i] = v * b[i]
	}
}
