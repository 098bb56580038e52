package models

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The layers of a Net. Each checks the shape it reads, declares its
// parameters in the layout (in call order, which is their order in the
// flat vector) and records itself.

// maxLayerWidth bounds channel counts, kernel sizes and widths so that no
// parameter count overflows; WorkerBytes refuses large networks long
// before it.
const maxLayerWidth = MaxWidth

// Conv2D adds a 2-D convolution of x [C,H,W] configured by c, writing
// [c.Out, (H+2·Pad−Kernel)/Stride+1, (W+2·Pad−Kernel)/Stride+1] (with the
// per-axis fields, [c.Out, (H+2·PH−DH·(KH−1)−1)/SH+1, (W+2·PW−DW·(KW−1)−1)/SW+1],
// with ExtraBottom added to 2·PH and ExtraRight to 2·PW).
// Its filters are name.w [Out,C/G,KH,KW] (G = c.Groups, 1 where 0; KH =
// Kernel, KW = KernelW or Kernel) and, with c.Bias, its bias name.b [Out],
// both of fan-in (C/G)·KH·KW, as torch's; G must divide C and Out.
func (n *Net) Conv2D(name string, x Tensor, c Conv) Tensor {
	if !n.reads(name, x) || !n.named(name) {
		return Tensor{-1}
	}
	s, ok := n.image(name, x)
	if !ok {
		return Tensor{-1}
	}
	if c.Stride == 0 {
		c.Stride = 1
	}
	a, err := c.axes()
	if err != nil {
		return n.fail(name, "%v", err)
	}
	c = a.conv(c)
	groups := max(c.Groups, 1)
	switch {
	case c.Groups < 0 || s[0]%groups != 0 || c.Out%groups != 0:
		return n.fail(name, "%d groups do not divide the %d input channels and %d output channels", c.Groups, s[0], c.Out)
	case c.Out < 1 || c.Out > maxLayerWidth:
		return n.fail(name, "%d output channels, want 1 to %d", c.Out, maxLayerWidth)
	case c.Kernel < 1 || c.Stride < 1 || c.Pad < 0 || c.Kernel > maxLayerWidth || c.Pad > maxLayerWidth:
		return n.fail(name, "kernel %d, stride %d, padding %d: want kernel and stride ≥ 1, padding ≥ 0", c.Kernel, c.Stride, c.Pad)
	case c.Init != InitUniform && c.Init != InitKaimingNormal:
		return n.fail(name, "unknown initialisation %d", c.Init)
	}
	oh, ow := a.out(0, s[1]), a.out(1, s[2])
	if oh < 1 || ow < 1 {
		if a.uniform() {
			return n.fail(name, "a %d×%d kernel with padding %d does not fit the %d×%d input", c.Kernel, c.Kernel, c.Pad, s[1], s[2])
		}
		return n.fail(name, "a %d×%d kernel (%s) does not fit the %d×%d input", a.kh, a.kw, a, s[1], s[2])
	}
	fanIn := s[0] / groups * a.kh * a.kw
	n.addInit(name+".w", fanIn, c.Init, c.Out, s[0]/groups, a.kh, a.kw)
	if c.Bias {
		n.addInit(name+".b", fanIn, InitUniform, c.Out)
	}
	return n.record(netLayer{kind: kindConv, name: name, conv: c}, []int{c.Out, oh, ow}, x)
}

// GroupNorm adds group normalisation of x [C,H,W] (PyTorch's
// nn.GroupNorm(groups, C), ε = 1e-5, affine): each sample's channels are
// split into groups groups normalised to mean 0 and variance 1 together,
// then channel c is scaled by name.g[c] (initially 1) and shifted by
// name.b[c] (initially 0).
func (n *Net) GroupNorm(name string, x Tensor, groups int) Tensor {
	if !n.reads(name, x) || !n.named(name) {
		return Tensor{-1}
	}
	s, ok := n.image(name, x)
	if !ok {
		return Tensor{-1}
	}
	if groups < 1 || s[0]%groups != 0 {
		return n.fail(name, "%d groups do not divide %d channels", groups, s[0])
	}
	n.addInit(name+".g", s[0], initOnes, s[0])
	n.addInit(name+".b", s[0], initZeros, s[0])
	return n.record(netLayer{kind: kindGroupNorm, name: name, groups: groups}, s, x)
}

