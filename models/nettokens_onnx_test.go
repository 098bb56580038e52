package models

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// vitNet is a small ViT on 3×16×16: a 4×4 stride-4 patch embedding 3→8,
// Tokens, a class token, a position embedding, a pre-norm attention block
// (ChannelNorm, qkv 1×1 Conv 8→24, Attention with 2 heads, proj 1×1 Conv,
// residual Add), ChannelNorm, the class token's features and a Dense head.
func vitNet() (Model, error) {
	n := NewNet("vit", []int{3, 16, 16}, 5)
	h := n.Tokens(n.Conv2D("patch", n.Input(), Conv{Out: 8, Kernel: 4, Stride: 4, Bias: true}))
	h = n.PositionEmbedding("pos", n.ClassToken("cls", h))
	qkv := n.Conv2D("qkv", n.ChannelNorm("norm1", h, 1e-6), Conv{Out: 24, Kernel: 1, Bias: true})
	a := n.Conv2D("proj", n.Attention("attn", qkv, 2, 0), Conv{Out: 8, Kernel: 1, Bias: true})
	h = n.ChannelNorm("norm", n.Add(h, a), 1e-6)
	return n.Model(n.Dense("head", n.Token(h, 0), 5))
}

// mixerNet is a small MLP-Mixer on 3×16×16: the patch embedding, Tokens,
// ChannelNorm, token mixing (TokenLinear 16→8, GELU, TokenLinear 8→16),
// the residual Add, global average pooling and a Dense head.
func mixerNet() (Model, error) {
	n := NewNet("mixer", []int{3, 16, 16}, 5)
	x := n.Tokens(n.Conv2D("patch", n.Input(), Conv{Out: 8, Kernel: 4, Stride: 4, Bias: true}))
	h := n.TokenLinear("mix1", n.ChannelNorm("norm", x, 1e-6), 8, false)
	h = n.TokenLinear("mix2", n.GELU(h), 16, false)
	return n.Model(n.Dense("head", n.GlobalAvgPool(n.Add(x, h)), 5))
}

// oddTokensNet uses the token layers on an image of several rows and
// columns (a position embedding and attention of a [C,2,2] image, 3 heads
// with a scale of its own), a TokenLinear without a bias and the token of
// position 3, on 3×8×8.
func oddTokensNet() (Model, error) {
	n := NewNet("oddtokens", []int{3, 8, 8}, 3)
	p := n.PositionEmbedding("pos", n.Conv2D("patch", n.Input(), Conv{Out: 6, Kernel: 4, Stride: 4, Bias: true}))
	a := n.Attention("attn", n.Conv2D("qkv", p, Conv{Out: 18, Kernel: 1}), 3, 0.7)
	h := n.TokenLinear("mix", n.Tokens(n.Add(p, a)), 5, true)
	return n.Model(n.Dense("head", n.Token(h, 3), 3))
}

// cctNet is a Compact Convolutional Transformer's head: tokens of a
// convolution pooled by the softmax of their scores (SeqPool).
func cctNet() (Model, error) {
	n := NewNet("cct", []int{3, 8, 8}, 3)
	t := n.Tokens(n.Conv2D("tok", n.Input(), Conv{Out: 6, Kernel: 3, Stride: 2, Pad: 1, Bias: true}))
	h := n.ChannelNorm("norm", t, 1e-5)
	return n.Model(n.Dense("head", n.AttentionPool(h, n.Conv2D("score", h, Conv{Out: 1, Kernel: 1, Bias: true})), 3))
}

// rangeSubNet takes the tokens after a class token (timm's x[:, 1:]) and
// subtracts the patch embedding's from them (PoolFormer's pool(y) − y).
func rangeSubNet() (Model, error) {
	n := NewNet("rangesub", []int{3, 8, 8}, 3)
	t := n.Tokens(n.Conv2D("patch", n.Input(), Conv{Out: 6, Kernel: 4, Stride: 4, Bias: true}))
	mixed := n.TokenLinear("mix", n.ClassToken("cls", t), 5, false)
	d := n.Sub(n.TokenRange(mixed, 1, 4), t)
	return n.Model(n.Dense("head", n.GlobalAvgPool(d), 3))
}

