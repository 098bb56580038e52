package models

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// ONNXSupported lists the operators ImportONNX reads, as its refusals name
// them.
const ONNXSupported = "Conv (grouped and depthwise too; kh×kw kernels, per-axis strides, pads [top,left,bottom,right] alike or not on opposite sides, auto_pad SAME_UPPER and SAME_LOWER, dilations), Gemm (with or without a bias), MatMul (with or without the Add of its bias), Add, " +
	"Concat along the channels (axis 1), Slice (constant bounds, step 1) and Split (constant sizes, or equal parts) of the data along the channels (axis 1), " +
	"Reshape to [N,G,C/G,H,W] (of a vector [N,C], to [N,G,C/G]), Transpose perm [0,2,1,3,4] ([0,2,1]) and Reshape back, each read only by the next (torch's channel_shuffle), " +
	"Reshape of an image to [N,C,H/p1,p1,W/p2,p2], Transpose perm [0,2,4,3,5,1] or [0,2,4,1,3,5] and Reshape to the tokens [N,T,F], each read only by the next (a ViT's patchify, einops' Rearrange), " +
	"Sub, Div, Mul and Add of the data and a constant (one value, or one per channel; trained where ImportOptions.Trainable names it), Sub of two tensors of one shape, Relu, PRelu (one slope, or one a channel), " +
	"LeakyRelu, Tanh, Sigmoid, Clip (constant bounds), Mul of x and Sigmoid(x) (SiLU), Elu, Softplus, " +
	"HardSigmoid with alpha 1/6 and beta 0.5 (nn.Hardsigmoid) and Mul of x and it (nn.Hardswish), HardSwish, Div by √2, Erf, Add 1, " +
	"Mul by x and Mul by 0.5 (torch's form of the exact nn.GELU), MaxPool and AveragePool (padded or not, ceil_mode 0 or 1; pads or auto_pad SAME_UPPER padding the bottom and right more where ceil mode gives the same windows), " +
	"GlobalAveragePool, ReduceMean over axes (2, 3), GlobalMaxPool and ReduceMax over axes (2, 3), ReduceMean (axes [-1] of features or [-3,-2,-1] of images, keepdims 1), Sub, Pow 2, ReduceMean, Add ε, Sqrt, Div, " +
	"Mul by a weight and Add of a bias of the normalised shape, each read only by the next (torch's nn.LayerNorm), the same chain over axis 1 of an image (ConvNeXt's channels_first LayerNorm), " +
	"Transpose perm [0,2,3,1] of an image and, on that channels-last tensor, " + lastSupported + "; " +
	"Reshape of an image [N,D,H,W] to the tokens [N,D,H·W], Transpose perm [0,2,1] to [N,T,D] and back, and on them the channels-last operators above, " +
	"MatMul by a constant [T,K] and Add of its bias along the tokens (MLP-Mixer's token mixing), a class token (Expand or Tile of a constant [1,1,D]) " +
	"concatenated before them (DeiT's two too), Add of a constant [1,T,D] (a position embedding, trained), timm's attention (" + attentionWant + "; " +
	"or q, k and v of Linears of their own, each reshaped to [N,T,h,D/h] and transposed (Hugging Face's); Einsum \"bhid,bhjd->bhij\" and \"bhij,bhjd->bhid\" for the MatMuls), " + seqWant + ", " +
	"Gather of one token along axis 1, Slice of a range of them (step 1) and ReduceMean over them (axes [1], keepdims 0), " + attnPoolWant + "; a 1×1 Conv on their [N,C,1,1] output (a dense layer), Mul of an image [N,C,H,W] " +
	"and a per-sample gate [N,C,1,1] (squeeze-and-excitation; a gate [N,C] made [N,C,1,1] by Reshape or Unsqueeze, and expanded to the image by Expand), Mul of two tensors of one shape, " +
	"ReduceL2 over the features [N,F] (keepdims), Clip min ε, Expand and Div (F.normalize(x, dim=1)), the Mul, Unsqueeze, Pad, AveragePool, " +
	"Squeeze, Mul, Add, Pow and Div torch writes for nn.LocalResponseNorm, If of a constant condition (the branch it takes), Flatten, Reshape, Squeeze, Dropout, GroupNormalization, " +
	"InstanceNormalization (and the Reshape–InstanceNormalization–Reshape–Mul–Add form of GroupNorm), Pad (zeros, " +
	"before a Conv, or the same on every side before an AveragePool), LogSoftmax over the classes as the last node (the loss takes the logits before it), and on constants Constant, ConstantOfShape, Identity, Shape, Gather, Unsqueeze, Concat, Slice, " +
	"Transpose, Cast, Add, Sub, Mul, Div, Equal, Where, Expand"

