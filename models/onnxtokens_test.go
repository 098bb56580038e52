package models

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/internal/kernels/kernelstest"
	"github.com/gtstorm/gtstorm/internal/onnx"
)

// TestTokenNetsRoundTrip exports the token networks built in Go and the
// imported ViT and MLP-Mixer fixtures (after three SGD steps) and imports
// the export: the same layers, training bit for bit as the original.
func TestTokenNetsRoundTrip(t *testing.T) {
	built := map[string]func() (Model, error){"vit": vitNet, "mixer": mixerNet, "oddtokens": oddTokensNet,
		"patches": patchesNet(PatchesPixelMajor), "patches_cm": patchesNet(PatchesChannelMajor), "rangesub": rangeSubNet, "fixup": fixupNet, "cct": cctNet, "resmlp": resMLPNet, "glu": gluNet, "cosine": cosineNet, "lrn": lrnNet}
	for _, name := range []string{"vit", "mixer", "oddtokens", "patches", "patches_cm", "rangesub", "fixup", "cct", "resmlp", "glu", "cosine", "lrn", "vit_tiny", "mixer_tiny", "vit_chunked", "vit_encoder", "vit_seqfirst", "vit_variants", "vit_patches", "poolformer_tiny", "fixup_tiny", "cct_tiny", "resmlp_tiny", "gmlp_tiny", "cct_shi", "cosine_head", "lrn_cnn"} {
		t.Run(name, func(t *testing.T) {
			var m Model
			var x0 []float32
			if build, ok := built[name]; ok {
				var err error
				if m, err = build(); err != nil {
					t.Fatal(err)
				}
				x0 = tokenParams(m, 5)
			} else {
				m, x0 = importFixture(t, name)
			}
			shape, classes, _ := Classifier(m)
			b := batchOf(imageSet(17, 6, classes, true, shape...), seq(6)...)
			params := sgdSteps(t, m, x0, b, 3)
			_, enc := marshalONNX(t, m, params)
			im, _ := roundTrips(t, name, m, params, enc, b)
			want, _ := specJSON(t, m)
			got, _ := specJSON(t, im)
			if len(got.Layers) != len(want.Layers) {
				t.Fatalf("the export imports as %d layers, want %d", len(got.Layers), len(want.Layers))
			}
			for i := range want.Layers {
				if got.Layers[i].Op != want.Layers[i].Op {
					t.Errorf("layer %d of the imported export is %s, want %s", i, got.Layers[i].Op, want.Layers[i].Op)
				}
			}
		})
	}
}

// sgdSteps returns x0 after steps SGD steps (rate 0.5) of m on windows
// of three samples of b.
func sgdSteps(t *testing.T, m Model, x0 []float32, b data.Batch, steps int) []float32 {
	t.Helper()
	w := newWorker(t, m)
	params, g := slices.Clone(x0), make([]float32, len(x0))
	for step := range steps {
		if _, err := w.Grad(params, batchOf(b.Data, step, step+1, step+2), g); err != nil {
			t.Fatal(err)
		}
		for i := range params {
			params[i] -= float32(0.5 * g[i])
		}
	}
	return params
}

