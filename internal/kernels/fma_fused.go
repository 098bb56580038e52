//go:build arm64 || ppc64 || ppc64le || s390x || riscv64 || loong64

package kernels

// fma32 returns a·b + c rounded once to float32: the pure-Go kernels' only
// multiply-add, so that they give the vector kernels' bits. On these
// architectures the compiler fuses this expression into one FMA
// instruction (FMADDS; TestFMA32 and TestKernelSetsSameBits's digest check
// that it does). amd64 built with GOAMD64=v3 fuses too, but not reliably:
// where an operand comes from memory, a folded load can win over the FMA
// (TestFMA32 failed so), so amd64 emulates it at every level. Everywhere
// else in the module a product is converted before it is added, so that
// nothing else fuses (internal/detmath's TestNoFusedMultiplyAdd).
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
