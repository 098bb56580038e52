package models

import (
	"fmt"
	"slices"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// The import of a vision transformer's patchify as torch writes
// lucidrains' Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)') (or the
// same by reshape and permute): Reshape of an image [N,C,H,W] to
// [N,C,h,p1,w,p2], Transpose perm [0,2,4,3,5,1] (einops' (p1 p2 c)) or
// [0,2,4,1,3,5] ((c p1 p2)), Reshape to the tokens [N,h·w,F], each read
// only by the next: Net.Patches, whose token image the graph holds as the
// channels-last tokens [T,F].

// patchCut is what a patchify's pending values have read: the patches'
// height and width and, once transposed, their features' order.
type patchCut struct {
	ph, pw int
	order  PatchOrder
}

// patchReshape imports the Reshape n where it starts a patchify (of an
// image to [N,C,h,p1,w,p2]) or ends one, reporting false for other
// Reshapes.
func (im *importer) patchReshape(n *onnx.Node) (bool, error) {
	v, ok := im.vals[firstInput(n)]
	switch {
	case !ok:
		return false, nil
	case v.kind == ivPending && v.p.kind == pPatchesT:
		return true, im.patchEnd(n, v.p)
	case v.kind == ivPending && v.p.kind == pPatches:
		return true, fmt.Errorf("reshapes %s again; the import takes there Transpose perm %v or %v, read only by the Reshape to the tokens",
			pendNames[pPatches], patchPerm(PatchesPixelMajor), patchPerm(PatchesChannelMajor))
	case v.kind != ivAct || v.last || len(v.view) != 3 || !slices.Equal(im.net.Shape(v.t), v.view):
		return false, nil
	}
	to, err := im.reshapeTarget(n, v.view)
	if err != nil || len(to) != 5 {
		return false, nil
	}
	if c, h, w := v.view[0], v.view[1], v.view[2]; to[0] != c || to[1]*to[2] != h || to[3]*to[4] != w {
		return true, fmt.Errorf("reshapes the image [N,%s] to [N,%s]; the import takes a Reshape of an image to 6 dimensions only as a patchify's, to [N,%d,H/p1,p1,W/p2,p2]",
			joinInts(v.view), joinInts(to), c)
	}
	return true, im.set(n, ival{kind: ivPending, p: &pending{kind: pPatches, x: v, patch: patchCut{ph: to[2], pw: to[4]}}})
}

// patchTranspose imports the Transpose n where it reads a patchify's
// first Reshape (pPatches), reporting false for other Transposes.
func (im *importer) patchTranspose(n *onnx.Node) (bool, error) {
	v, ok := im.vals[firstInput(n)]
	if !ok || v.kind != ivPending || v.p.kind != pPatches {
		return false, nil
	}
	p := *v.p
	switch perm := permOf(n); {
	case slices.Equal(perm, patchPerm(PatchesPixelMajor)):
		p.patch.order = PatchesPixelMajor
	case slices.Equal(perm, patchPerm(PatchesChannelMajor)):
		p.patch.order = PatchesChannelMajor
	default:
		return true, fmt.Errorf("transposes %s with perm %v; the import takes there perm %v (einops' (p1 p2 c)) or %v ((c p1 p2))",
			pendNames[pPatches], perm, patchPerm(PatchesPixelMajor), patchPerm(PatchesChannelMajor))
	}
	p.kind = pPatchesT
	return true, im.set(n, ival{kind: ivPending, p: &p})
}

// patchEnd finishes a patchify (pPatchesT) at its Reshape to the tokens
// [N,T,F] as Net.Patches, held as channels-last tokens.
func (im *importer) patchEnd(n *onnx.Node, p *pending) error {
	c, h, w := p.x.view[0], p.x.view[1], p.x.view[2]
	ph, pw := p.patch.ph, p.patch.pw
	view := []int{h / ph, w / pw, ph, pw, c} // the transposed patches, per sample
	if p.patch.order == PatchesChannelMajor {
		view = []int{h / ph, w / pw, c, ph, pw}
	}
	to, err := im.reshapeTarget(n, view)
	if err != nil {
		return err
	}
	tokens, feats := (h/ph)*(w/pw), ph*pw*c
	if !slices.Equal(to, []int{tokens, feats}) {
		return fmt.Errorf("reshapes %s [N,%s] to [N,%s]; the import takes there the Reshape to the tokens [N,%d,%d]",
			pendNames[pPatchesT], joinInts(view), joinInts(to), tokens, feats)
	}
	t := im.net.Patches(p.x.t, ph, pw, p.patch.order)
	return im.set(n, ival{kind: ivAct, t: t, view: []int{tokens, feats}, last: true})
}
