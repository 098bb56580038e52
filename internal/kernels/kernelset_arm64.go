//go:build arm64 && !purego

package kernels

var neonSet = &kernelSet{name: "neon", isa: isaNEON, maxMR: maxMRNEON, dotMR: 4, dotNR: 6, lanes: 4}

// available returns the NEON kernels (every arm64 CPU has Advanced SIMD)
// and the pure-Go ones.
func available() []*kernelSet { return []*kernelSet{neonSet, generic} }

// bcastNEON runs the NEON broadcast kernel on np whole panels.
func bcastNEON(mr, pv, np, k, nb int, a []float32, aoff, rsa, csa, sta int, b []float32, boff, ldb, stb int, c []float32, coff, ldc int, alpha, beta float32) {
	bcastNEONAsm(mr, pv, k, nb, &a[aoff], rsa, csa, sta, &b[boff], ldb, stb, &c[coff], ldc, alpha, beta, np)
}
