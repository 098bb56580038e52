package graphops

import (
	"fmt"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// convLayer is a convolution without bias (stride s, zero padding p) of a
// batch of n images [n,C,H,W] by weights [OC,C,KH,KW], computed image by
// image with im2col and a GEMM (the recipe of kernels.ConvShape): one
// column buffer, refilled in the backward pass rather than kept per image.
// Its bias goes with the pooling that follows (poolLayer) or is a layer of
// its own (ChannelBias).
//
// A grouped convolution (groups G > 1, weights [OC,C/G,KH,KW]) runs the
// same recipe once per group and image: cv is the convolution of one
// group's C/G contiguous channels, and group g reads channels
// [g·C/G, (g+1)·C/G) of each image and rows [g·OC/G, (g+1)·OC/G) of the
// weights, and writes those rows of z. With G = 1 it is the dense
// convolution, with the same calls and bits.
type convLayer struct {
	name      string
	n, oc     int
	groups    int // G ≥ 1
	inSize    int // elements of one input image, C·H·W (G·cv.Shape().InSize())
	cv        *kernels.Conv
	cols      []float32     // K×P column matrix of one group of one image (also its gradient); nil where pointwise
	pointwise bool          // a 1×1 kernel moved by 1 without padding: the columns are the image itself
	scratch   []float32     // one group of one padded image, for a padded stride-1 convolution (kernels.Conv.Scratch)
	z         tensor.Tensor // output [n,OC,OH,OW]
	dw        tensor.Tensor // weight gradient [OC,C/G,KH,KW]
	dwT, dzT  []float32     // G blocks of K×OC/G, and P×OC/G: transposed weight-gradient recipe
	dx        tensor.Tensor // input gradient [n,C,H,W]; nil for a first layer
	transpose bool          // form dWᵀ with the broadcast kernels (OC/G ≥ 16)
}

// convOp is the forward pass: (x, w) → z.
type convOp struct {
	kop
	l *convLayer
}

// convFilterGradOp is the weight gradient: (x, dz) → dW = Σ_n dz_n·cols_nᵀ.
type convFilterGradOp struct {
	kop
	l *convLayer
}

// convInputGradOp is the input gradient: (w, dz) → dx = col2im(Wᵀ·dz_n).
type convInputGradOp struct {
	kop
	l *convLayer
}

// Conv2D adds the valid (unpadded) stride-1 convolution, without bias, of
// x [n,C,H,W] by the filters w [OC,C,KH,KW]: [n,OC,H−KH+1,W−KW+1]. It is
// Conv2DStrided(x, w, 1, 0). The layer is named after w ("conv1.w" →
// "conv1"); its bias goes with the pooling that follows
// (BiasReLUMaxPool2x2) or with ChannelBias. The gradient with respect to x
// is formed only when x is computed by another op, not for the network's
// input.
func (g *Graph) Conv2D(x, w *G.Node) *G.Node { return g.Conv2DStrided(x, w, 1, 0) }

// Conv2DStrided adds the convolution, without bias, of x [n,C,H,W] by the
// filters w [OC,C,KH,KW] moved by stride ≥ 1 over x zero-padded by pad ≥ 0
// on every side (PyTorch's Conv2d(stride=stride, padding=pad,
// bias=False)): [n,OC,(H+2·pad−KH)/stride+1,(W+2·pad−KW)/stride+1], rounded
// down. Stride 1 runs the vector im2col and col2im kernels (padded, on a
// zero-bordered copy of each image in a buffer of the layer); a strided
// convolution moves its data in pure Go (kernels.ConvShape), with the same
// bits on every kernel set. The layer is named after w ("conv1.w" →
// "conv1"), and forms the gradient with respect to x only when x is
// computed by another op, as Conv2D does.
func (g *Graph) Conv2DStrided(x, w *G.Node, stride, pad int) *G.Node {
	return g.Conv2DGrouped(x, w, stride, pad, 1)
}

// Conv2DGrouped is Conv2DStrided split into groups ≥ 1 groups (PyTorch's
// Conv2d(groups=groups, bias=False)): x [n,C,H,W], filters w
// [OC,C/groups,KH,KW], groups dividing C and OC; output channel o reads
// the input channels of its group, o/(OC/groups). groups = C = OC is the
// depthwise convolution. Each group runs the dense convolution's im2col
// and GEMM on its channels, so its bits are the same on every kernel set;
// groups = 1 is Conv2DStrided.
func (g *Graph) Conv2DGrouped(x, w *G.Node, stride, pad, groups int) *G.Node {
	if !g.ok("convolution", x, w) {
		return nil
	}
	if stride < 1 || pad < 0 {
		g.err = fmt.Errorf("%s: stride %d and padding %d: want stride ≥ 1 and padding ≥ 0", layerName(w, ".w"), stride, pad)
		return nil
	}
	return g.Conv2DAxes(x, w, ConvAxes{SH: stride, SW: stride, PH: pad, PW: pad}, groups)
}

// Conv2DAxes is Conv2DGrouped with a stride, padding and dilation per
// axis (ConvAxes; PyTorch's Conv2d(stride=(SH,SW), padding=(PH,PW),
// dilation=(DH,DW), groups=groups, bias=False)): x [n,C,H,W], filters w
// [OC,C/groups,KH,KW], output [n,OC,OH,OW] with
// OH = (H+2·PH+EB−DH·(KH−1)−1)/SH+1 and OW likewise, rounded down.
// Settings that agree on both axes and both sides, undilated, run as
// Conv2DGrouped's, with its bits; the others move their data in pure Go
// (kernels.ConvShape), with the same bits on every kernel set.
func (g *Graph) Conv2DAxes(x, w *G.Node, a ConvAxes, groups int) *G.Node {
	if !g.ok("convolution", x, w) {
		return nil
	}
	name, inputGrad := layerName(w, ".w"), x.Op() != nil
	xs, wsh := x.Shape(), w.Shape()
	if groups < 1 {
		g.err = fmt.Errorf("%s: %d groups, want ≥ 1", name, groups)
		return nil
	}
	if len(xs) != 4 || len(wsh) != 4 || xs[1] != wsh[1]*groups || wsh[0]%groups != 0 {
		g.err = fmt.Errorf("%s: input %v and weights %v do not make a convolution of %d groups", name, xs, wsh, groups)
		return nil
	}
	if a.SH < 1 || a.SW < 1 || a.PH < 0 || a.PW < 0 || a.PH+a.EB < 0 || a.PW+a.ER < 0 || a.DH < 0 || a.DW < 0 {
		g.err = fmt.Errorf("%s: %+v: want strides ≥ 1, paddings ≥ 0 and dilations ≥ 0", name, a)
		return nil
	}
	cv, err := kernels.NewConv(a.shape(wsh[1], xs[2], xs[3], wsh[2], wsh[3]))
	if err != nil {
		g.err = fmt.Errorf("%s: %w", name, err)
		return nil
	}
	if !g.claim(name) {
		return nil
	}
	s := cv.Shape()
	n, oc := xs[0], wsh[0]
	ocg := oc / groups
	l := &convLayer{
		name: name, n: n, oc: oc, groups: groups, inSize: xs[1] * xs[2] * xs[3], cv: cv, pointwise: s.Pointwise(),
		scratch: g.ws.Floats(name+".xpad", cv.Scratch()),
		z:       g.ws.tensor(name+".z", n, oc, s.OH(), s.OW()),
	}
	if !l.pointwise {
		l.cols = g.ws.Floats(name+".cols", s.K()*s.P())
	}
	if g.training {
		l.dw = g.ws.tensor(name+".dw", wsh...)
		l.transpose = ocg >= 16
		if l.transpose {
			l.dwT = g.ws.Floats(name+".dwT", s.K()*oc)
			l.dzT = g.ws.Floats(name+".dzT", s.P()*ocg)
		}
		if inputGrad {
			l.dx = g.ws.tensor(name+".dx", xs...)
		}
	}
	op := &convOp{kop{name + ".forward", l, dims(x, w), l.z.Shape()}, l}
	return g.apply(op, name, x, w)
}

func (op *convOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	s := l.cv.Shape()
	in, err := op.args(inputs, l.n*l.inSize, l.oc*s.K())
	if err != nil {
		return nil, err
	}
	x, w, z := in[0], in[1], f32(l.z)
	k, p, ocg := s.K(), s.P(), l.oc/l.groups
	for i := range l.n {
		for gr := range l.groups {
			cols := l.columns(x[i*l.inSize+gr*s.InSize():])
			kernels.Sgemm(false, false, ocg, p, k, 1, w[gr*ocg*k:], k, cols, p, 0, z[(i*l.oc+gr*ocg)*p:], p)
		}
	}
	return l.z, nil
}

// columns returns the K×P columns of one group of one image x: x itself
// where the convolution is pointwise, else Im2Col's in l.cols.
func (l *convLayer) columns(x []float32) []float32 {
	s := l.cv.Shape()
	if l.pointwise {
		return x[:s.K()*s.P()]
	}
	l.cv.Im2ColScratch(l.cols, x, l.scratch)
	return l.cols
}

func (op *convOp) DiffWRT(int) []bool { return []bool{op.l.dx != nil, true} }

func (op *convOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	l := op.l
	if l.dw == nil {
		return nil, fmt.Errorf("%s: graph built without gradients", l.name)
	}
	x, w := inputs[0], inputs[1]
	dw, err := G.ApplyOp(&convFilterGradOp{kop{l.name + ".dw", l, dims(x, grad), l.dw.Shape()}, l}, x, grad)
	if err != nil {
		return nil, err
	}
	var dx *G.Node
	if l.dx != nil {
		if dx, err = G.ApplyOp(&convInputGradOp{kop{l.name + ".dx", l, dims(w, grad), l.dx.Shape()}, l}, w, grad); err != nil {
			return nil, err
		}
	}
	return G.Nodes{dx, dw}, nil
}

func (op *convFilterGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	s := l.cv.Shape()
	k, p, oc := s.K(), s.P(), l.oc
	in, err := op.args(inputs, l.n*l.inSize, l.n*oc*p)
	if err != nil {
		return nil, err
	}
	x, dz, dw := in[0], in[1], f32(l.dw)
	ocg := oc / l.groups
	for i := range l.n {
		beta := float32(min(i, 1))
		for gr := range l.groups {
			cols := l.columns(x[i*l.inSize+gr*s.InSize():])
			dzi := dz[(i*oc+gr*ocg)*p:]
			if l.transpose {
				// dWᵀ [K×OC/G] += cols [K×P] · dzᵀ [P×OC/G], group gr's block of dwT
				kernels.Transpose(l.dzT, ocg, dzi, p, ocg, p)
				kernels.Sgemm(false, false, k, ocg, p, 1, cols, p, l.dzT, ocg, beta, l.dwT[gr*k*ocg:], ocg)
			} else {
				// dW [OC/G×K] += dz [OC/G×P] · colsᵀ, group gr's rows of dW
				kernels.Sgemm(false, true, ocg, k, p, 1, dzi, p, cols, p, beta, dw[gr*ocg*k:], k)
			}
		}
	}
	if l.transpose {
		for gr := range l.groups {
			kernels.Transpose(dw[gr*ocg*k:], k, l.dwT[gr*k*ocg:], ocg, k, ocg)
		}
	}
	return l.dw, nil
}

func (op *convInputGradOp) Do(inputs ...G.Value) (G.Value, error) {
	l := op.l
	s := l.cv.Shape()
	k, p, oc := s.K(), s.P(), l.oc
	in, err := op.args(inputs, oc*k, l.n*oc*p)
	if err != nil {
		return nil, err
	}
	w, dz, dx := in[0], in[1], f32(l.dx)
	ocg := oc / l.groups
	for i := range l.n {
		for gr := range l.groups {
			// dcols [K×P] = W_grᵀ · dz_i,gr, then scattered back to the
			// group's channels of the image (disjoint from the others')
			dxi := dx[i*l.inSize+gr*s.InSize():][:s.InSize()]
			if l.pointwise {
				// The columns are the image: no scatter, but Col2Im's
				// bits, 0 + dcols (a −0 becomes +0).
				kernels.Sgemm(true, false, k, p, ocg, 1, w[gr*ocg*k:], k, dz[(i*oc+gr*ocg)*p:], p, 0, dxi, p)
				for j := range dxi {
					dxi[j] += 0
				}
				continue
			}
			kernels.Sgemm(true, false, k, p, ocg, 1, w[gr*ocg*k:], k, dz[(i*oc+gr*ocg)*p:], p, 0, l.cols, p)
			l.cv.Col2ImScratch(dxi, l.cols, l.scratch)
		}
	}
	return l.dx, nil
}