// ImportONNX turns the ONNX model data (e.g. what PyTorch's
// torch.onnx.export writes) into a network on samples of the given shape
// [C,H,W] with classes classes, named name, and returns it with x⁰, the
// model's initialisers laid out in the network's parameter order. The
// graph must read one float input [N,C,H,W] (N the batch, symbolic or
// fixed) and write the class logits [N,classes].
//
// Each node becomes a layer of a Net (see ONNXSupported): Conv (a kernel
// kh×kw, strides, pads and dilations per axis; pads [top,left,bottom,right]
// that may differ between opposite sides (Conv.ExtraBottom, ExtraRight),
// and auto_pad SAME_UPPER and SAME_LOWER (tf2onnx's "SAME"), resolved from
// the input's static size as ONNX defines them; optional bias; any group
// G dividing the channels, weights [OC,C/G,kh,kw]: grouped and depthwise
// convolutions, factorised 1×k and k×1 kernels, dilated kernels) is Conv2D
// with Conv.Groups G and Conv's per-axis fields; it refuses negative pads,
// auto_pad beside pads, and other auto_pad values; Gemm, and MatMul followed by the Add of a bias, are
// Dense (the weights transposed where Gemm's transB is set: gtstorm's are
// [in,out]; a Gemm without its C input is DenseNoBias); MaxPool and
// AveragePool are the Net's pools, padded where the node's pads are (an
// AveragePool's counted in the divisor with count_include_pad 1, not with
// 0: AvgPoolExcludePad), with ceil_mode 1 in ceil mode (Pooling.Ceil,
// PyTorch's ceil_mode=True), and in ceil mode too where pads or auto_pad
// SAME_UPPER pad the bottom and right more than the top and left and ceil
// mode has the same windows (TensorFlow's "SAME" pools, see poolPads);
// GroupNormalization,
// InstanceNormalization and PyTorch's opset-13 form of nn.GroupNorm are
// GroupNorm (ε 1e-5); GlobalAveragePool and ReduceMean over the maps are
// GlobalAvgPool; GlobalMaxPool and ReduceMax over the maps are
// GlobalMaxPool; torch's opset-13 form of nn.LayerNorm over the whole
// sample (nn.LayerNorm(F) of features [N,F], nn.LayerNorm([C,H,W]) of
// images) — ReduceMean over axes [-1] or [-3,-2,-1] with keepdims 1, Sub
// of it from the same x, Pow 2, ReduceMean over the same axes, Add of ε (a
// constant), Sqrt, Div of x − mean by it, Mul by the weight and Add of the
// bias (constants of the normalised shape), each read only by the next (x
// − mean by the Pow and the Div) — is LayerNorm with the file's ε, and
// other ReduceMeans of features are refused; the same chain over axis 1 of
// an image [N,C,H,W] (ConvNeXt's channels_first LayerNorm, its weight and
// bias [C,1,1]) is ChannelNorm. A Transpose perm [0,2,3,1] of an image
// starts a channels-last value (ConvNeXt's block, onnxchanlast.go), on
// which the import takes nn.LayerNorm(C) (the chain over axes [-1], its
// weight and bias [C]) as ChannelNorm, MatMul by a constant [C,K] followed
// by the Add of a bias [K] (nn.Linear) as a 1×1 Conv with that bias (its
// weights transposed to [K,C,1,1]) and without the Add as one without a
// bias, torch's GELU as GELU, Mul by a constant [C] as LayerScale
// (ConvNeXt's layer scale gamma, trained as torch trains it, x⁰ the
// file's), Mul by one value and Add of a constant [C] or one value as
// MulConst and AddConst, Add
// of two channels-last values as Add, and Transpose perm [0,3,1,2] as the
// image again (a Mul of that image by a constant [C,1,1] is LayerScale too:
// torchvision's ConvNeXt block); a global pool's output [N,C,1,1] may be
// held channels-last too, its LayerNorm(C) then a LayerNorm of the vector
// (torchvision's ConvNeXt head); any other reader of a channels-last
// value is refused; a Concat of one tensor is that tensor (torchvision's
// DenseNet); PRelu is PReLU (one slope, or
// one a channel: torch's [C,1,1] of an image, [F] of features), its slopes
// from the file; Relu, LeakyRelu (its alpha, default 0.01), Tanh and
// Sigmoid are the Net's activations, Clip (nn.ReLU6, nn.Hardtanh,
// torch.clamp) is Clamp, its bounds constants (the attributes min and max
// at opset 6, the inputs 1 and 2 from opset 11; a missing or infinite
// bound is ∓math.MaxFloat32, a bound computed from the data is refused),
// and Mul of x and Sigmoid(x), in
// either order, where only that Mul reads the Sigmoid (torch's opset-13
// form of nn.SiLU) is SiLU; Elu (its alpha, default 1) is ELU, Softplus
// is Softplus (nn.Softplus(beta) is MulConst, Softplus, DivConst, as torch
// writes it), HardSigmoid with torch's alpha 1/6 and beta 0.5 is Hardsigmoid
// and, followed by the Mul of its input x and it where only that Mul
// reads it (torch's opset-13 nn.Hardswish), or as HardSwish, Hardswish;
// Div of x by √2, Erf, Add 1, Mul by x and Mul by 0.5, each read only by
// the next (torch's opset-13 form of the exact nn.GELU), is GELU (an Erf
// outside that pattern, and nn.GELU(approximate='tanh'), are refused); a
// final Softmax is refused with the advice to remove it (the loss takes
// the logits); a zero Pad before a Conv joins its padding, any
// non-negative amount on each side of the maps (torch's nn.ZeroPad2d and
// F.pad before a Conv, EfficientNet-PyTorch's Conv2dStaticSamePadding),
// and one before an AveragePool where it pads every side alike; a Pad
// that crops (negative pads) or pads with another value is refused. Concat of the data along axis 1
// (torch.cat of branches, dim=1) is Concat; Slice of the data along axis 1
// with constant bounds and step 1 (x[:, a:b], and each part of x.chunk(k,
// dim=1), which torch 1.13 writes as Slices whose bounds are folded shape
// arithmetic) is Channels, as is each read output of a Split along axis 1
// (torch.split(x, sizes, dim=1): its sizes the constant input 1, or the
// attribute split before opset 13, or equal parts where absent); Slice and
// Split along another axis are refused. torch's opset-13 channel_shuffle
// — Reshape of an image [N,C,H,W] to [N,G,C/G,H,W], Transpose perm
// [0,2,1,3,4], Reshape back to [N,C,H,W], each node the only reader of the
// one before; of a vector [N,C], to [N,G,C/G] and perm [0,2,1] — is
// ShuffleChannels in G groups; other such Reshapes are refused. Sub, Div, Mul and Add of the
// data and a constant that is one value or one per channel ([C,1,1] or
// [1,C,1,1] against [N,C,H,W]; an input normalisation (x − mean) / std
// inside forward) are SubConst, DivConst, MulConst and AddConst, whose
// constants are no parameters. A global pool's output [N,C,1,1]
// (GlobalAveragePool, ReduceMean over the maps with keepdims), which the
// Net holds as the vector [C], takes a 1×1 Conv without padding (any
// stride; the head of NiN, SqueezeNet and MobileNet) as Dense, or
// DenseNoBias, of the weights [OC,C,1,1] transposed to [C,OC], its output
// read as [N,OC,1,1] by Flatten, Reshape, Squeeze, activations or a Mul
// (a k×k kernel with padding there, which reads only its centre tap, is
// refused); a Reshape of a vector [N,C] to [N,C,1,1] is such a view too,
// and so is its Unsqueeze at the end (in one node or two), and its Expand
// to the image that a Mul then multiplies it by.
// Mul of an image [N,C,H,W] and such a per-sample gate [N,C,1,1] of the
// same C, in either order (a squeeze-and-excitation block's x * gate), is
// ChannelScale; other Muls of two tensors of the data are refused.
// Dropout is the seeded Dropout layer with the file's ratio: it
// drops in training, with masks drawn from each minibatch's key (and, for
// a node named dropout#K as gtstorm's export names it, the layer key K−1),
// and is the identity in evaluation, as torch's. Shape arithmetic on constants and on the input's shape is
// folded when the file is read. BatchNormalization is refused (SPEC §12:
// each node's batch statistics differ under non-IID data; use
// GroupNorm), as is any other operator, naming it, its node and the
// supported set. Every refusal is one line.
func ImportONNX(name string, data []byte, shape []int, classes int) (Model, []float32, error) {
	return ImportONNXWith(name, data, shape, classes, ImportOptions{})
}

