package models

import "github.com/gtstorm/gtstorm/internal/onnx"

// patchPerm is the Transpose of [N,C,h,p1,w,p2] that orders a patch's
// features as order does: to [N,h,w,p1,p2,C] (pixel-major) or
// [N,h,w,C,p1,p2] (channel-major).
func patchPerm(order PatchOrder) []int64 {
	if order == PatchesChannelMajor {
		return []int64{0, 2, 4, 1, 3, 5}
	}
	return []int64{0, 2, 4, 3, 5, 1}
}

// addPatches appends Patches as torch writes lucidrains' Rearrange (or
// x.reshape(N, C, h, p1, w, p2).permute(…).reshape(N, h·w, F)): Reshape
// to [0,C,h,p1,w,p2], Transpose by patchPerm, Reshape to the tokens
// [0,T,F], and back to the Net's token image [N,F,T,1].
func (g *onnxGraph) addPatches(l netLayer, x, out string, in, shape []int) {
	t := tokenNodes{g, l}
	ph, pw := l.patch[0], l.patch[1]
	split := t.op("split", "Reshape", []string{x, t.ints("splitshape", 0, in[0], in[1]/ph, ph, in[2]/pw, pw)})
	perm := t.op("perm", "Transpose", []string{split}, onnx.IntsAttr("perm", patchPerm(l.order)...))
	s := t.op("seq", "Reshape", []string{perm, t.ints("seqshape", 0, shape[1], shape[0])})
	t.image(s, out, shape)
	g.describe("%s: Patches %d×%d, features %v (Reshape, Transpose, Reshape, Transpose, Reshape) → [N,%s]", l.name, ph, pw, l.order, joinInts(shape))
}
