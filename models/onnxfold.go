package models

import (
	"fmt"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// Constant folding: the nodes that compute shapes and constants (PyTorch
// writes x.view(x.size(0), −1) as Shape, Gather, Unsqueeze, Concat and
// Reshape, and F.pad's padding as a dozen nodes on constants) are
// evaluated when the file is imported. The batch size, which Shape of
// the data yields, is carried as batchDim and may be moved around but not
// computed with.

// maxFolded bounds a folded constant's size.
const maxFolded = 1 << 24

// constOf returns the constant an ONNX tensor holds.
func constOf(t *onnx.Tensor) (*iconst, error) {
	c := &iconst{dims: make([]int, len(t.Dims))}
	for i, d := range t.Dims {
		c.dims[i] = int(d)
	}
	switch t.DataType {
	case onnx.Float, onnx.Double:
		c.float, c.f = true, t.Floats
	case onnx.Int64, onnx.Int32, onnx.Bool:
		c.i = t.Int64s
	default:
		return nil, fmt.Errorf("data type %v is not supported", t.DataType)
	}
	if c.size() != max(len(c.f), len(c.i)) {
		return nil, fmt.Errorf("%d values for shape %v", max(len(c.f), len(c.i)), t.Dims)
	}
	return c, nil
}

// reshaped returns c with new dimensions (of the same size).
func (c *iconst) reshaped(dims []int) *iconst {
	r := *c
	r.dims, r.name = dims, ""
	if r.origin == "" {
		r.origin = c.name
	}
	return &r
}

// fold records the constant c (or err) as n's output.
func (im *importer) fold(n *onnx.Node, c *iconst, err error) error {
	if err != nil {
		return err
	}
	if c.size() > maxFolded {
		return fmt.Errorf("computes a constant of %d values, more than %d", c.size(), maxFolded)
	}
	return im.set(n, ival{kind: ivConst, c: c})
}

// remap returns the constant of shape dims whose value at each index is
// c's value at the flat index at(index).
func remap(c *iconst, dims []int, at func(idx []int) int) *iconst {
	out := &iconst{dims: dims, float: c.float}
	idx := make([]int, len(dims))
	for range product(dims) {
		k := at(idx)
		if c.float {
			out.f = append(out.f, c.f[k])
		} else {
			out.i = append(out.i, c.i[k])
		}
		for a := len(idx) - 1; a >= 0; a-- {
			if idx[a]++; idx[a] < dims[a] {
				break
			}
			idx[a] = 0
		}
	}
	if out.f == nil && out.i == nil {
		out.f, out.i = []float32{}, []int64{}
	}
	return out
}

// flatIndex returns the row-major index of idx in dims.
func flatIndex(idx, dims []int) int {
	k := 0
	for a, d := range dims {
		k = k*d + idx[a]
	}
	return k
}

// axis normalises a possibly negative axis of a tensor of rank rank.
func axis(a int64, rank int) (int, error) {
	if a < 0 {
		a += int64(rank)
	}
	if a < 0 || a >= int64(rank) {
		return 0, fmt.Errorf("axis %d of a tensor of rank %d", a, rank)
	}
	return int(a), nil
}

// transpose2 returns the transpose of a matrix.
func transpose2(c *iconst) *iconst {
	t := remap(c, []int{c.dims[1], c.dims[0]}, func(idx []int) int { return idx[1]*c.dims[1] + idx[0] })
	t.name = c.name
	return t
}

// elementwise applies fi or ff to a and b of the same shape, or one of
// them a single value.
func elementwise(a, b *iconst, fi func(x, y int64) int64, ff func(x, y float32) float32) (*iconst, error) {
	if a.float != b.float {
		return nil, fmt.Errorf("combines a float and an integer constant")
	}
	if a.size() == 1 && b.size() != 1 {
		a, b = b, a
	}
	if !slices.Equal(a.dims, b.dims) && b.size() != 1 {
		return nil, fmt.Errorf("combines constants of shapes %v and %v", a.dims, b.dims)
	}
	out := &iconst{dims: a.dims, float: a.float}
	for k := range a.size() {
		if a.float {
			out.f = append(out.f, ff(a.f[k], b.f[k%len(b.f)]))
			continue
		}
		x, y := a.i[k], b.i[k%len(b.i)]
		if batchFactor(x) > 0 || batchFactor(y) > 0 {
			return nil, fmt.Errorf("computes with the batch size: a dynamic shape that cannot be resolved when the file is imported")
		}
		out.i = append(out.i, fi(x, y))
	}
	return out, nil
}

// batchScaled folds the Mul (or, where divide, the Div) of integer
// constants a and b of one shape or one value, where one of a pair is a
// multiple of the batch size (batchMul): its product by a positive
// constant, or its quotient by one that divides it, stays a multiple. It
// reports false where there is none, or another pair.
func batchScaled(a, b *iconst, divide bool) (*iconst, bool) {
	if a.float || b.float || !slices.ContainsFunc(slices.Concat(a.i, b.i), func(v int64) bool { return batchFactor(v) > 0 }) {
		return nil, false
	}
	if divide && a.size() == 1 && b.size() != 1 || !slices.Equal(a.dims, b.dims) && a.size() != 1 && b.size() != 1 {
		return nil, false
	}
	if a.size() == 1 && b.size() != 1 {
		a, b = b, a
	}
	out := &iconst{dims: a.dims}
	for k, x := range a.i {
		y := b.i[k%len(b.i)]
		kx, ky := batchFactor(x), batchFactor(y)
		if !divide && kx == 0 && ky > 0 {
			x, y, kx, ky = y, x, ky, kx
		}
		switch {
		case kx == 0 && ky == 0 && !divide:
			out.i = append(out.i, x*y)
		case kx == 0 && ky == 0 && y != 0:
			out.i = append(out.i, x/y)
		case kx > 0 && ky == 0 && y > 0 && !divide && kx*y < maxBatchMul:
			out.i = append(out.i, batchMul(kx*y))
		case kx > 0 && ky == 0 && y > 0 && divide && kx%y == 0:
			out.i = append(out.i, batchMul(kx/y))
		default:
			return nil, false
		}
	}
	return out, true
}

func (im *importer) constant(n *onnx.Node) error {
	if len(n.Attrs) != 1 {
		return fmt.Errorf("%d attributes, want one value", len(n.Attrs))
	}
	a := n.Attrs[0]
	switch {
	case a.Name == "value" && a.T != nil:
		c, err := constOf(a.T)
		return im.fold(n, c, err)
	case a.Name == "value_float":
		return im.fold(n, &iconst{float: true, f: []float32{a.F}}, nil)
	case a.Name == "value_floats":
		return im.fold(n, &iconst{dims: []int{len(a.Floats)}, float: true, f: a.Floats}, nil)
	case a.Name == "value_int":
		return im.fold(n, &iconst{i: []int64{a.I}}, nil)
	case a.Name == "value_ints":
		return im.fold(n, &iconst{dims: []int{len(a.Ints)}, i: a.Ints}, nil)
	}
	return fmt.Errorf("a constant given as %s is not supported", a.Name)
}

func (im *importer) constantOfShape(n *onnx.Node) error {
	shape, err := im.ints(n, 0, "shape", false)
	if err != nil {
		return err
	}
	dims, size := make([]int, len(shape)), int64(1)
	for i, d := range shape {
		if d < 0 || d > maxFolded || size*max(d, 1) > maxFolded {
			return fmt.Errorf("shape %s: want a fixed shape of at most %d values", shapeText(shape), maxFolded)
		}
		dims[i], size = int(d), size*max(d, 1)
	}
	fill := &iconst{float: true, f: []float32{0}}
	if a := attr(n, "value"); a != nil && a.T != nil {
		if fill, err = constOf(a.T); err != nil || fill.size() != 1 {
			return fmt.Errorf("value: want one value (%v)", err)
		}
	}
	return im.fold(n, remap(fill, dims, func([]int) int { return 0 }), nil)
}

func (im *importer) shape(n *onnx.Node) error {
	v, ok, err := im.arg(n, 0)
	if err == nil && !ok {
		err = fmt.Errorf("input 0 is missing")
	}
	if err != nil {
		return err
	}
	var s []int64
	switch v.kind {
	case ivConst:
		for _, d := range v.c.dims {
			s = append(s, int64(d))
		}
	case ivAct:
		s = []int64{batchDim}
		for _, d := range v.view {
			s = append(s, int64(d))
		}
	default:
		return fmt.Errorf("the shape of %s", pendNames[v.p.kind])
	}
	return im.fold(n, shapeSlice(n, s), nil)
}

// shapeSlice applies Shape n's start and end to the shape s.
func shapeSlice(n *onnx.Node, s []int64) *iconst {
	start, end := int(attrInt(n, "start", 0)), int(attrInt(n, "end", int64(len(s))))
	start, end = clampIndex(start, len(s)), clampIndex(end, len(s))
	s = s[start:max(start, end)]
	return &iconst{dims: []int{len(s)}, i: s}
}

// clampIndex resolves a Shape start or end against rank.
func clampIndex(i, rank int) int {
	if i < 0 {
		i += rank
	}
	return min(max(i, 0), rank)
}

func (im *importer) gather(n *onnx.Node) error {
	data, err := im.konst(n, 0, "data", false)
	if err != nil {
		return err
	}
	index, err := im.ints(n, 1, "indices", false)
	if err != nil {
		return err
	}
	a, err := axis(attrInt(n, "axis", 0), len(data.dims))
	if err != nil {
		return err
	}
	idims, _ := im.konst(n, 1, "indices", false)
	for _, i := range index {
		if i < int64(-data.dims[a]) || i >= int64(data.dims[a]) {
			return fmt.Errorf("index %d out of range for axis %d of %v", i, a, data.dims)
		}
	}
	dims := slices.Concat(data.dims[:a], idims.dims, data.dims[a+1:])
	r := len(idims.dims)
	return im.fold(n, remap(data, dims, func(idx []int) int {
		src := slices.Concat(idx[:a], []int{0}, idx[a+r:])
		i := index[flatIndex(idx[a:a+r], idims.dims)]
		if i < 0 {
			i += int64(data.dims[a])
		}
		src[a] = int(i)
		return flatIndex(src, data.dims)
	}), nil)
}

func (im *importer) unsqueeze(n *onnx.Node) error {
	v, _, err := im.arg(n, 0)
	if err != nil {
		return err
	}
	if v.kind != ivConst {
		return im.unsqueezeData(n)
	}
	axes, _, err := im.intsAttrOrInput(n, "axes", 1)
	if err != nil {
		return err
	}
	rank := len(v.c.dims) + len(axes)
	ones := map[int]bool{}
	for _, a := range axes {
		k, err := axis(a, rank)
		if err != nil {
			return err
		}
		ones[k] = true
	}
	var dims []int
	for k, rest := 0, v.c.dims; k < rank; k++ {
		if ones[k] {
			dims = append(dims, 1)
		} else if len(rest) > 0 {
			dims, rest = append(dims, rest[0]), rest[1:]
		}
	}
	if len(dims) != rank {
		return fmt.Errorf("axes %v repeat an axis", axes)
	}
	return im.fold(n, v.c.reshaped(dims), nil)
}

func (im *importer) concat(n *onnx.Node) error {
	for _, in := range n.Inputs {
		if v, ok := im.vals[in]; ok && v.kind != ivConst {
			return im.concatData(n)
		}
	}
	var parts []*iconst
	for k := range n.Inputs {
		c, err := im.konst(n, k, fmt.Sprintf("input %d", k), false)
		if err != nil {
			return err
		}
		if len(parts) > 0 && (c.float != parts[0].float || len(c.dims) != len(parts[0].dims)) {
			return fmt.Errorf("concatenates constants of other types or ranks")
		}
		parts = append(parts, c)
	}
	if len(parts) == 0 {
		return fmt.Errorf("no inputs")
	}
	a, err := axis(attrInt(n, "axis", 0), len(parts[0].dims))
	if err != nil {
		return err
	}
	out := &iconst{dims: slices.Clone(parts[0].dims), float: parts[0].float}
	out.dims[a] = 0
	for _, p := range parts {
		if !slices.Equal(p.dims[:a], out.dims[:a]) || !slices.Equal(p.dims[a+1:], out.dims[a+1:]) {
			return fmt.Errorf("concatenates constants of shapes that differ off axis %d", a)
		}
		out.dims[a] += p.dims[a]
	}
	outer := product(out.dims[:a])
	for o := range outer {
		for _, p := range parts {
			block := p.size() / max(outer, 1)
			if out.float {
				out.f = append(out.f, p.f[o*block:(o+1)*block]...)
			} else {
				out.i = append(out.i, p.i[o*block:(o+1)*block]...)
			}
		}
	}
	return im.fold(n, out, nil)
}
