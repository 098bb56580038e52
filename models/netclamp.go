package models

import (
	"fmt"
	"math"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// Clamp adds min(max(x, lo), hi), elementwise on x of any shape (torch's
// nn.Hardtanh(lo, hi), F.hardtanh, torch.clamp(x, lo, hi)); nn.ReLU6 is
// Clamp(x, 0, 6). lo < hi, both finite: a clip bounded on one side only
// takes ±math.MaxFloat32 for the other. Its gradient passes where
// lo < x < hi, the bounds excluded, as torch's hardtanh_backward (which
// nn.ReLU6, nn.Hardtanh and F.hardtanh use; torch.clamp's backward passes
// it at the bounds too, a difference only where x is exactly a bound).
func (n *Net) Clamp(x Tensor, lo, hi float32) Tensor {
	name := n.autoName("clamp")
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	if !(lo < hi) || math.IsInf(float64(lo), 0) || math.IsInf(float64(hi), 0) {
		return n.fail(name, "bounds [%g, %g], want finite lo < hi", lo, hi)
	}
	return n.record(netLayer{kind: kindClamp, name: name, lo: lo, hi: hi}, n.shapes[x.id], x)
}

// addClip appends a Clamp layer as opset 13's Clip, its bounds scalar
// initialisers name.min and name.max (its inputs 1 and 2).
func (g *onnxGraph) addClip(l netLayer, x, out string) {
	g.inits = append(g.inits, onnx.FloatTensor(l.name+".min", []float32{l.lo}), onnx.FloatTensor(l.name+".max", []float32{l.hi}))
	g.node(l.name, "Clip", []string{x, l.name + ".min", l.name + ".max"}, out)
	g.describe("%s: Clip [%g, %g]", l.name, l.lo, l.hi)
}

// clip imports Clip as Net.Clamp. Its bounds are the node's min and max
// attributes (opset 6) or its inputs 1 and 2 (opset 11 on), constants of
// one value; a bound it lacks, or an infinite one, is ∓math.MaxFloat32,
// so that a one-sided clip (torch.clamp(x, min=0)) is Clamp with the
// other bound at the largest float.
func (im *importer) clip(n *onnx.Node) error {
	if v, ok := im.vals[firstInput(n)]; ok && v.kind == ivPending && v.p.kind == pL2Norm {
		return im.l2Clip(n, v.p)
	}
	lo, hi, err := im.clipBounds(n)
	if err != nil {
		return err
	}
	return im.elementwise(n, func(x Tensor) Tensor { return im.net.Clamp(x, lo, hi) })
}

// clipBounds returns the Clip n's min and max, from its attributes (opset
// 6) or its constant inputs, within ±math.MaxFloat32: an absent bound is
// its end of that range.
func (im *importer) clipBounds(n *onnx.Node) (lo, hi float32, err error) {
	lo, hi = -math.MaxFloat32, math.MaxFloat32
	for k, b := range []*float32{&lo, &hi} {
		what := []string{"min", "max"}[k]
		if a := attr(n, what); a != nil {
			*b = a.F
			continue
		}
		v, ok, err := im.arg(n, k+1)
		switch {
		case err != nil:
			return 0, 0, err
		case !ok:
			continue
		case v.kind != ivConst:
			return 0, 0, fmt.Errorf("Clip's %s (input %d, %q) is computed from the data; the import takes constant bounds only", what, k+1, n.Inputs[k+1])
		case !v.c.float || v.c.size() != 1:
			return 0, 0, fmt.Errorf("Clip's %s (input %d, %q) has shape %v, want one float value", what, k+1, n.Inputs[k+1], v.c.dims)
		}
		*b = v.c.f[0]
	}
	return max(lo, -math.MaxFloat32), min(hi, math.MaxFloat32), nil
}
