package models

// PatchOrder is the order of the features of a token Patches makes.
type PatchOrder int

const (
	// PatchesPixelMajor orders a patch's features pixel by pixel, the
	// channels of each pixel together: einops' (p1 p2 c), lucidrains'
	// ViT's.
	PatchesPixelMajor PatchOrder = iota
	// PatchesChannelMajor orders them channel by channel, each channel's
	// pixels row-major: einops' (c p1 p2).
	PatchesChannelMajor
)

// String names the order as einops writes a token's features.
func (o PatchOrder) String() string {
	if o == PatchesChannelMajor {
		return "(c p1 p2)"
	}
	return "(p1 p2 c)"
}

// Patches cuts x [C,H,W] into patches height×width, each a token
// (lucidrains' ViT's Rearrange('b c (h p1) (w p2) -> b (h w) (p1 p2 c)')):
// it writes the tokens [F,T,1] of T = (H/height)·(W/width) patches,
// row-major, of F = height·width·C features in the given order: feature
// (i1·width+i2)·C+c of a patch, pixel-major, or c·height·width+i1·width+i2,
// channel-major, holds its pixel (i1,i2) of channel c. The layer has no
// parameters.
func (n *Net) Patches(x Tensor, height, width int, order PatchOrder) Tensor {
	name := n.autoName("patches")
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	s, ok := n.image(name, x)
	if !ok {
		return Tensor{-1}
	}
	switch {
	case height < 1 || width < 1 || s[1]%height != 0 || s[2]%width != 0:
		return n.fail(name, "patches %d×%d do not tile the %d×%d image", height, width, s[1], s[2])
	case order != PatchesPixelMajor && order != PatchesChannelMajor:
		return n.fail(name, "patch order %d, want PatchesPixelMajor or PatchesChannelMajor", int(order))
	}
	l := netLayer{kind: kindPatches, name: name, patch: [2]int{height, width}, order: order}
	return n.record(l, []int{height * width * s[0], (s[1] / height) * (s[2] / width), 1}, x)
}
