//go:build !arm64

package kernels

// fma32 returns a·b + c rounded once to float32: the pure-Go kernels' only
// multiply-add, so that they give the vector kernels' bits. Go does not fuse
// it into an FMA instruction here (amd64 before x86-64-v3 has none), so it
// is emulated.
func fma32(a, b, c float32) float32 { return fma32Emulated(a, b, c) }