// TestImportTokensRefused mutates the torch fixtures' token patterns: each
// mutation is refused in one line naming what the import takes there.
func TestImportTokensRefused(t *testing.T) {
	for _, c := range []struct {
		file, what string
		mutate     func(*onnx.Model) bool // reports whether it found its node
		want       string
	}{
		{"vit_tiny", "softmax over the queries", func(m *onnx.Model) bool {
			return setIntAttr(m, "Softmax", "axis", 2)
		}, "Softmax of an attention's scores over axis 2"},
		{"vit_tiny", "qkv permuted otherwise", func(m *onnx.Model) bool {
			return setPerm(m, []int64{2, 0, 3, 1, 4}, []int64{2, 0, 1, 3, 4})
		}, "the import takes an attention written as timm's"},
		{"vit_tiny", "a negative scale", func(m *onnx.Model) bool {
			return scaleConstant(m, -1)
		}, "want the scale, one value above 0"},
		{"vit_tiny", "the class token after the tokens", func(m *onnx.Model) bool {
			for i, n := range m.Graph.Nodes {
				if n.OpType == "Concat" && len(n.Inputs) == 2 && strings.Contains(n.Inputs[0], "Expand") {
					m.Graph.Nodes[i].Inputs[0], m.Graph.Nodes[i].Inputs[1] = n.Inputs[1], n.Inputs[0]
					return true
				}
			}
			return false
		}, "the import takes class tokens (Expand of a constant [1,1,D]) first"},
		{"vit_tiny", "sequence-first tokens", func(m *onnx.Model) bool {
			return setPerm(m, []int64{0, 2, 1}, []int64{1, 0, 2})
		}, "the tokens [N,16,16] (a patch embedding flattened); the import takes there Transpose perm [0,2,1]"},
		{"vit_chunked", "an empty slice of the features", func(m *onnx.Model) bool {
			for i, n := range m.Graph.Nodes {
				if n.OpType == "Slice" && strings.Contains(n.Inputs[0], "to_qkv") {
					m.Graph.Nodes[i].Inputs[2] = n.Inputs[1] // ends = starts: nothing
					return true
				}
			}
			return false
		}, "slices no feature of the tokens [N,17,48] (starts [0], ends [0])"},
		{"vit_encoder", "nn.MultiheadAttention's keys transposed otherwise", func(m *onnx.Model) bool {
			return setPerm(m, []int64{1, 2, 0}, []int64{2, 1, 0})
		}, "the import takes an attention written as timm's"},
		{"vit_encoder", "nn.MultiheadAttention's out_proj scaled", func(m *onnx.Model) bool {
			for i, n := range m.Graph.Nodes {
				for k, a := range n.Attrs {
					if n.OpType == "Gemm" && strings.Contains(n.Name, "self_attn") && a.Name == "alpha" {
						m.Graph.Nodes[i].Attrs[k].F = 2
						return true
					}
				}
			}
			return false
		}, "alpha 2, beta 1, transA 0: want 1, 1, 0"},
		{"vit_patches", "patches transposed in neither order", func(m *onnx.Model) bool {
			return setPerm(m, []int64{0, 2, 4, 3, 5, 1}, []int64{0, 2, 4, 5, 3, 1})
		}, "with perm [0 2 4 5 3 1]; the import takes there perm [0 2 4 3 5 1] (einops' (p1 p2 c)) or [0 2 4 1 3 5] ((c p1 p2))"},
		{"vit_patches", "patches that do not tile the image", func(m *onnx.Model) bool { // h//2, w//8: [N,3,8,4,2,4]
			return setIntConstant(m, "/Constant_4_output_0", 2) && setIntConstant(m, "/Constant_5_output_0", 8)
		}, "reshapes the image [N,3,16,16] to [N,3,8,4,2,4]; the import takes a Reshape of an image to 6 dimensions only as a patchify's"},
		{"vit_patches", "patches reshaped without their Transpose", func(m *onnx.Model) bool {
			return setInput(m, "/Reshape_1", 0, "/Reshape_output_0")
		}, "reshapes a patchify's Reshape to [N,C,h,p1,w,p2] again; the import takes there Transpose perm [0 2 4 3 5 1] or [0 2 4 1 3 5]"},
		{"mixer_tiny", "a token-mixing bias of the wrong length", func(m *onnx.Model) bool {
			for i, init := range m.Graph.Initializers {
				if init.Name == "blocks.0.mlp_tokens.fc1.bias" {
					m.Graph.Initializers[i].Floats, m.Graph.Initializers[i].Dims = init.Floats[:5], []int64{5}
					return true
				}
			}
			return false
		}, "to a MatMul of the tokens by [16,8]; want its bias [8]"},
		{"cct_tiny", "a SeqPool's softmax over the features", func(m *onnx.Model) bool {
			for i, n := range m.Graph.Nodes {
				if n.OpType == "Softmax" && strings.Contains(n.Inputs[0], "attention_pool") {
					m.Graph.Nodes[i].Attrs = []onnx.Attr{onnx.IntAttr("axis", 2)}
					return true
				}
			}
			return false
		}, "Softmax of the scores [N,64,1] over axis 2; want axis 1, the positions"},
		{"cct_tiny", "a SeqPool's weights not transposed", func(m *onnx.Model) bool {
			for i, n := range m.Graph.Nodes {
				if n.OpType == "Transpose" && strings.Contains(n.Inputs[0], "Softmax") {
					m.Graph.Nodes[i].Attrs = []onnx.Attr{onnx.IntsAttr("perm", 0, 1, 2)}
					return true
				}
			}
			return false
		}, "reads the softmax of the tokens' scores (a SeqPool's weights) as Transpose; the import takes Softmax of the scores [N,T,1] over axis 1"},
		{"vit_variants", "an einsum of the scores transposed", func(m *onnx.Model) bool {
			for i, n := range m.Graph.Nodes {
				for k, a := range n.Attrs {
					if n.OpType == "Einsum" && a.Name == "equation" && a.S == "bhid,bhjd->bhij" {
						m.Graph.Nodes[i].Attrs[k].S = "bhid,bhjd->bhji"
						return true
					}
				}
			}
			return false
		}, `Einsum "bhid,bhjd->bhji" of an attention's q, k or v and an attention's q, k or v; the import takes an attention's scores, "bhid,bhjd->bhij" of q and k, and products as MatMul's`},
		{"vit_variants", "every other patch token", func(m *onnx.Model) bool {
			for i, n := range m.Graph.Nodes {
				if n.OpType == "Slice" && strings.HasPrefix(n.Inputs[0], "/norm/") {
					m.Graph.Initializers = append(m.Graph.Initializers, onnx.Int64Tensor("two", []int64{2}, 1))
					m.Graph.Nodes[i].Inputs = append(n.Inputs[:4:4], "two")
					return true
				}
			}
			return false
		}, "slices the tokens [N,18,16] along their axis with starts [2], ends [9223372036854775807] and steps [2]; the import takes one range, step 1"},
		{"gmlp_tiny", "a spatial gating unit's Conv1d of two groups", func(m *onnx.Model) bool {
			for i, n := range m.Graph.Nodes {
				if n.Name == "/blocks/blocks.0/sgu/proj/Conv" {
					for k, a := range n.Attrs {
						if a.Name == "group" {
							m.Graph.Nodes[i].Attrs[k].I = 2
							return true
						}
					}
				}
			}
			return false
		}, `Conv of the channels-last tokens [N,16,32] by "blocks.0.sgu.proj.weight" of shape [16 16 1]; the import takes there nn.Conv1d(16, K, 1) along the tokens: weights [K,16,1], one group, stride 1, no padding`},
		{"gmlp_tiny", "every other feature of the tokens", func(m *onnx.Model) bool {
			for i, n := range m.Graph.Nodes {
				if n.Name == "/blocks/blocks.0/sgu/Slice" {
					m.Graph.Initializers = append(m.Graph.Initializers, onnx.Int64Tensor("two", []int64{2}, 1))
					m.Graph.Nodes[i].Inputs = append(n.Inputs[:4:4], "two")
					return true
				}
			}
			return false
		}, "slices the tokens [N,16,64] along axes [-1] with steps [2]; the import takes there one range of the last axis, step 1"},
		{"lrn_cnn", "a local response normalisation pooled over another window", func(m *onnx.Model) bool {
			for i, n := range m.Graph.Nodes {
				for k, a := range n.Attrs {
					if n.OpType == "AveragePool" && a.Name == "kernel_shape" {
						m.Graph.Nodes[i].Attrs[k].Ints = []int64{3, 1, 1}
						return true
					}
				}
			}
			return false
		}, "AveragePool of nn.LocalResponseNorm's squares padded by 2 and 1, pooled by kernel [3 1 1]"},
		{"lrn_cnn", "a local response normalisation of the squares unsqueezed elsewhere", func(m *onnx.Model) bool {
			for i, n := range m.Graph.Nodes {
				if n.OpType == "Unsqueeze" && strings.HasPrefix(n.Name, "/lrn1/") {
					m.Graph.Initializers = append(m.Graph.Initializers, onnx.Int64Tensor("axis2", []int64{2}, 1))
					m.Graph.Nodes[i].Inputs = []string{n.Inputs[0], "axis2"}
					return true
				}
			}
			return false
		}, "Unsqueeze of nn.LocalResponseNorm's x·x along axes [2]"},
		{"cosine_head", "a norm without its axis", func(m *onnx.Model) bool {
			return setIntAttr(m, "ReduceL2", "keepdims", 0)
		}, "ReduceL2 of [N,24] over axes [1] (keepdims 0); the import takes the norm of features [N,F] over axis 1, keepdims 1"},
		{"cosine_head", "a norm clipped above", func(m *onnx.Model) bool {
			for i, n := range m.Graph.Nodes {
				if n.OpType == "Clip" {
					m.Graph.Initializers = append(m.Graph.Initializers, onnx.FloatTensor("hi", []float32{5}))
					m.Graph.Nodes[i].Inputs = []string{n.Inputs[0], n.Inputs[1], "hi"}
					return true
				}
			}
			return false
		}, "Clip of a norm (F.normalize) to [1e-12, 5]; want a min ε above 0 and no max"},
		{"resmlp_tiny", "a trainable shift a token", func(m *onnx.Model) bool {
			for i, c := range m.Graph.Initializers {
				if c.Name == "norm.beta" {
					m.Graph.Initializers[i].Dims = []int64{16, 1}
					return true
				}
			}
			return false
		}, `trainable "norm.beta" (pattern *beta) of shape [16 1] adds the channels-last [N,16,16]; the import trains there one value or one a channel ([C])`},
	} {
		t.Run(c.what, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "onnx", c.file+".onnx"))
			if err != nil {
				t.Fatal(err)
			}
			m, err := onnx.Unmarshal(b)
			if err != nil {
				t.Fatal(err)
			}
			if !c.mutate(m) {
				t.Fatalf("%s: the node to mutate is not there", c.file)
			}
			_, _, err = importModel(c.file+".onnx", m, []int{3, 16, 16}, 10, fixtureOptions[c.file])
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s, %s: %v, want one line naming %q", c.file, c.what, err, c.want)
			}
		})
	}
}

