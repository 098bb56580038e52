//go:build amd64 && !purego

package kernels

// Go declarations of the hand-written AVX2 elementwise kernels
// (elementwise_amd64.s); n is a multiple of 8.

//go:noescape
func reluAVX2(y, x *float32, n int)

//go:noescape
func reluBackAVX2(dx, dy, y *float32, n int)

//go:noescape
func addAVX2(y, a, b *float32, n int)

// elementwiseAsm reports whether ks runs the AVX2 elementwise kernels
// (the AVX-512 set does too: every AVX-512 CPU has AVX2).
func elementwiseAsm(ks *kernelSet) bool { return ks.isa == isaAVX2 || ks.isa == isaAVX512 }

//go:noescape
func fmaChains256(steps int)

//go:noescape
func fmaChains512(steps int)

// fmaChains returns the FMA-chain kernel of ks, or nil.
func fmaChains(ks *kernelSet) func(steps int) {
	switch ks.isa {
	case isaAVX512:
		return fmaChains512
	case isaAVX2:
		return fmaChains256
	}
	return nil
}

//go:noescape
func gnApplyAVX2(y, x *float32, n int, mean, rstd float64, scale, shift float32)

//go:noescape
func gnInputGradAVX2(dx, dy, x *float32, n int, mean, rstd, gam, m1, m2 float64)
