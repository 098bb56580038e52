// Package detmath gives the same floating-point bits on every architecture.
//
// Go's math package does not: Exp and Log are assembly on amd64 (Exp with
// a fused multiply-add where the CPU has one), pure Go elsewhere, and the
// compiler fuses x*y + z into one FMA instruction on arm64, ppc64, s390x,
// riscv64, loong64 and amd64 built with GOAMD64=v3, but never on plain
// amd64. A run on an ARM laptop then drifts from the same seed's run on an
// x86 server after the first softmax. The functions here are ports of
// Go's (and of the amd64 assembly's FMA path, for Exp) in which every
// product that meets an addition is first converted, float64(a*b), which
// the Go specification says forbids fusing; where the algorithm wants a
// fused multiply-add it calls math.FMA, which is exact everywhere. On an
// amd64 CPU with FMA they return math's bits (the tests check this), so
// results computed there before this package existed are unchanged.
//
// The package's tests also check the whole module: no Go code outside the
// kernels' deliberate float32 FMA lets the compiler fuse (TestNoFusedMultiplyAdd).
package detmath