// resMLPNet is ResMLP's Affine, α·x + β (LayerScale then ChannelShift),
// on the tokens of a patch embedding before a Linear across the patches,
// after a ChannelShift of an image.
func resMLPNet() (Model, error) {
	n := NewNet("resmlp", []int{3, 8, 8}, 3)
	h := n.ReLU(n.ChannelShift("bias", n.Conv2D("stem", n.Input(), Conv{Out: 4, Kernel: 3, Pad: 1})))
	t := n.Tokens(n.Conv2D("patch", h, Conv{Out: 6, Kernel: 4, Stride: 4, Bias: true}))
	mixed := n.TokenLinear("mix", n.ChannelShift("beta", n.LayerScale("alpha", t)), 4, false)
	return n.Model(n.Dense("head", n.GlobalAvgPool(n.Add(t, mixed)), 3))
}

// gluNet gates one convolution by another (a bilinear GLU), then
// gMLP's spatial gating on the tokens: the first half of the features
// times a Linear along the tokens of the second half (Mul of two tensors).
func gluNet() (Model, error) {
	n := NewNet("glu", []int{3, 8, 8}, 3)
	h := n.Conv2D("a", n.Input(), Conv{Out: 4, Kernel: 3, Pad: 1, Bias: true})
	h = n.Mul(h, n.Conv2D("b", n.Input(), Conv{Out: 4, Kernel: 3, Pad: 1, Bias: true}))
	t := n.Tokens(n.Conv2D("patch", h, Conv{Out: 6, Kernel: 4, Stride: 4}))
	g := n.Mul(n.Channels(t, 0, 3), n.TokenLinear("proj", n.Channels(t, 3, 6), 4, false))
	return n.Model(n.Dense("head", n.Flatten(g), 3))
}

// cosineNet is a cosine classifier: features pooled, a Linear,
// F.normalize (L2Normalize), and a bias-free Linear scaled by 10.
func cosineNet() (Model, error) {
	n := NewNet("cosine", []int{3, 8, 8}, 3)
	h := n.GlobalAvgPool(n.ReLU(n.Conv2D("c", n.Input(), Conv{Out: 6, Kernel: 3, Pad: 1, Bias: true})))
	h = n.L2Normalize(n.Dense("proj", h, 5), 1e-12)
	return n.Model(n.MulConst(n.DenseNoBias("fc", h, 3), []float32{10}))
}

// lrnNet is the TensorFlow tutorial's CNN, narrowed: local response
// normalisation of an even and an odd window.
func lrnNet() (Model, error) {
	n := NewNet("lrn", []int{3, 8, 8}, 3)
	h := n.LocalResponseNorm(n.ReLU(n.Conv2D("c1", n.Input(), Conv{Out: 6, Kernel: 3, Pad: 1, Bias: true})), LRN{Size: 4, Alpha: 0.5, Beta: 0.75, K: 1})
	h = n.LocalResponseNorm(n.Conv2D("c2", h, Conv{Out: 5, Kernel: 3, Stride: 2, Pad: 1, Bias: true}), LRN{Size: 3, Alpha: 0.2, Beta: 0.6, K: 2})
	return n.Model(n.Dense("fc", n.Flatten(h), 3))
}

// tokenParams returns onnxrtParams(m, seed) with the class tokens and
// position embeddings scaled from N(0, 0.02²) to N(0, 0.5²), so that a
// misplaced one shows in the logits.
func tokenParams(m Model, seed uint64) []float32 {
	params := onnxrtParams(m, seed)
	for _, p := range m.Params() {
		if strings.HasSuffix(p.Name, ".c") || strings.HasSuffix(p.Name, ".p") {
			for i := range params[p.Offset : p.Offset+p.Size()] {
				params[p.Offset+i] *= 25
			}
		}
	}
	return params
}