// ReLU adds max(x, 0), elementwise.
func (n *Net) ReLU(x Tensor) Tensor {
	name := n.autoName("relu")
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	return n.record(netLayer{kind: kindReLU, name: name}, n.shapes[x.id], x)
}

// MaxPool adds max pooling of x [C,H,W] over k×k windows moved by stride,
// without padding (PyTorch's nn.MaxPool2d(k, stride)).
func (n *Net) MaxPool(x Tensor, k, stride int) Tensor {
	return n.pool(kindMaxPool, "maxpool", x, Pooling{Kernel: k, Stride: stride})
}

// MaxPoolPadded adds max pooling of x [C,H,W] over k×k windows moved by
// stride over x padded with pad (at most k/2) on every side, padding that
// is never selected (PyTorch's nn.MaxPool2d(k, stride, pad)).
func (n *Net) MaxPoolPadded(x Tensor, k, stride, pad int) Tensor {
	return n.pool(kindMaxPool, "maxpool", x, Pooling{Kernel: k, Stride: stride, Pad: pad})
}

// AvgPool adds average pooling of x [C,H,W] over k×k windows moved by
// stride, without padding (PyTorch's nn.AvgPool2d(k, stride)).
func (n *Net) AvgPool(x Tensor, k, stride int) Tensor {
	return n.pool(kindAvgPool, "avgpool", x, Pooling{Kernel: k, Stride: stride})
}

// AvgPoolPadded adds average pooling of x [C,H,W] over k×k windows moved
// by stride over x padded with pad zeros (at most k/2) on every side, the
// zeros counted in every window's divisor k² (PyTorch's
// nn.AvgPool2d(k, stride, pad), whose count_include_pad is true).
func (n *Net) AvgPoolPadded(x Tensor, k, stride, pad int) Tensor {
	return n.pool(kindAvgPool, "avgpool", x, Pooling{Kernel: k, Stride: stride, Pad: pad})
}

// AvgPoolExcludePad adds average pooling of x [C,H,W] over k×k windows
// moved by stride over x padded with pad (at most k/2) on every side, each
// window's sum divided by the number of its values inside the map, the
// padding not counted (PyTorch's nn.AvgPool2d(k, stride, pad,
// count_include_pad=False)). Without padding it is AvgPool.
func (n *Net) AvgPoolExcludePad(x Tensor, k, stride, pad int) Tensor {
	return n.pool(kindAvgPool, "avgpool", x, Pooling{Kernel: k, Stride: stride, Pad: pad, ExcludePad: true})
}

// pool adds the pooling p of x; p.ExcludePad counts where p.Pad > 0 only
// (without padding every divisor counts in-map values alone).
func (n *Net) pool(kind layerKind, prefix string, x Tensor, p Pooling) Tensor {
	k, stride, pad := p.Kernel, p.Stride, p.Pad
	name := n.autoName(prefix)
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	s, ok := n.image(name, x)
	if !ok {
		return Tensor{-1}
	}
	if k < 1 || stride < 1 || k > maxLayerWidth || stride > maxLayerWidth || pad < 0 || 2*pad > k {
		return n.fail(name, "window %d, stride %d, padding %d: want window and stride ≥ 1, 0 ≤ padding ≤ window/2", k, stride, pad)
	}
	oh, ow := window(s[1], k, stride, pad), window(s[2], k, stride, pad)
	if oh < 1 || ow < 1 {
		return n.fail(name, "a %d×%d window does not fit the %d×%d input", k, k, s[1], s[2])
	}
	if k > maxPoolWindow {
		return n.fail(name, "a %d×%d window, want at most %d×%d", k, k, maxPoolWindow, maxPoolWindow)
	}
	if p.Ceil {
		oh, ow = ceilWindow(s[1], k, stride, pad), ceilWindow(s[2], k, stride, pad)
	}
	l := netLayer{kind: kind, name: name, k: k, s: stride, pad: pad, exPad: p.ExcludePad && pad > 0, ceil: p.Ceil}
	return n.record(l, []int{s[0], oh, ow}, x)
}