// setIntAttr sets the int attribute name of the first node of type op.
func setIntAttr(m *onnx.Model, op, name string, v int64) bool {
	for i, n := range m.Graph.Nodes {
		if n.OpType != op {
			continue
		}
		for k, a := range n.Attrs {
			if a.Name == name {
				m.Graph.Nodes[i].Attrs[k].I = v
				return true
			}
		}
	}
	return false
}

// setPerm replaces the first Transpose's perm from by to.
func setPerm(m *onnx.Model, from, to []int64) bool {
	for i, n := range m.Graph.Nodes {
		for k, a := range n.Attrs {
			if n.OpType == "Transpose" && a.Name == "perm" && slices.Equal(a.Ints, from) {
				m.Graph.Nodes[i].Attrs[k].Ints = to
				return true
			}
		}
	}
	return false
}

// scaleConstant sets the value of the Constant that the first Mul after a
// MatMul of two activations reads: an attention's scale.
func scaleConstant(m *onnx.Model, v float32) bool {
	for _, n := range m.Graph.Nodes {
		if n.OpType != "Mul" || !strings.Contains(n.Inputs[0], "attn/MatMul") {
			continue
		}
		for i, c := range m.Graph.Nodes {
			if c.OpType == "Constant" && c.Outputs[0] == n.Inputs[1] && len(c.Attrs) == 1 && c.Attrs[0].T != nil {
				m.Graph.Nodes[i].Attrs[0].T.Floats = []float32{v}
				return true
			}
		}
	}
	return false
}

