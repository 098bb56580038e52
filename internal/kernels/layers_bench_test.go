package kernels

import (
	"math/rand/v2"
	"testing"
)

// resnetGN is the GroupNorm of resnet20-gn's first stage at batch 32: 32
// images of 16 channels of 32×32, two groups.
var resnetGN = GroupNormShape{N: 32, C: 16, HW: 1024, Groups: 2}

// BenchmarkLayers times the elementwise and GroupNorm kernels of a
// resnet20-gn first-stage layer at batch 32 (524,288 values), per kernel
// set, in GB/s of the values of GroupNorm's input and output (or of its
// input, gradient and input gradient), and GroupNorm followed by ReLU as
// two passes against GroupNormReLU.
func BenchmarkLayers(b *testing.B) {
	s := resnetGN
	n := s.In()
	rng := rand.New(rand.NewPCG(81, 82))
	x, dy, gamma, beta := randSlice(rng, n), randSlice(rng, n), randSlice(rng, s.C), randSlice(rng, s.C)
	y, dx, dz, stats := make([]float32, n), make([]float32, n), make([]float32, n), make([]float64, s.Stats())
	dg, db := make([]float32, s.C), make([]float32, s.C)
	run := func(name string, words int, f func()) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				f()
			}
			b.ReportMetric(float64(4*words*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
	// The GroupNorm kernels as they were (groupnorm_ref_test.go).
	run("GroupNorm/ref", 2, func() { groupNormRef(y, stats, x, gamma, beta, s) })
	run("GroupNormBackward/ref", 3, func() { groupNormBackwardRef(dx, dg, db, dy, x, gamma, stats, s) })
	for _, ks := range kernelSets() {
		run := func(name string, words int, f func()) {
			b.Run(name+"/"+ks.name, func(b *testing.B) {
				for b.Loop() {
					f()
				}
				b.ReportMetric(float64(4*words*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
			})
		}
		run("ReLU", 2, func() { reluSet(ks, y, x) })
		run("ReLUBackward", 3, func() { reluBackwardSet(ks, dx, dy, x) })
		run("Add", 3, func() { addSet(ks, y, x, dy) })
		run("GroupNorm", 2, func() { groupNormSet(ks, y, stats, x, gamma, beta, s) })
		run("GroupNormBackward", 3, func() { groupNormBackwardSet(ks, dx, dg, db, dy, x, gamma, stats, s) })
		// GroupNorm then ReLU as two passes, and fused (GroupNormReLU).
		run("GroupNorm+ReLU", 2, func() { groupNormSet(ks, y, stats, x, gamma, beta, s); reluSet(ks, y, y) })
		run("GroupNormReLU", 2, func() { groupNormReLUSet(ks, y, stats, x, gamma, beta, s, true) })
		run("ReLUBackward+GroupNormBackward", 3, func() {
			reluBackwardSet(ks, dz, dy, y)
			groupNormBackwardSet(ks, dx, dg, db, dz, x, gamma, stats, s)
		})
		run("GroupNormReLUBackward", 3, func() {
			groupNormReLUBackwardSet(ks, dx, dg, db, dy, x, gamma, stats, s, reluMask{y: y})
		})
	}
}
