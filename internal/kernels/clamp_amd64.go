//go:build amd64 && !purego

package kernels

// Go declarations of the AVX2 clamp kernels (clamp_amd64.s); n is a
// multiple of 8.

//go:noescape
func clampAVX2(y, x *float32, n int, lo, hi float32)

//go:noescape
func clampBackAVX2(dx, dy, x *float32, n int, lo, hi float32)
