package models

import (
	"fmt"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// Slice, Transpose and Cast on constants (see onnxfold.go); Slice of the
// data and the Transpose of a channel shuffle are onnxsplit.go's.

func (im *importer) slice(n *onnx.Node) error {
	if v, ok := im.vals[firstInput(n)]; ok && v.kind != ivConst {
		return im.sliceData(n)
	}
	if err := im.onConstants(n, "cropping or slicing a tensor"); err != nil {
		return err
	}
	data, err := im.konst(n, 0, "data", false)
	if err != nil {
		return err
	}
	starts, ends, axes, steps, hasAxes, err := im.sliceArgs(n)
	if err != nil {
		return err
	}
	if !hasAxes {
		axes = make([]int64, len(starts))
		for i := range axes {
			axes[i] = int64(i)
		}
	}
	if len(ends) != len(starts) || len(axes) != len(starts) || (steps != nil && len(steps) != len(starts)) {
		return fmt.Errorf("starts %v, ends %v, axes %v and steps %v differ in length", starts, ends, axes, steps)
	}
	first, step := make([]int, len(data.dims)), make([]int, len(data.dims))
	dims := slices.Clone(data.dims)
	for i := range step {
		step[i] = 1
	}
	for i, a64 := range axes {
		a, err := axis(a64, len(data.dims))
		if err != nil {
			return err
		}
		st := int64(1)
		if steps != nil {
			st = steps[i]
		}
		if st == 0 || batchFactor(starts[i]) > 0 || batchFactor(ends[i]) > 0 {
			return fmt.Errorf("step 0 or a bound computed from the batch size")
		}
		first[a], dims[a] = sliceRange(starts[i], ends[i], st, data.dims[a])
		step[a] = int(st)
	}
	return im.fold(n, remap(data, dims, func(idx []int) int {
		src := make([]int, len(idx))
		for a, i := range idx {
			src[a] = first[a] + i*step[a]
		}
		return flatIndex(src, data.dims)
	}), nil)
}

// sliceRange returns the first index and the count of the ONNX slice
// start:end:step of an axis of size d.
func sliceRange(start, end, step int64, d int) (int, int) {
	n := int64(d)
	if start < 0 {
		start += n
	}
	if end < 0 {
		end += n
	}
	if step > 0 {
		start, end = min(max(start, 0), n), min(max(end, 0), n)
		return int(start), int(max(0, (end-start+step-1)/step))
	}
	start, end = min(max(start, 0), n-1), min(max(end, -1), n-1)
	return int(start), int(max(0, (start-end-step-1)/(-step)))
}

func (im *importer) transpose(n *onnx.Node) error {
	if v, ok := im.vals[firstInput(n)]; ok && v.kind == ivPending && v.p.kind == pShuffle {
		return im.shuffleTranspose(n, v)
	}
	if done, err := im.patchTranspose(n); done {
		return err
	}
	if err := im.onConstants(n, "permute"); err != nil {
		return err
	}
	data, err := im.konst(n, 0, "data", false)
	if err != nil {
		return err
	}
	rank := len(data.dims)
	perm := make([]int, rank)
	for i := range perm {
		perm[i] = rank - 1 - i
	}
	if a := attr(n, "perm"); a != nil {
		if len(a.Ints) != rank {
			return fmt.Errorf("perm %v of a tensor of rank %d", a.Ints, rank)
		}
		for i, p := range a.Ints {
			if p < 0 || p >= int64(rank) || slices.Contains(perm[:i], int(p)) {
				return fmt.Errorf("perm %v is not a permutation", a.Ints)
			}
			perm[i] = int(p)
		}
	}
	dims := make([]int, rank)
	for i, p := range perm {
		dims[i] = data.dims[p]
	}
	return im.fold(n, remap(data, dims, func(idx []int) int {
		src := make([]int, rank)
		for i, p := range perm {
			src[p] = idx[i]
		}
		return flatIndex(src, data.dims)
	}), nil)
}

// ONNX element types Cast converts to: the floats, and the integers and
// booleans.
var (
	castFloats = []int64{1, 10, 11, 16}
	castInts   = []int64{2, 3, 4, 5, 6, 7, 9, 12, 13}
)

func (im *importer) cast(n *onnx.Node) error {
	to := attrInt(n, "to", 0)
	v, _, err := im.arg(n, 0)
	if err != nil {
		return err
	}
	toFloat := slices.Contains(castFloats, to)
	if !toFloat && !slices.Contains(castInts, to) {
		return fmt.Errorf("cast to element type %d is not supported", to)
	}
	if v.kind != ivConst {
		if toFloat {
			return im.identity(n) // the data is float already
		}
		return fmt.Errorf("casts the network's data to integers")
	}
	c := v.c
	out := &iconst{dims: c.dims, float: toFloat}
	switch {
	case c.float == toFloat:
		out.f, out.i = c.f, c.i
	case toFloat:
		for _, x := range c.i {
			if batchFactor(x) > 0 {
				return fmt.Errorf("casts the batch size: a dynamic shape that cannot be resolved when the file is imported")
			}
			out.f = append(out.f, float32(x))
		}
	default:
		for _, x := range c.f {
			out.i = append(out.i, int64(x))
		}
	}
	return im.fold(n, out, nil)
}

// sliceArgs reads a Slice's starts, ends, axes and steps, as attributes
// (opset 1–9) or constant inputs (opset 10 on); steps is nil and hasAxes
// false where the node omits them.
func (im *importer) sliceArgs(n *onnx.Node) (starts, ends, axes, steps []int64, hasAxes bool, err error) {
	if starts, _, err = im.intsAttrOrInput(n, "starts", 1); err != nil {
		return
	}
	if ends, _, err = im.intsAttrOrInput(n, "ends", 2); err != nil {
		return
	}
	if axes, hasAxes, err = im.intsAttrOrInput(n, "axes", 3); err != nil {
		return
	}
	steps, err = im.ints(n, 4, "steps", true)
	return
}
