//go:build arm64 || ppc64 || ppc64le || s390x || riscv64 || loong64 || amd64.v3

package kernels

// fma32 returns a·b + c rounded once to float32: the pure-Go kernels' only
// multiply-add, so that they give the vector kernels' bits. On these
// architectures (and on amd64 built with GOAMD64=v3) the compiler fuses
// this expression into one FMA instruction (FMADDS, VFMADD231SS; TestFMA32
// checks that it does). Everywhere else in the module a product is
// converted before it is added, so that nothing else fuses (internal/nofuse).
func fma32(a, b, c float32) float32 { return a*b + c }

// axpy32 sets y[j] = fma32(a, x[j], y[j]) for j < len(y).
func axpy32(y, x []float32, a float32) {
	x = x[:len(y)]
	for j, xv := range x {
		y[j] = a*xv + y[j]
	}
}

// fmaLanes sets lane[l] = fma32(x[l], y[l], lane[l]) for the 16 lanes.
func fmaLanes(lane *[dotLanes]float32, x, y []float32) {
	x, y = x[:dotLanes], y[:dotLanes]
	for l := range lane {
		lane[l] = x[l]*y[l] + lane[l]
	}
}