// ImportONNXWith is ImportONNX with the caller's options.
func ImportONNXWith(name string, data []byte, shape []int, classes int, opt ImportOptions) (Model, []float32, error) {
	om, err := onnx.Unmarshal(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	return importModel(name, om, shape, classes, opt)
}

// ImportONNXFile is ImportONNX of the regular file at path (see
// onnx.ReadFile), naming the network after the file.
func ImportONNXFile(path string, shape []int, classes int) (Model, []float32, error) {
	return ImportONNXFileWith(path, shape, classes, ImportOptions{})
}

// ImportONNXFileWith is ImportONNXFile with the caller's options.
func ImportONNXFileWith(path string, shape []int, classes int, opt ImportOptions) (Model, []float32, error) {
	om, err := onnx.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return importModel(filepath.Base(path), om, shape, classes, opt)
}

// IsONNXName reports whether a model name names an ONNX file.
func IsONNXName(name string) bool { return strings.HasSuffix(strings.ToLower(name), ".onnx") }

// batchDim stands for the batch size in folded integer constants (the
// result of Shape on the data).
const batchDim = -(1 << 62) - 31

// maxBatchMul bounds k of batchMul(k).
const maxBatchMul = 1 << 24

// batchMul stands for k times the batch size (k ≥ 1): the shape arithmetic
// of nn.MultiheadAttention, which folds the batch into its heads (N·h) and
// its tokens (T·N). batchMul(1) is batchDim.
func batchMul(k int64) int64 { return batchDim - (k - 1) }

// batchFactor returns k where v is batchMul(k), else 0.
func batchFactor(v int64) int64 {
	if v <= batchDim && v > batchDim-maxBatchMul {
		return batchDim - v + 1
	}
	return 0
}

// importer is the state of one import: the Net being described, the
// values of the ONNX graph by name and the initial parameters by name.
type importer struct {
	name   string
	net    *Net
	vals   map[string]ival
	params map[string][]float32
	used   map[string]bool // layer names taken
	batch  int64           // the input's fixed batch size, or 0 when symbolic
	opset  int64
	// readers lists the nodes reading each value, once per input that
	// reads it, and nil for each graph output it is.
	readers map[string][]*onnx.Node
	// tokenImages holds the token image [C,H·W,1] made of each Net image
	// (Tokens; see onnxtokens.go).
	tokenImages map[int]Tensor
	// opt is the caller's; matched the patterns of opt.Trainable that
	// matched an initialiser, scaleNames the initialisers of more than one
	// value that multiply the data (see onnxtrainable.go).
	opt        ImportOptions
	matched    map[string]bool
	scaleNames []string
	// exact names the initialisers that gtstorm's own export lists as
	// trainable (trainableKey); trainedAt the node that reads each trained
	// one.
	exact     map[string]bool
	trainedAt map[string]trainedUse
}

// ivKind is what a value of the graph is.
type ivKind int

const (
	ivConst   ivKind = iota + 1 // known at import: an initialiser or folded
	ivAct                       // computed from the data: a tensor of the Net
	ivPending                   // the start of a pattern that later nodes finish
)

// ival is a value of the graph. An activation is a tensor of the Net and
// the per-sample shape the ONNX graph gives it (view), which may differ
// from the Net's by dimensions of 1 (GlobalAvgPool writes [C], ONNX's
// GlobalAveragePool [C,1,1]).
type ival struct {
	kind ivKind
	c    *iconst
	t    Tensor
	view []int
	p    *pending
	// last marks a channels-last value (see onnxchanlast.go): t is an
	// image [C,H,W] of the Net that the graph holds permuted, view
	// [H,W,C] (or a global pool's output [C], view [1,1,C]). Only the
	// operators channelsLast takes may read it.
	last bool
	// seq marks channels-last tokens held sequence-first, [T,N,C] for
	// the view [T,C] (nn.MultiheadAttention's layout; see onnxmha.go).
	seq bool
	// unpermuted marks the image a channels-last value became again
	// (Transpose perm [0,3,1,2]): a Mul of it by a constant [C,1,1] is
	// torchvision's ConvNeXt layer scale (see layerScaleMul).
	unpermuted bool
}

// iconst is a constant tensor: float data or integer data (which may hold
// batchDim).
type iconst struct {
	dims  []int
	f     []float32
	i     []int64
	float bool
	name  string // the initialiser's name, which names layers
	// origin is the initialiser a reshaped constant's values come from
	// (a parameter unsqueezed in forward), which --trainable may name.
	origin string
}

func (c *iconst) size() int { return product(c.dims) }

// pendKind is the pattern a pending value starts.
type pendKind int

const (
	pMatMul        pendKind = iota + 1 // x·W, waiting for the Add of a bias
	pGrouped                           // GroupNorm: x reshaped to [N,G,−1]
	pNormed                            // … and InstanceNormalization with scale 1, shift 0
	pGN                                // … and reshaped back: normalised, not yet scaled
	pGNScaled                          // … and multiplied by the scale
	pPad                               // x padded with zeros on the sides of its maps
	pLogSoftmax                        // log_softmax(x) over the classes: only the graph's output
	pSiLU                              // σ(x), which only the Mul of x and it reads: SiLU
	pHardswish                         // HardSigmoid(x), which only the Mul of x and it reads: Hardswish
	pGELUDiv                           // x/√2 of torch's GELU (see geluDiv)
	pGELUErf                           // erf(x/√2)
	pGELUAdd                           // 1 + erf(x/√2)
	pGELUMul                           // x·(1 + erf(x/√2)), before its Mul by 0.5
	pShuffle                           // channel shuffle: x [N,C,H,W] reshaped to [N,G,C/G,H,W] (or [N,C] to [N,G,C/G])
	pShuffled                          // … and transposed, perm [0,2,1,3,4]
	pLNMean                            // LayerNorm (see onnxlayernorm.go): the sample's mean
	pLNCentred                         // … x − mean, read by the Pow and the Div
	pLNSquared                         // … (x − mean)²
	pLNVar                             // … the variance
	pLNVarEps                          // … plus ε
	pLNStd                             // … its square root
	pLNNormed                          // … x̂, not yet scaled
	pLNScaled                          // … scaled, not yet shifted
	pTokenMatMul                       // tokens [N,D,T]·W [T,K], waiting for the Add of a bias (see onnxtokens.go)
	pClassToken                        // a class token expanded to [N,1,D], which a Concat prepends
	pQKV                               // attention: qkv [N,T,3D] reshaped to [N,T,3,h,D/h]
	pQKVPerm                           // … and transposed, perm [2,0,3,1,4]
	pQKVChunk                          // attention: q, k or v sliced out of qkv [N,T,3D] along the last axis
	pQKVChunkHeads                     // … and reshaped to [N,T,h,D/h]
	pQKVPart                           // … q, k or v taken out of it
	pKeysT                             // … kᵀ
	pScores                            // … q @ kᵀ, scaled or not
	pProbs                             // … its softmax over the keys
	pContext                           // … @ v: the Attention layer's output as [N,h,T,D/h]
	pContextT                          // … transposed, perm [0,2,1,3]
	pSeqFlat                           // nn.MultiheadAttention: an attention's output flattened to [T·N,C] (see onnxmha.go)
	pPatches                           // patchify: an image [N,C,H,W] reshaped to [N,C,h,p1,w,p2] (see onnxpatches.go)
	pPatchesT                          // … and transposed to [N,h,w,p1,p2,C] or [N,h,w,C,p1,p2]
	pPoolWeights                       // CCT's SeqPool: the softmax of the tokens' scores [N,T,1] (see onnxattnpool.go)
	pPoolWeightsT                      // … transposed to [N,1,T]
	pPooled                            // … @ the tokens: [N,1,D]
	pL2Norm                            // F.normalize: the norm ‖x‖ of features [N,F] (see onnxl2norm.go)
	pL2Clipped                         // … clipped below at ε (and maybe expanded to x's shape)
	pLRN                               // torch's nn.LocalResponseNorm, on its way (see onnxlrn.go)
)

var pendNames = map[pendKind]string{pMatMul: "a MatMul without its bias", pGrouped: "GroupNorm's first Reshape",
	pNormed: "GroupNorm's InstanceNormalization", pGN: "GroupNorm before its scale", pGNScaled: "GroupNorm before its shift", pPad: "a zero Pad",
	pLogSoftmax: "a LogSoftmax, which the import takes only as the network's last node", pSiLU: "the Sigmoid of a SiLU",
	pHardswish: "the HardSigmoid of a Hardswish", pGELUDiv: "the Div of a GELU", pGELUErf: "the Erf of a GELU", pGELUAdd: "the Add of a GELU",
	pGELUMul: "a GELU before its Mul by 0.5", pShuffle: "a channel shuffle's Reshape to [N,G,C/G,…]",
	pShuffled: "a channel shuffle's Transpose", pLNMean: "the ReduceMean of a LayerNorm", pLNCentred: "the Sub of a LayerNorm",
	pLNSquared: "the Pow of a LayerNorm", pLNVar: "the variance of a LayerNorm", pLNVarEps: "the Add of a LayerNorm's ε",
	pLNStd: "the Sqrt of a LayerNorm", pLNNormed: "a LayerNorm before its weight", pLNScaled: "a LayerNorm before its bias",
	pTokenMatMul: "a MatMul of the tokens without its bias", pClassToken: "an expanded class token", pQKV: "an attention's qkv reshaped to [N,T,3,h,D/h]",
	pQKVPerm: "an attention's permuted qkv", pQKVChunk: "a third of an attention's qkv", pQKVChunkHeads: "a third of an attention's qkv split into heads", pQKVPart: "an attention's q, k or v", pKeysT: "an attention's kᵀ", pScores: "an attention's scores",
	pProbs: "an attention's softmax", pContext: "an attention's output per head", pContextT: "an attention's output transposed",
	pSeqFlat: "an attention's output flattened to [T·N,C]", pPatches: "a patchify's Reshape to [N,C,h,p1,w,p2]",
	pPatchesT: "a patchify's transposed patches", pPoolWeights: "the softmax of the tokens' scores (a SeqPool's weights)",
	pPoolWeightsT: "a SeqPool's weights transposed", pPooled: "a SeqPool's output [N,1,D]",
	pL2Norm: "the norm of F.normalize", pL2Clipped: "the clipped norm of F.normalize", pLRN: "a step of nn.LocalResponseNorm"}

type pending struct {
	kind   pendKind
	x      ival       // the activation it starts from
	w      *iconst    // pMatMul: the weights [in,out]
	node   *onnx.Node // pMatMul: the MatMul, whose output a layer without a bias becomes
	groups int
	gamma  []float32  // pGNScaled
	pads   padSides   // pPad
	name   string     // the layer's name
	ln     *lnChain   // pLNMean … pLNScaled: the LayerNorm's chain
	tok    *tokenPart // pQKV … pSeqFlat: the attention's chain
	patch  patchCut   // pPatches, pPatchesT: the patches
	eps    float32    // pL2Clipped: the norm's floor
	lrn    *lrnChain  // pLRN: the chain's progress
}

func importModel(name string, om *onnx.Model, shape []int, classes int, opt ImportOptions) (Model, []float32, error) {
	if err := CheckTrainable(opt.Trainable); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	im := &importer{name: name, net: NewNet(name, shape, classes), vals: map[string]ival{},
		params: map[string][]float32{}, used: map[string]bool{}, opset: om.Opset(""), readers: readers(&om.Graph),
		tokenImages: map[int]Tensor{}, opt: opt, matched: map[string]bool{}, exact: map[string]bool{},
		trainedAt: map[string]trainedUse{}}
	for _, p := range om.Metadata {
		if p.Key == trainableKey {
			for _, name := range strings.Split(p.Value, ",") {
				im.exact[name] = true
			}
		}
	}
	if err := im.net.Err(); err != nil {
		return nil, nil, err
	}
	if im.opset < 9 || im.opset > 21 {
		return nil, nil, fmt.Errorf("%s: opset %d, want 9 to 21 (torch.onnx.export's opset_version)", name, im.opset)
	}
	if err := im.inputs(&om.Graph, shape); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	for i := range om.Graph.Nodes {
		n := &om.Graph.Nodes[i]
		if err := im.node(n); err != nil {
			return nil, nil, fmt.Errorf("%s: node %q (%s): %w", name, n.Name, n.OpType, err)
		}
	}
	out, err := im.output(&om.Graph, classes)
	if err == nil {
		err = im.checkTrainable()
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	m, err := im.net.Model(out)
	if err != nil {
		return nil, nil, err
	}
	x0 := make([]float32, 0, m.NumParams())
	for _, p := range m.Params() {
		v := im.params[p.Name]
		if len(v) != p.Size() {
			return nil, nil, fmt.Errorf("%s: parameter %s has %d initial values, want %d", name, p.Name, len(v), p.Size())
		}
		x0 = append(x0, v...)
	}
	m.(*classifier).fileParams = x0
	m.(*classifier).constants = im.constants()
	return m, slices.Clone(x0), nil
}

// readers returns the nodes of g reading each value, once per input that
// reads it, and a nil for each graph output the value is.
func readers(g *onnx.Graph) map[string][]*onnx.Node {
	r := map[string][]*onnx.Node{}
	for i := range g.Nodes {
		for _, in := range g.Nodes[i].Inputs {
			r[in] = append(r[in], &g.Nodes[i])
		}
	}
	for _, o := range g.Outputs {
		r[o.Name] = append(r[o.Name], nil)
	}
	return r
}

// FileParams returns a copy of the parameters an imported model's file
// holds (its initialisers, in layout order), and false for a model that was
// not imported.
func FileParams(m Model) ([]float32, bool) {
	c, ok := m.(*classifier)
	if !ok || c.fileParams == nil {
		return nil, false
	}
	return slices.Clone(c.fileParams), true
}

// initialisers records ts, a graph's initialisers, as constants.
func (im *importer) initialisers(ts []onnx.Tensor) error {
	for i := range ts {
		t := &ts[i]
		c, err := constOf(t)
		if err != nil {
			return fmt.Errorf("initializer %q: %w", t.Name, err)
		}
		c.name = t.Name
		im.vals[t.Name] = ival{kind: ivConst, c: c}
	}
	return nil
}

// inputs records the initialisers as constants and checks the graph's one
// data input against the samples' shape.
func (im *importer) inputs(g *onnx.Graph, shape []int) error {
	if err := im.initialisers(g.Initializers); err != nil {
		return err
	}
	var data []onnx.ValueInfo
	for _, v := range g.Inputs {
		if _, isInit := im.vals[v.Name]; !isInit {
			data = append(data, v)
		}
	}
	if len(data) != 1 {
		return fmt.Errorf("the graph reads %d inputs besides its initialisers, want one (the images)", len(data))
	}
	in := data[0]
	want := fmt.Sprintf("[N,%s] (the dataset's samples)", joinInts(shape))
	if in.ElemType != onnx.Float {
		return fmt.Errorf("input %q has element type %v, want float", in.Name, in.ElemType)
	}
	if in.Shape == nil {
		return fmt.Errorf("input %q has no shape: a dynamic shape that cannot be resolved; want %s", in.Name, want)
	}
	if len(in.Shape) != len(shape)+1 {
		return fmt.Errorf("input %q has shape %s, want %s", in.Name, dimsText(in.Shape), want)
	}
	if d := in.Shape[0]; d.Param == "" {
		im.batch = d.Value
	}
	for i, d := range in.Shape[1:] {
		if d.Param != "" {
			return fmt.Errorf("input %q has shape %s: dimension %d is dynamic (%q), which the import does not resolve; want %s", in.Name, dimsText(in.Shape), i+1, d.Param, want)
		}
		if d.Value != int64(shape[i]) {
			return fmt.Errorf("input %q has shape %s, want %s", in.Name, dimsText(in.Shape), want)
		}
	}
	im.vals[in.Name] = ival{kind: ivAct, t: im.net.Input(), view: slices.Clone(shape)}
	return nil
}

// output returns the Net tensor of the graph's output: the class logits.
func (im *importer) output(g *onnx.Graph, classes int) (Tensor, error) {
	if len(g.Outputs) != 1 {
		return Tensor{}, fmt.Errorf("the graph has %d outputs, want one (the class logits)", len(g.Outputs))
	}
	name := g.Outputs[0].Name
	v, ok := im.vals[name]
	if ok {
		var err error
		if v, err = im.settle(name, v); err != nil {
			return Tensor{}, err
		}
	}
	switch {
	case !ok:
		return Tensor{}, fmt.Errorf("the output %q is not computed by any node", name)
	case v.kind == ivPending && v.p.kind == pLogSoftmax:
		// The loss is the cross-entropy of the logits, which is torch's
		// nll_loss of their log_softmax: the network ends at the logits.
		v = v.p.x
	case v.kind == ivPending:
		return Tensor{}, fmt.Errorf("the output %q is %s, not a finished layer", name, pendNames[v.p.kind])
	case v.kind != ivAct:
		return Tensor{}, fmt.Errorf("the output %q is a constant, not computed from the input", name)
	case len(v.view) != 1 || v.view[0] != classes:
		return Tensor{}, fmt.Errorf("the output %q has shape [N,%s], want the %d class logits [N,%d]", name, joinInts(v.view), classes, classes)
	}
	return v.t, nil
}

func dimsText(ds []onnx.Dim) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = fmt.Sprint(d.Value)
		if d.Param != "" {
			s[i] = d.Param
		}
	}
	return "[" + strings.Join(s, ",") + "]"
}

