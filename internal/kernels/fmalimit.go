package kernels

import "time"

// FMALimit measures the FMA limit of one core on the kernel set in use:
// the GFLOPS of 12 independent chains of fused multiply-adds on registers
// (256-bit on AVX2, 512-bit on AVX-512), run for about d. It returns 0 for
// a set without an FMA-chain kernel (NEON, pure Go). Figures such as a
// gradient's GFLOPS are reported as a fraction of it.
func FMALimit(d time.Duration) float64 { return fmaLimit(use(), d) }

// fmaStepFLOP is the floating-point work of one step of the FMA-chain
// kernels per 32-bit lane: 48 fused multiply-adds of 2 FLOP.
const fmaStepFLOP = 96

func fmaLimit(ks *kernelSet, d time.Duration) float64 {
	run := fmaChains(ks)
	if run == nil {
		return 0
	}
	lanes := 8
	if ks.isa == isaAVX512 {
		lanes = 16
	}
	steps := 1 << 10
	for {
		start := time.Now()
		run(steps)
		if el := time.Since(start); el >= d || steps >= 1<<40 {
			return float64(fmaStepFLOP*lanes) * float64(steps) / el.Seconds() / 1e9
		}
		steps *= 2
	}
}
