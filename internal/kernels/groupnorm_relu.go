package kernels

import "fmt"

// GroupNormReLU sets y = max(GroupNorm(x), 0): GroupNorm followed by ReLU,
// with the bits of the two kernels run one after the other, but each image
// group's values clipped right after they are normalised, while they are
// in cache. stats receives what GroupNorm records. It panics if s is
// invalid or a slice is short.
func GroupNormReLU(y []float32, stats []float64, x, gamma, beta []float32, s GroupNormShape) {
	groupNormReLUSet(use(), y, stats, x, gamma, beta, s, true)
}

// GroupNormReLUScratch is the number of floats of scratch
// GroupNormReLUBackward needs: one image group, (C/Groups)·HW values, or
// the whole batch for layers wider than the backward pass keeps on the
// stack.
func GroupNormReLUScratch(s GroupNormShape) int {
	if s.C > gnMaxC {
		return s.In()
	}
	return s.C / max(s.Groups, 1) * s.HW
}

// GroupNormReLUBackward is the adjoint of GroupNormReLU, whose output is y:
// GroupNormBackward of dy·[y > 0], with the bits of ReLUBackward followed
// by GroupNormBackward, each image group's masked gradient formed just
// before its sums read it (in dx, which the input gradient then
// overwrites, or in scratch when dx is nil: GroupNormReLUScratch(s)
// floats). It panics if s is invalid or a slice is short.
func GroupNormReLUBackward(dx, dgamma, dbeta, dy, y, x, gamma []float32, stats []float64, s GroupNormShape, scratch []float32) {
	if len(y) < s.In() {
		panic(fmt.Sprintf("kernels: GroupNormReLUBackward: y has %d values, want ≥ %d", len(y), s.In()))
	}
	if dx == nil && len(scratch) < GroupNormReLUScratch(s) {
		panic(fmt.Sprintf("kernels: GroupNormReLUBackward: scratch has %d values, want ≥ %d", len(scratch), GroupNormReLUScratch(s)))
	}
	groupNormReLUBackwardSet(use(), dx, dgamma, dbeta, dy, x, gamma, stats, s, reluMask{y: y, scratch: scratch})
}

// reluMask is the ReLU that GroupNormReLU applied after GroupNorm, for the
// backward pass: its output y (nil: no ReLU) and scratch for the masked
// gradient where there is no dx to hold it.
type reluMask struct {
	y, scratch []float32
}

// gradient returns the gradient through the ReLU of the values [off,
// off+n) of dy: dy itself without a ReLU, else dy·[y > 0] written into buf
// (dx's values there, or scratch's first n where dx is nil).
func (r reluMask) gradient(ks *kernelSet, dx, dy []float32, off, n int) []float32 {
	g := dy[off:][:n]
	if r.y == nil {
		return g
	}
	var buf []float32
	if dx != nil {
		buf = dx[off:][:n]
	} else {
		buf = r.scratch[:n]
	}
	reluBackwardSet(ks, buf, g, r.y[off:][:n])
	return buf
}