// layerName names the layer node n makes: after its weights' initialiser
// (conv1.weight → conv1, and gtstorm's conv1.w → conv1), else after the
// node's scope (/gn1/Reshape → gn1; gtstorm's attn.heads → attn), else
// after its operator and position; always a name no layer has.
func (im *importer) layerName(n *onnx.Node, init string) string {
	var cands []string
	if base, ok := strings.CutSuffix(init, ".weight"); ok {
		cands = append(cands, base)
	} else if i := strings.LastIndexByte(init, '.'); i > 0 && strings.Contains(".w.g.c.p.a.s.b", init[i:]+".") {
		cands = append(cands, init[:i]) // gtstorm's export: the layer's own name again
	} else if init != "" && !strings.Contains(init, "::") {
		cands = append(cands, init)
	}
	if s := scopeOf(n.Name); s != "" {
		cands = append(cands, s)
	} else if i := strings.LastIndexByte(n.Name, '.'); i > 0 && !strings.Contains(n.Name, "/") {
		cands = append(cands, n.Name[:i]) // gtstorm's export: layer.step
	}
	for _, c := range cands {
		if im.free(c) {
			im.used[c] = true
			return c
		}
	}
	for k := len(im.used) + 1; ; k++ {
		if c := fmt.Sprintf("%s%d", strings.ToLower(n.OpType), k); im.free(c) {
			im.used[c] = true
			return c
		}
	}
}