// envTokensChild makes the test binary print transformersDigest and exit
// (see TestTransformersSameBitsOnEveryKernelSet).
const envTokensChild = "GTSTORM_TEST_TRANSFORMERS_DIGEST"

// transformersDigest imports the ViT, MLP-Mixer, PoolFormer, Fixup, CCT
// (ours and SHI-Labs'), ResMLP and gMLP fixtures (timm's, lucidrains',
// nn.TransformerEncoderLayer's batch-first and sequence-first attention,
// Hugging Face's and einsum's, a patchify, trainable scalars, SeqPool, a
// trainable shift a channel, spatial gating and SwiGLU) and digests every
// bit of each one's gradient and loss on a batch at the file's weights,
// and its evaluation after a step.
func transformersDigest(t testing.TB) string {
	h := sha256.New()
	for _, name := range []string{"vit_tiny", "mixer_tiny", "vit_chunked", "vit_encoder", "vit_seqfirst", "vit_variants", "vit_patches", "poolformer_tiny", "fixup_tiny", "cct_tiny", "resmlp_tiny", "gmlp_tiny", "cct_shi"} {
		m, x0, err := ImportONNXFileWith(filepath.Join("testdata", "onnx", name+".onnx"), []int{3, 16, 16}, 10, fixtureOptions[name])
		if err != nil {
			t.Fatal(err)
		}
		d := imageSet(41, 6, 10, true, 3, 16, 16)
		w := newWorker(t, m)
		loss, g := grad(t, w, x0, batchOf(d, seq(6)...))
		binary.Write(h, binary.LittleEndian, math.Float32bits(loss))
		for _, v := range g {
			binary.Write(h, binary.LittleEndian, math.Float32bits(v))
		}
		for j := range x0 {
			x0[j] -= float32(0.05 * g[j]) // converted: no fused multiply-add on arm64
		}
		sum, correct, err := w.Eval(x0, batchOf(d, seq(6)...))
		if err != nil {
			t.Fatal(err)
		}
		binary.Write(h, binary.LittleEndian, math.Float64bits(sum))
		binary.Write(h, binary.LittleEndian, int64(correct))
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestTransformersSameBitsOnEveryKernelSet runs the imported transformers'
// gradients in a child process per kernel set and checks that every set
// gives the recorded bits, wantTransformersDigest, the same on every
// architecture (.ci/run runs it on arm64 under qemu too).
func TestTransformersSameBitsOnEveryKernelSet(t *testing.T) {
	digests, parent := kernelstest.Digests(t, "TestTransformersSameBitsOnEveryKernelSet", envTokensChild, transformersDigest)
	if !parent {
		return
	}
	for set, d := range digests {
		if d != wantTransformersDigest {
			t.Errorf("kernel set %s on %s: digest %s, want %s (pure Go: %s)", set, runtime.GOARCH, d, wantTransformersDigest, digests["go"])
		}
	}
}

// wantTransformersDigest is transformersDigest's value on every
// architecture and kernel set; a change that moves it must record the new
// value here, from the pure-Go set on amd64.
const wantTransformersDigest = "e348de69fc55ff9c678639d113ecf445244933acea87d24c6b46455bff8814c9"

// TestImportTokenViewResidual imports a token mixing whose residual join
// is written on the token view [N,D,T] (x + mlp(x) before the transpose):
// the patch embedding's image and the Linear's output are added as the
// token image, giving the logits of the Net written by hand.
func TestImportTokenViewResidual(t *testing.T) {
	w, b := ramp(16*8, 0.3), ramp(8, 0.9)
	w2, b2 := ramp(8*16, 1.7), ramp(16, 2.1)
	fw, fb := ramp(2*4, 1), ramp(2, 2)
	enc := tinyONNX(t, 13, batchN, []onnx.Tensor{onnx.FloatTensor("cw", ramp(36, 0), 4, 1, 3, 3),
		onnx.Int64Tensor("flat", []int64{0, 4, 16}, 3), onnx.FloatTensor("w", w, 16, 8), onnx.FloatTensor("b", b, 8),
		onnx.FloatTensor("w2", w2, 8, 16), onnx.FloatTensor("b2", b2, 16), onnx.Int64Tensor("axes", []int64{1}, 1),
		onnx.FloatTensor("fw", fw, 2, 4), onnx.FloatTensor("fb", fb, 2)},
		node("Conv", []string{"x", "cw"}, "c", onnx.IntsAttr("pads", 1, 1, 1, 1)), // [N,4,4,4]
		node("Reshape", []string{"c", "flat"}, "r"),                               // the tokens [N,4,16]
		node("MatMul", []string{"r", "w"}, "m"), node("Add", []string{"m", "b"}, "mb"), node("Relu", []string{"mb"}, "h"),
		node("MatMul", []string{"h", "w2"}, "m2"), node("Add", []string{"b2", "m2"}, "o"),
		node("Add", []string{"r", "o"}, "s"), // the residual on the token view
		node("Transpose", []string{"s"}, "l", onnx.IntsAttr("perm", 0, 2, 1)),
		node("ReduceMean", []string{"l", "axes"}, "p", onnx.IntAttr("keepdims", 0)),
		node("Gemm", []string{"p", "fw", "fb"}, "y", onnx.IntAttr("transB", 1)))
	m, x0, err := ImportONNX("residual", enc, []int{1, 4, 4}, 2)
	if err != nil {
		t.Fatal(err)
	}
	n := NewNet("residual", []int{1, 4, 4}, 2)
	x := n.Conv2D("c", n.Input(), Conv{Out: 4, Kernel: 3, Pad: 1})
	h := n.TokenLinear("m2", n.ReLU(n.TokenLinear("m", x, 8, false)), 16, false)
	want, err := n.Model(n.Dense("y", n.GlobalAvgPool(n.Add(n.Tokens(x), h)), 2))
	if err != nil {
		t.Fatal(err)
	}
	params := slices.Concat(ramp(36, 0), w, b, w2, b2, transpose2(&iconst{dims: []int{2, 4}, float: true, f: fw}).f, fb)
	bt := batchOf(imageSet(3, 5, 2, true, 1, 4, 4), seq(5)...)
	got, err1 := Logits(m, x0, bt)
	exp, err2 := Logits(want, params, bt)
	if err1 != nil || err2 != nil || !slices.Equal(got, exp) {
		t.Errorf("logits %v (%v), want the Net's %v (%v)", got, err1, exp, err2)
	}
}