// GlobalAvgPool adds the mean of each channel of x [C,H,W], writing [C]
// (PyTorch's x.mean((2, 3)), or AdaptiveAvgPool2d(1) then flatten).
func (n *Net) GlobalAvgPool(x Tensor) Tensor {
	name := n.autoName("avgpool")
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	s, ok := n.image(name, x)
	if !ok {
		return Tensor{-1}
	}
	return n.record(netLayer{kind: kindGlobalAvgPool, name: name}, []int{s[0]}, x)
}

// GlobalMaxPool adds the maximum of each channel of x [C,H,W], writing [C]
// (PyTorch's AdaptiveMaxPool2d(1) then flatten, or x.amax((2, 3))). Its
// gradient goes to each map's first largest value, as torch's max pools'
// does (x.amax's splits it among equal maxima; they differ only where a
// map's largest value occurs twice).
func (n *Net) GlobalMaxPool(x Tensor) Tensor {
	name := n.autoName("maxpool")
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	s, ok := n.image(name, x)
	if !ok {
		return Tensor{-1}
	}
	return n.record(netLayer{kind: kindGlobalMaxPool, name: name}, []int{s[0]}, x)
}

// Add adds a + b, elementwise: the join of a residual block. Both must
// have the same shape.
func (n *Net) Add(a, b Tensor) Tensor { return n.join(kindAdd, "add", "adds", a, b) }

// Sub adds a − b, elementwise (PoolFormer's token mixer pool(x) − x).
// Both must have the same shape.
func (n *Net) Sub(a, b Tensor) Tensor { return n.join(kindSub, "sub", "subtracts", a, b) }

// Mul adds a ⊙ b, elementwise: a gate of one branch on another (gMLP's
// spatial gating unit u ⊙ v, GLU, SwiGLU). Both must have the same shape;
// the gradient of each is the upstream gradient times the other.
func (n *Net) Mul(a, b Tensor) Tensor { return n.join(kindMul, "mul", "multiplies", a, b) }

// join records the layer kind (Add, Sub or Mul, named prefix#k) of a and b,
// which must have the same shape.
func (n *Net) join(kind layerKind, prefix, verb string, a, b Tensor) Tensor {
	name := n.autoName(prefix)
	if !n.reads(name, a, b) {
		return Tensor{-1}
	}
	sa, sb := n.shapes[a.id], n.shapes[b.id]
	if !slices.Equal(sa, sb) {
		return n.fail(name, "%s tensors of shapes %v and %v", verb, sa, sb)
	}
	return n.record(netLayer{kind: kind, name: name}, sa, a, b)
}

// Flatten adds the reshape of x to one dimension, in row-major (NCHW)
// order. Dense flattens its input itself.
func (n *Net) Flatten(x Tensor) Tensor {
	name := n.autoName("flatten")
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	return n.record(netLayer{kind: kindFlatten, name: name}, []int{product(n.shapes[x.id])}, x)
}

// Dropout adds inverted dropout of x, of any shape, with rate p (PyTorch's
// nn.Dropout(p)): in training each element is dropped (set to 0) with
// probability p and kept, scaled by 1/(1−p), otherwise; in evaluation and
// prediction it is the identity. The masks are part of the minibatch draw:
// each element's is a hash of the batch's draw key (data.Batch.Draw), the
// layer's key (its position among the layers, which its name dropout#K
// records as K−1; an ONNX export and its import keep that name, so an
// imported export draws the original's masks) and the element's index
// within the batch, so every gradient evaluated on one minibatch
// (GT-STORM's two) uses the same masks, whatever the workers, ranks or
// resumes. A network with dropout (p > 0) trains on keyed batches only
// (Stochastic). 0 ≤ p < 1.
func (n *Net) Dropout(x Tensor, p float32) Tensor {
	return n.dropout(x, p, len(n.layers))
}

