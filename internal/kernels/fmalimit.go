package kernels

import "time"

// FMALimit measures the FMA limit of one core on the kernel set in use:
// the GFLOPS of independent chains of fused multiply-adds on registers (12
// on 256-bit AVX2 or 512-bit AVX-512 registers, 24 on 128-bit NEON ones),
// run for about d. It returns 0 for a set without an FMA-chain kernel (pure
// Go). Figures such as a gradient's GFLOPS are reported as a fraction of it.
func FMALimit(d time.Duration) float64 { return fmaLimit(use(), d) }

// fmaStepFLOP is the floating-point work of one step of the FMA-chain
// kernels per 32-bit lane: 48 fused multiply-adds of 2 FLOP.
const fmaStepFLOP = 96

func fmaLimit(ks *kernelSet, d time.Duration) float64 {
	run := fmaChains(ks)
	if run == nil {
		return 0
	}
	lanes := ks.lanes
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
