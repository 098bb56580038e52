package models

import (
	"fmt"
	"strconv"
	"strings"
)

// NewResNetGN returns the CIFAR ResNet of the given depth (6n + 2: 20, 32,
// 56, …; He et al. 2016 §4.2) with GroupNorm in place of BatchNorm, as
// Hsieh et al. 2020 and Lin et al. 2021 train it decentralized (SPEC §12),
// on images of shape [C,H,W] with classes classes:
//
//	conv 3×3 C→16 → GN → ReLU;
//	three stages of n basic blocks of 16, 32 and 64 channels, the first
//	block of stages 2 and 3 of stride 2;
//	global average pooling; fully connected 64 → classes.
//
// A basic block is conv 3×3 → GN → ReLU → conv 3×3 → GN, plus the
// shortcut (the identity, or conv 1×1 of stride 2 → GN where the shape
// changes), then ReLU. Convolutions have no bias and are drawn
// Kaiming-normal; GroupNorm has 2 groups. resnet20-gn has 272,474
// parameters on CIFAR-10.
func NewResNetGN(depth int, shape []int, classes int) (Model, error) {
	name := fmt.Sprintf("resnet%d-gn", depth)
	if depth < 8 || (depth-2)%6 != 0 {
		return nil, fmt.Errorf("%s: depth %d, want 6n + 2 with n ≥ 1 (20, 32, 56, …)", name, depth)
	}
	n := NewNet(name, shape, classes)
	h := n.ReLU(convGN(n, "conv1", "gn1", n.Input(), 16, 1, 3))
	for stage, width := range []int{16, 32, 64} {
		for b := range (depth - 2) / 6 {
			stride := 1
			if stage > 0 && b == 0 {
				stride = 2
			}
			h = basicBlock(n, fmt.Sprintf("layer%d.%d", stage+1, b), h, width, stride)
		}
	}
	return n.Model(n.Dense("fc", n.GlobalAvgPool(h), classes))
}

// basicBlock adds one residual block of the given width and stride to x.
func basicBlock(n *Net, name string, x Tensor, width, stride int) Tensor {
	h := n.ReLU(convGN(n, name+".conv1", name+".gn1", x, width, stride, 3))
	h = convGN(n, name+".conv2", name+".gn2", h, width, 1, 3)
	shortcut := x
	if s := n.Shape(x); stride != 1 || (s != nil && s[0] != width) {
		shortcut = convGN(n, name+".shortcut.conv", name+".shortcut.gn", x, width, stride, 1)
	}
	return n.ReLU(n.Add(h, shortcut))
}

// convGN adds a k×k convolution without bias (padding (k−1)/2) and its
// GroupNorm of 2 groups.
func convGN(n *Net, conv, gn string, x Tensor, out, stride, k int) Tensor {
	h := n.Conv2D(conv, x, Conv{Out: out, Kernel: k, Stride: stride, Pad: (k - 1) / 2, Init: InitKaimingNormal})
	return n.GroupNorm(gn, h, 2)
}

// resNetDepth returns the depth of a ResNet-GN name "resnetD-gn", and
// whether name has that form.
func resNetDepth(name string) (int, bool, error) {
	rest, ok := strings.CutPrefix(name, "resnet")
	if !ok {
		return 0, false, nil
	}
	digits, ok := strings.CutSuffix(rest, "-gn")
	if !ok {
		return 0, false, nil
	}
	d, err := strconv.Atoi(digits)
	if err != nil || d < 1 || d > 10000 {
		return 0, true, fmt.Errorf("%s: depth %q, want 6n + 2 (20, 32, 56, …)", name, digits)
	}
	return d, true, nil
}
