//go:build !(amd64 || arm64) || purego

package kernels

// fmaChains returns nil: no FMA-chain kernel without assembly.
func fmaChains(ks *kernelSet) func(steps int) { return nil }