// fileLayer adds the layer that build makes under the name layerName
// gives n and the initialiser label, its parameter name+suffix starting
// at values (a copy), and returns it and the name. Values holding NaN are
// refused, verb saying what n does with them ("scales by").
func (im *importer) fileLayer(n *onnx.Node, label, suffix, verb string, values []float32, build func(name string) Tensor) (Tensor, string, error) {
	if slices.ContainsFunc(values, func(v float32) bool { return v != v }) {
		return Tensor{-1}, "", fmt.Errorf("%s %q, which holds NaN", verb, label)
	}
	name := im.layerName(n, label)
	t := build(name)
	im.params[name+suffix] = slices.Clone(values)
	return t, name, nil
}

func (im *importer) free(name string) bool {
	return name != "" && !strings.ContainsAny(name, " \t\n#") && name != ONNXInput && name != ONNXOutput && !im.used[name]
}

// scopeOf returns the module path of a node named as PyTorch names them,
// "/layer1/layer1.0/conv1/Conv" → "layer1.0.conv1", or "". A scope that
// extends the one before it names a child of a container by the
// container's attribute: "/block/block/block.3/MatMul" (the fourth module
// of a Sequential named block inside a module named block) →
// "block.block.3".
func scopeOf(node string) string {
	parts := strings.Split(strings.Trim(node, "/"), "/")
	if len(parts) < 2 {
		return ""
	}
	acc, last := "", ""
	for _, p := range parts[:len(parts)-1] {
		switch {
		case p == "":
			continue
		case acc == "":
			acc = p
		case strings.HasPrefix(p, last+"."):
			acc += p[len(last):]
		default:
			acc += "." + p
		}
		last = p
	}
	return acc
}
