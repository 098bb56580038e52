//go:build !(arm64 || ppc64 || ppc64le || s390x || riscv64 || loong64)

package kernels

// fma32 returns a·b + c rounded once to float32: the pure-Go kernels' only
// multiply-add, so that they give the vector kernels' bits. Go does not fuse
// it into an FMA instruction here, or not reliably (amd64 fuses only with
// GOAMD64=v3, and not where it folds a load; 386, wasm and mips never), so
// it is emulated, with every product converted so that nothing fuses.
func fma32(a, b, c float32) float32 { return fma32Emulated(a, b, c) }

// axpy32 sets y[j] = fma32(a, x[j], y[j]) for j < len(y), with
// fma32Emulated's fast path written out so that the loop has no call
// (fma32Emulated itself is too big to inline). A zero multiplier (a ReLU's
// zeros in a gradient) makes every product an exact zero, so float32's own
// multiply and add round once, as the FMA does.
func axpy32(y, x []float32, a float32) {
	x = x[:len(y)]
	if a == 0 {
		for j, xv := range x {
			y[j] += float32(a * xv) // the conversion forbids fusing
		}
		return
	}
	fa := float64(a)
	for j, xv := range x {
		p := float64(fa * float64(xv)) // exact; converted so that nothing fuses
		s := p + float64(y[j])
		if roundsTwice(s) {
			y[j] = fma32Slow(p, float64(y[j]), s)
			continue
		}
		y[j] = float32(s)
	}
}

// fmaLanes sets lane[l] = fma32(x[l], y[l], lane[l]) for the 16 lanes.
func fmaLanes(lane *[dotLanes]float32, x, y []float32) {
	x, y = x[:dotLanes], y[:dotLanes]
	for l := range lane {
		p := float64(float64(x[l]) * float64(y[l]))
		s := p + float64(lane[l])
		if roundsTwice(s) {
			lane[l] = fma32Slow(p, float64(lane[l]), s)
			continue
		}
		lane[l] = float32(s)
	}
}