// dropout adds Dropout keyed by key, named dropout#key+1: the first key
// from key on that names no layer yet.
func (n *Net) dropout(x Tensor, p float32, key int) Tensor {
	for n.hasLayer(dropoutName(key)) {
		key++
	}
	name := dropoutName(key)
	if !n.reads(name, x) {
		return Tensor{-1}
	}
	if !(p >= 0 && p < 1) {
		return n.fail(name, "rate %g, want 0 ≤ p < 1", p)
	}
	return n.record(netLayer{kind: kindDropout, name: name, rate: p, key: key}, n.shapes[x.id], x)
}

// dropoutName names the Dropout layer of key key.
func dropoutName(key int) string { return fmt.Sprintf("dropout#%d", key+1) }

// dropoutKey returns the key a Dropout layer's name dropout#K records, K−1,
// and whether name is of that form (K a positive number written plainly).
func dropoutKey(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "dropout#")
	k, err := strconv.Atoi(s)
	if !ok || err != nil || k < 1 || k > maxSpecLayers || strconv.Itoa(k) != s {
		return 0, false
	}
	return k - 1, true
}

// hasLayer reports whether a layer of n is named name.
func (n *Net) hasLayer(name string) bool {
	for _, l := range n.layers {
		if l.name == name {
			return true
		}
	}
	return false
}

// Dense adds a fully connected layer from x, read flat in row-major order,
// to units outputs: x·name.w + name.b, with weights [in,units] and bias
// [units] drawn as PyTorch's nn.Linear draws them.
func (n *Net) Dense(name string, x Tensor, units int) Tensor {
	return n.dense(name, x, units, true)
}

// DenseNoBias adds a fully connected layer without a bias (PyTorch's
// nn.Linear(in, units, bias=False)): x·name.w, weights [in,units].
func (n *Net) DenseNoBias(name string, x Tensor, units int) Tensor {
	return n.dense(name, x, units, false)
}

func (n *Net) dense(name string, x Tensor, units int, bias bool) Tensor {
	if !n.reads(name, x) || !n.named(name) {
		return Tensor{-1}
	}
	if units < 1 || units > maxLayerWidth {
		return n.fail(name, "%d units, want 1 to %d", units, maxLayerWidth)
	}
	in := product(n.shapes[x.id])
	n.addInit(name+".w", in, InitUniform, in, units)
	if bias {
		n.addInit(name+".b", in, InitUniform, units)
	}
	return n.record(netLayer{kind: kindDense, name: name, units: units, noBias: !bias}, []int{units}, x)
}

// Model finishes the description with out as the logits and returns the
// network as a Model trained with softmax cross-entropy. out must be a
// vector of one logit per class.
func (n *Net) Model(out Tensor) (Model, error) {
	if !n.reads("output", out) {
		return nil, n.err
	}
	if s := n.shapes[out.id]; len(s) != 1 || s[0] != n.classes {
		return nil, fmt.Errorf("%s: the output has shape %v, want the %d class logits", n.name, s, n.classes)
	}
	if out.id != len(n.shapes)-1 {
		return nil, fmt.Errorf("%s: the output is not the last layer's tensor; layers after it would compute nothing", n.name)
	}
	// The model keeps a copy: layers added to n afterwards do not change it.
	frozen := &Net{name: n.name, classes: n.classes, layout: n.layout,
		layers: slices.Clone(n.layers), shapes: slices.Clone(n.shapes), uses: slices.Clone(n.uses)}
	frozen.layout.params = slices.Clone(n.params)
	return &classifier{layout: frozen.layout, name: n.name, shape: n.shapes[0], classes: n.classes, net: frozen}, nil
}

func product(s []int) int {
	p := 1
	for _, v := range s {
		p *= v
	}
	return p
}
