//go:build arm64 && !purego

package kernels

//go:noescape
func fmaChainsNEON(steps int)

// fmaChains returns the FMA-chain kernel of ks, or nil.
func fmaChains(ks *kernelSet) func(steps int) {
	if ks.isa == isaNEON {
		return fmaChainsNEON
	}
	return nil
}
