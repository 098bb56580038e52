package kernels

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestLayerKernelsSameBits checks that the kernels of ResNet-like layers —
// strided and padded im2col and col2im, group normalisation, k×k max- and
// average pooling, global average pooling and Add — give the same bits on
// every kernel set this CPU runs and the bits recorded on amd64
// (wantLayersDigest), so that an architecture whose compiler fuses
// multiply-adds (arm64, ppc64le, s390x: .ci/run runs this package there
// under qemu) is checked too.
func TestLayerKernelsSameBits(t *testing.T) {
	digests := map[string]string{}
	for _, ks := range kernelSets() {
		digests[ks.name] = layersDigest(ks)
	}
	for name, d := range digests {
		if d != wantLayersDigest {
			t.Errorf("kernel set %s on %s: digest %s, amd64 gives %s (pure Go here: %s)", name, runtime.GOARCH, d, wantLayersDigest, digests["go"])
		}
	}
}

// wantLayersDigest is layersDigest's value, recorded on amd64; a change to
// a kernel's arithmetic must record the new value.
const wantLayersDigest = "20fd11afe8cca704d4302d4d143a2bc642a1b1116e0d6d223b8b5542ef1a059a"

// layersDigest runs the layer kernels on fixed data (with ks for the
// convolution's data movement) and digests every bit of their results.
func layersDigest(ks *kernelSet) string {
	h := sha256.New()
	put := func(v ...float32) {
		for _, f := range v {
			h.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(f)))
		}
	}
	rng := rand.New(rand.NewPCG(61, 62))
	for _, s := range convShapes {
		if s.plain() {
			continue
		}
		x, y := randSlice(rng, s.InSize()), randSlice(rng, s.K()*s.P())
		cols, dx := make([]float32, s.K()*s.P()), make([]float32, s.InSize())
		im2col(ks, cols, x, s, permTable(s))
		col2im(ks, dx, y, s)
		put(cols...)
		put(dx...)
	}
	for _, s := range groupNormShapes {
		x, gamma, beta, dy := randSlice(rng, s.In()), randSlice(rng, s.C), randSlice(rng, s.C), randSlice(rng, s.In())
		y, stats := make([]float32, s.In()), make([]float64, s.Stats())
		GroupNorm(y, stats, x, gamma, beta, s)
		dx, dg, db := make([]float32, s.In()), make([]float32, s.C), make([]float32, s.C)
		GroupNormBackward(dx, dg, db, dy, x, gamma, stats, s)
		put(y...)
		put(dx...)
		put(dg...)
		put(db...)
		for _, v := range stats {
			h.Write(binary.LittleEndian.AppendUint64(nil, math.Float64bits(v)))
		}
	}
	for _, s := range windowShapes {
		x, dy := randSlice(rng, s.In()), randSlice(rng, s.Out())
		y, arg, avg := make([]float32, s.Out()), make([]uint8, s.Out()), make([]float32, s.Out())
		dxm, dxa := make([]float32, s.In()), make([]float32, s.In())
		MaxPool(y, arg, x, s)
		MaxPoolBackward(dxm, dy, arg, s)
		AvgPool(avg, x, s)
		AvgPoolBackward(dxa, dy, s)
		put(y...)
		h.Write(arg)
		put(avg...)
		put(dxm...)
		put(dxa...)
		g, dg := make([]float32, s.Planes), make([]float32, s.In())
		GlobalAvgPool(g, x, s.Planes, s.H*s.W)
		GlobalAvgPoolBackward(dg, dy[:s.Planes], s.Planes, s.H*s.W)
		sum := make([]float32, s.In())
		Add(sum, x, dg)
		put(g...)
		put(dg...)
		put(sum...)
	}
	return hex.EncodeToString(h.Sum(nil))
}
