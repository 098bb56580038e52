//go:build (!amd64 && !arm64) || purego

package kernels

// available returns the pure-Go kernels: there is no assembly for this
// architecture (or the build asked for none with the purego tag).
func available() []*kernelSet { return []*kernelSet{generic} }