// TestTokenLayersExport exports vitNet, mixerNet and oddTokensNet to ONNX:
// each token layer is torch's spelling, node for node; onnx's checker
// (where python3-onnx is installed) accepts the export, and onnxruntime
// gives gtstorm's logits. Each network stored as a NetSpec (JSON) and
// rebuilt has the same spec, parameters and training, bit for bit, and
// Summarize lists its layers.
func TestTokenLayersExport(t *testing.T) {
	skipShort(t)
	seqOps := "Reshape Transpose"
	imageOps := "Transpose Reshape"
	for _, c := range []struct {
		build   func() (Model, error)
		shape   []int
		classes int
		chains  map[string]string // the op types of the nodes of a layer
		summary map[string]string // a layer's op and parameters in Summarize
	}{
		{vitNet, []int{3, 16, 16}, 5, map[string]string{
			"tokens#2": "Reshape",
			"cls":      seqOps + " Shape Slice Concat Expand Concat " + imageOps,
			"pos":      seqOps + " Add " + imageOps,
			"attn": seqOps + " Reshape Transpose Gather Gather Gather Transpose MatMul Mul Softmax MatMul Transpose Reshape " +
				imageOps,
			"token#11": seqOps + " Gather",
		}, map[string]string{
			"tokens#2": "tokens 0", "cls": "classtoken 8", "pos": "positionembedding 136", "attn": "attention, 2 heads, scale 0.5 0",
			"token#11": "token 0 0",
		}},
		{mixerNet, []int{3, 16, 16}, 5, map[string]string{
			"tokens#2": "Reshape",
			"mix1":     "Reshape MatMul Add Reshape",
			"mix2":     "Reshape MatMul Add Reshape",
		}, map[string]string{
			"mix1": "tokenlinear → 8 positions 136", "mix2": "tokenlinear → 16 positions 144",
		}},
		{oddTokensNet, []int{3, 8, 8}, 3, map[string]string{
			"pos":      seqOps + " Add " + imageOps,
			"mix":      "Reshape MatMul Reshape",
			"token#8":  seqOps + " Gather",
			"tokens#6": "Reshape",
		}, map[string]string{
			"pos": "positionembedding 24", "attn": "attention, 3 heads, scale 0.7 0", "mix": "tokenlinear → 5 positions, no bias 20",
			"token#8": "token 3 0",
		}},
		{patchesNet(PatchesPixelMajor), []int{3, 8, 12}, 4, map[string]string{
			"patches#1": "Reshape Transpose Reshape " + imageOps,
		}, map[string]string{
			"patches#1": "patches 4×3, features (p1 p2 c) 0",
		}},
		{patchesNet(PatchesChannelMajor), []int{3, 8, 12}, 4, map[string]string{
			"patches#1": "Reshape Transpose Reshape " + imageOps,
		}, map[string]string{
			"patches#1": "patches 4×3, features (c p1 p2) 0",
		}},
		{fixupNet, []int{3, 8, 8}, 4, map[string]string{
			"bias1a": "Add", "scale": "Mul", "alpha": "Mul", "shift#9": "Add",
		}, map[string]string{
			"bias1a": "shift, one trainable value 1", "scale": "scale, one trainable value 1", "shift#9": "shift by bias1a's value 0",
		}},
		{lrnNet, []int{3, 8, 8}, 3, map[string]string{
			"lrn#3": "Mul Unsqueeze Pad AveragePool Squeeze Mul Add Pow Div", "lrn#5": "Mul Unsqueeze Pad AveragePool Squeeze Mul Add Pow Div",
		}, map[string]string{
			"lrn#3": "lrn, size 4, α 0.5, β 0.75, k 1 0", "lrn#5": "lrn, size 3, α 0.2, β 0.6, k 2 0",
		}},
		{cosineNet, []int{3, 8, 8}, 3, map[string]string{
			"l2normalize#5": "ReduceL2 Clip Div",
		}, map[string]string{
			"l2normalize#5": "l2normalize, ε 1e-12 0",
		}},
		{gluNet, []int{3, 8, 8}, 3, map[string]string{
			"mul#3": "Mul", "mul#9": "Mul",
		}, map[string]string{
			"mul#3": "mul 0", "mul#9": "mul 0", "proj": "tokenlinear → 4 positions 20",
		}},
		{resMLPNet, []int{3, 8, 8}, 3, map[string]string{
			"bias": "Add", "beta": "Add",
		}, map[string]string{
			"bias": "channelshift, a trainable shift a channel 4", "beta": "channelshift, a trainable shift a channel 6",
		}},
		{cctNet, []int{3, 8, 8}, 3, map[string]string{
			"attentionpool#5": "Reshape Transpose Softmax Transpose Reshape Transpose MatMul Squeeze",
		}, map[string]string{
			"attentionpool#5": "attentionpool, the tokens weighted by the softmax of their scores 0",
		}},
		{rangeSubNet, []int{3, 8, 8}, 3, map[string]string{
			"tokenrange#5": seqOps + " Slice " + imageOps,
			"sub#6":        "Sub",
		}, map[string]string{
			"tokenrange#5": "tokens [1, 5) 0", "sub#6": "sub 0",
		}},
	} {
		m, err := c.build()
		if err != nil {
			t.Fatal(err)
		}
		t.Run(m.Name(), func(t *testing.T) {
			params := tokenParams(m, 7)
			om, enc := marshalONNX(t, m, params)
			for layer, want := range c.chains {
				var ops []string
				for _, n := range om.Graph.Nodes {
					if n.Name == layer || strings.HasPrefix(n.Name, layer+".") {
						ops = append(ops, n.OpType)
					}
				}
				if got := strings.Join(ops, " "); got != want {
					t.Errorf("%s's nodes %s, want %s", layer, got, want)
				}
			}
			checkWithPython(t, enc, m.Name())
			b := batchOf(imageSet(41, 5, c.classes, true, c.shape...), seq(5)...)
			want, err := Logits(m, params, b)
			if err != nil {
				t.Fatal(err)
			}
			var maxAbs float32
			for _, z := range want {
				maxAbs = max(maxAbs, z, -z)
			}
			if maxAbs < 0.5 {
				t.Errorf("logits up to %g only: the comparison is too easy", maxAbs)
			}
			node, modules := onnxRuntime(t)
			checkRuntimeOutputs(t, m.Name()+"'s export", node, modules, enc, m, want, b)

			spec, js := specJSON(t, m)
			_, r := fromSpecJSON(t, js)
			if _, js2 := specJSON(t, r); string(js2) != string(js) {
				t.Errorf("rebuilt spec %s, want %s", js2, js)
			}
			if !slices.Equal(r.Init(7), m.Init(7)) || !slices.Equal(paramNames(r), paramNames(m)) {
				t.Errorf("the rebuilt network's parameters %v differ from %v", paramNames(r), paramNames(m))
			}
			sameTraining(t, "the spec rebuilt", m, params, r, params, b)
			if len(spec.Layers) != len(m.(*classifier).net.layers) {
				t.Errorf("spec of %d layers, the network has %d", len(spec.Layers), len(m.(*classifier).net.layers))
			}

			ls, err := Summarize(m)
			if err != nil {
				t.Fatal(err)
			}
			sum := 0
			for i, l := range ls {
				sum += l.Params
				if !slices.Equal(l.Shape, m.(*classifier).net.shapes[i+1]) {
					t.Errorf("%s: shape %v, the Net's %v", l.Name, l.Shape, m.(*classifier).net.shapes[i+1])
				}
				if want, ok := c.summary[l.Name]; ok {
					if got := fmt.Sprintf("%s %d", l.Op, l.Params); got != want {
						t.Errorf("%s: summary %q, want %q", l.Name, got, want)
					}
					delete(c.summary, l.Name)
				}
			}
			if len(c.summary) > 0 {
				t.Errorf("Summarize lists none of %v", c.summary)
			}
			if sum != m.NumParams() {
				t.Errorf("layers' parameters add up to %d, the model has %d", sum, m.NumParams())
			}
			var w bytes.Buffer
			if err := WriteSummary(&w, m); err != nil {
				t.Fatal(err)
			}
			if lines := strings.Count(w.String(), "\n"); lines != len(ls)+2 {
				t.Errorf("%d lines, want a heading, a header and %d layers:\n%s", lines, len(ls), w.String())
			}
		})
	}
}

// paramNames returns the names of m's parameter tensors with their shapes.
func paramNames(m Model) []string {
	var s []string
	for _, p := range m.Params() {
		s = append(s, p.Name+"["+joinInts(p.Shape)+"]")
	}
	return s
}
