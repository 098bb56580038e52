package kernels

import "math"

// Clamp sets y = lo where x < lo, hi where x > hi, x elsewhere (NaN, and
// a zero against a bound of the other sign, stay as they are), for
// torch's nn.Hardtanh and nn.ReLU6. The AVX2 kernel is a VMAXPS and a
// VMINPS a vector; the Go loop selects bits rather than branching (on the
// half-negative values a normalisation writes, a branch mispredicts about
// every other element). The same bits on every kernel set.
func Clamp(y, x []float32, lo, hi float32) { clampSet(use(), y, x, lo, hi) }

func clampSet(ks *kernelSet, y, x []float32, lo, hi float32) {
	y = y[:len(x)]
	i := 0
	if n := len(x) &^ 7; n > 0 && elementwiseAsm(ks) {
		clampAVX2(&y[0], &x[0], n, lo, hi)
		i = n
	}
	lb, hb := math.Float32bits(lo), math.Float32bits(hi)
	for ; i < len(x); i++ {
		v := x[i]
		r := math.Float32bits(v)
		m := -bit(v < lo)
		r = r&^m | lb&m
		m = -bit(v > hi)
		y[i] = math.Float32frombits(r&^m | hb&m)
	}
}

// ClampBackward sets dx = dy where lo < x < hi and +0 elsewhere (torch's
// hardtanh_backward); dx and dy may be the same slice.
func ClampBackward(dx, dy, x []float32, lo, hi float32) { clampBackwardSet(use(), dx, dy, x, lo, hi) }

func clampBackwardSet(ks *kernelSet, dx, dy, x []float32, lo, hi float32) {
	dx = dx[:len(x)]
	dy = dy[:len(x)]
	i := 0
	if n := len(x) &^ 7; n > 0 && elementwiseAsm(ks) {
		clampBackAVX2(&dx[0], &dy[0], &x[0], n, lo, hi)
		i = n
	}
	for ; i < len(x); i++ {
		v := x[i]
		m := -(bit(v > lo) & bit(v < hi))
		dx[i] = math.Float32frombits(math.Float32bits(dy[i]) & m)
	}
}
