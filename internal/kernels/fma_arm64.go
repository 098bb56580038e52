package kernels

// fma32 returns a·b + c rounded once to float32: the pure-Go kernels' only
// multiply-add, so that they give the vector kernels' bits. On arm64 the
// compiler fuses this expression into one FMADDS instruction (TestFMA32
// checks that it does).
func fma32(a, b, c float32) float32 { return a*b + c }
