package kernels

import "github.com/gtstorm/gtstorm/internal/detmath"

// expBlock is the number of values the exponential activations gather
// into one exp64s call: their arguments and results live in a stack array
// of this many float64s.
const expBlock = 256

// exp64s sets dst[i] = detmath.Exp(src[i]) with its bits on every kernel
// set: the AVX2 kernel (exp64_amd64.s) runs the same operations in each
// lane, 12 values a step; the pure-Go set and the last len%4 values call
// detmath.Exp. dst and src may be the same slice.
func exp64s(ks *kernelSet, dst, src []float64) {
	dst = dst[:len(src)]
	i := 0
	if n := len(src) &^ 3; n > 0 && elementwiseAsm(ks) {
		exp64AVX2(&dst[0], &src[0], n)
		i = n
	}
	for ; i < len(src); i++ {
		dst[i] = detmath.Exp(src[i])
	}
}

// Exp64s sets dst[i] = detmath.Exp(src[i]), with its bits, on the native
// kernel set (AVX2: 12 values a step). dst and src may be the same slice.
func Exp64s(dst, src []float64) { exp64s(use(), dst, src) }

// expOf sets e[j] = detmath.Exp(float64(x[j])) for a block of x (at most
// expBlock values) and returns e[:len(x)].
func expOf(ks *kernelSet, e *[expBlock]float64, x []float32) []float64 {
	eb := e[:len(x)]
	for j, v := range x {
		eb[j] = float64(v)
	}
	exp64s(ks, eb, eb)
	return eb
}

// expSigmoidOf sets e[j] = detmath.Exp(sigmoidArg(x[j])), e^−|x|, for a
// block of x (at most expBlock values), the exponentials sigmoidFrom
// takes, and returns e[:len(x)].
func expSigmoidOf(ks *kernelSet, e *[expBlock]float64, x []float32) []float64 {
	eb := e[:len(x)]
	for j, v := range x {
		eb[j] = sigmoidArg(float64(v))
	}
	exp64s(ks, eb, eb)
	return eb
}
