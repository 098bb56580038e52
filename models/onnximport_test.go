package models

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/data"
)

// The ONNX import against PyTorch (issue 31, item 5): testdata/onnx holds
// networks torch.onnx.export wrote (make_fixtures.py, Debian's torch 1.13,
// opset 13) and, for the supported ones, a batch with torch's logits, loss
// and gradient. The tests read the committed files; they need no torch.

// onnxFixture is the header of testdata/onnx/NAME.bin (make_fixtures.py)
// and its payload.
type onnxFixture struct {
	ONNXFile string `json:"onnx_file"`
	Torch    string `json:"torch"`
	Shape    []int  `json:"shape"`
	Classes  int    `json:"classes"`
	Batch    int    `json:"batch"`
	Labels   []int  `json:"labels"`
	Images   struct {
		Offset int `json:"offset"`
		Bytes  int `json:"bytes"`
	} `json:"images"`
	InputSHA256  string  `json:"input_sha256"`
	LogitsOffset int     `json:"logits_offset"`
	Loss         float64 `json:"loss"`
	Loss64       float64 `json:"loss_float64"`
	GradNorm     float64 `json:"grad_norm"`
	GradNorm64   float64 `json:"grad_norm_float64"`
	Tensors      []struct {
		Name       string  `json:"name"`
		Shape      []int   `json:"shape"`
		GradOffset int     `json:"grad_offset"`
		GradCount  int     `json:"grad_count"`
		GradSumSq  float64 `json:"grad_sumsq"`
		GradMaxAbs float64 `json:"grad_max_abs"`
		// GradF64Offset, where not 0, holds the float64 gradient rounded
		// to float32: the reference where it is there (make_fixtures.py's
		// GRAD64).
		GradF64Offset int `json:"grad_f64_offset"`
	} `json:"tensors"`
	payload []byte
}

func readONNXFixture(t *testing.T, name string) *onnxFixture {
	t.Helper()
	path := filepath.Join("testdata", "onnx", name+".bin")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: the committed fixture is missing (make it with /usr/bin/python3 models/testdata/onnx/make_fixtures.py)", err)
	}
	if len(b) < len(torchMagic)+4 || string(b[:len(torchMagic)]) != torchMagic {
		t.Fatalf("%s: no %q magic", path, torchMagic)
	}
	n, start := int(binary.LittleEndian.Uint32(b[len(torchMagic):])), len(torchMagic)+4
	if n > len(b)-start {
		t.Fatalf("%s: header of %d bytes in a file of %d", path, n, len(b))
	}
	f := &onnxFixture{payload: b[start+n:]}
	if err := json.NewDecoder(bytes.NewReader(b[start : start+n])).Decode(f); err != nil {
		t.Fatalf("%s: header: %v", path, err)
	}
	end := f.LogitsOffset + 4*f.Batch*f.Classes
	for _, e := range f.Tensors {
		end = max(end, e.GradOffset+4*e.GradCount, e.GradF64Offset+4*e.GradCount)
	}
	if end > len(f.payload) || f.Images.Offset+f.Images.Bytes > len(f.payload) || len(f.Labels) != f.Batch {
		t.Fatalf("%s: payload of %d bytes, the header points to %d", path, len(f.payload), end)
	}
	return f
}

func (f *onnxFixture) floats(offset, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(f.payload[offset+4*i:]))
	}
	return v
}

// batch returns the fixture's batch, fed as gtstorm feeds bytes.
func (f *onnxFixture) batch(t *testing.T) data.Batch {
	d := &data.Dataset{Name: "onnx-fixture", Shape: f.Shape, Classes: f.Classes,
		Bytes: f.payload[f.Images.Offset : f.Images.Offset+f.Images.Bytes]}
	for _, l := range f.Labels {
		d.Labels = append(d.Labels, uint8(l))
	}
	b := batchOf(d, seq(f.Batch)...)
	if got := sha256Floats(denseInputs(b)); got != f.InputSHA256 {
		t.Fatalf("data.Dataset.Dense gives an input of SHA-256 %s, torch read %s", got, f.InputSHA256)
	}
	return b
}

// torchFixtures are the ONNX files of testdata/onnx that
// make_fixtures.py writes with torch's gradient beside them (NAME.bin):
// the networks every import test runs.
var torchFixtures = []string{"gn_resnet", "mlp_dropout", "pad_cnn", "avgpool_exclude_pad", "linear_nobias", "mnist_example", "activations",
	"concat_cnn", "concat_mlp", "normalized_input", "silu", "ceil_pool", "mobilenet_block", "se_head", "activations2", "shuffle_block", "layernorm", "factorized_conv", "same_pad", "prelu", "convnext_block", "global_max", "convnext_tv",
	"vit_tiny", "mixer_tiny", "vit_chunked", "vit_encoder", "vit_seqfirst", "vit_variants", "vit_patches",
	"poolformer_tiny", "fixup_tiny", "cct_tiny", "gn_swap", "resmlp_tiny", "gmlp_tiny", "cct_shi", "cosine_head", "lrn_cnn"}

// importFixture imports testdata/onnx/name.onnx on the shape and classes
// its NAME.bin records, or MNIST's where it has none.
func importFixture(t *testing.T, name string) (Model, []float32) {
	t.Helper()
	shape, classes := []int{1, 28, 28}, 10
	if _, err := os.Stat(filepath.Join("testdata", "onnx", name+".bin")); err == nil {
		f := readONNXFixture(t, name)
		shape, classes = f.Shape, f.Classes
	}
	m, x0, err := ImportONNXFileWith(filepath.Join("testdata", "onnx", name+".onnx"), shape, classes, fixtureOptions[name])
	if err != nil {
		t.Fatal(err)
	}
	return m, x0
}

// fixtureOptions are the import options of the fixtures that need some:
// PoolFormer's layer scales are parameters torch trains, which the file
// cannot say.
var fixtureOptions = map[string]ImportOptions{"poolformer_tiny": {Trainable: []string{"layer_scale*"}},
	"fixup_tiny": {Trainable: []string{"bias*", "scale", "alpha"}}, "resmlp_tiny": {Trainable: []string{"*beta"}}}

// torchZeroGrad bounds, relative to the gradient's norm, the coordinates of
// a tensor whose float64 gradient is 0 but for rounding.
const torchZeroGrad = 1e-6

// TestImportONNXMatchesTorch imports each supported fixture and checks, on
// the file's weights and the fixture's batch, that gtstorm gives torch's
// logits (within 1e-4·max(1,|z|)), loss (1e-5 relative) and gradient: its
// norm within 1e-4 relative, each coordinate within 1e-3 relative where
// |g| exceeds 1e-3·max|g| of its tensor (and 1e-4·max|g| absolute
// everywhere); where the fixture holds torch's float64 gradient, against
// that, and a tensor whose float64 gradient is 0 but for rounding must be
// as small in gtstorm. Torch's tensors are matched to gtstorm's in order: a
// Linear's weight [out,in] is gtstorm's [in,out], transposed.
func TestImportONNXMatchesTorch(t *testing.T) {
	for _, name := range torchFixtures {
		t.Run(name, func(t *testing.T) {
			f := readONNXFixture(t, name)
			m, x0 := importFixture(t, name)
			// torch's gradient is in eval mode: Dropout the identity.
			m = withoutDropout(t, m)
			b := f.batch(t)
			z, err := Logits(m, x0, b)
			if err != nil {
				t.Fatal(err)
			}
			if name == "mnist_example" {
				// torch's output is log_softmax of the logits the import ends at.
				z = logSoftmaxRows(z, f.Classes)
			}
			var zErr float64
			for i, w := range f.floats(f.LogitsOffset, f.Batch*f.Classes) {
				zErr = math.Max(zErr, math.Abs(float64(z[i]-w))/math.Max(1, math.Abs(float64(w))))
			}
			loss, g := grad(t, newWorker(t, m), x0, b)
			ps := m.Params()
			if len(ps) != len(f.Tensors) {
				t.Fatalf("%d tensors, torch has %d", len(ps), len(f.Tensors))
			}
			byName := map[string]int{}
			for i, e := range f.Tensors {
				// nn.MultiheadAttention's in_proj_weight and in_proj_bias
				// are its in_proj Linear's.
				e.Name = strings.NewReplacer("in_proj_weight", "in_proj.weight", "in_proj_bias", "in_proj.bias").Replace(e.Name)
				f.Tensors[i].Name = e.Name
				byName[torchToGtstorm(e.Name, ps)] = i
			}
			var sumSq, torchSumSq, worst float64
			for i, p := range ps {
				k, ok := byName[p.Name]
				if !ok {
					t.Fatalf("tensor %d: torch has no %s", i, p.Name)
				}
				e := f.Tensors[k]
				want := f.floats(e.GradOffset, e.GradCount)
				if e.GradF64Offset > 0 {
					want = f.floats(e.GradF64Offset, e.GradCount)
					e.GradMaxAbs, e.GradSumSq = 0, 0
					for _, v := range want {
						e.GradMaxAbs, e.GradSumSq = math.Max(e.GradMaxAbs, math.Abs(float64(v))), e.GradSumSq+float64(v)*float64(v)
					}
				}
				if strings.HasSuffix(e.Name, ".weight") && len(e.Shape) == 4 && e.Shape[2]*e.Shape[3] == 1 && len(p.Shape) == 2 {
					e.Shape = e.Shape[:2] // a 1×1 Conv on a global pool's output: a dense layer, transposed below
				}
				if strings.HasSuffix(p.Name, ".g") && len(e.Shape) == 3 && e.Shape[1]*e.Shape[2] == 1 && len(p.Shape) == 1 {
					e.Shape = e.Shape[:1] // torchvision's layer scale [C,1,1], LayerScale's [C]
				}
				if strings.HasSuffix(p.Name, ".c") || strings.HasSuffix(p.Name, ".p") {
					// ViT's cls_token [1,1,D] and pos_embed [1,T,D] (sequence-first, [T,1,D])
					e.Shape = slices.DeleteFunc(slices.Clone(e.Shape), func(d int) bool { return d == 1 })
				}
				if strings.HasSuffix(e.Name, ".weight") && len(e.Shape) == 3 && e.Shape[2] == 1 && len(p.Shape) == 2 {
					e.Shape = e.Shape[:2] // nn.Conv1d(T, K, 1) along the tokens: TokenLinear, a Linear's [K,T]
				}
				if strings.HasSuffix(e.Name, ".weight") && len(e.Shape) == 2 && len(p.Shape) == 4 && p.Shape[2]*p.Shape[3] == 1 && slices.Equal(e.Shape, p.Shape[:2]) {
					e.Shape = p.Shape // nn.Linear on a channels-last tensor: a 1×1 Conv, torch's [out,in] layout
				} else if strings.HasSuffix(e.Name, ".weight") && len(e.Shape) == 2 {
					want = transpose2(&iconst{dims: e.Shape, float: true, f: want}).f
					e.Shape = []int{e.Shape[1], e.Shape[0]}
				}
				if !slices.Equal(e.Shape, p.Shape) {
					t.Fatalf("tensor %d: %s %v in gtstorm, torch's %s %v", i, p.Name, p.Shape, e.Name, e.Shape)
				}
				got := g[p.Offset : p.Offset+p.Size()]
				var s, gotMax float64
				for _, v := range got {
					s += float64(v) * float64(v)
					gotMax = math.Max(gotMax, math.Abs(float64(v)))
				}
				sumSq, torchSumSq = sumSq+s, torchSumSq+e.GradSumSq
				if zero := torchZeroGrad * f.GradNorm64; e.GradF64Offset > 0 && e.GradMaxAbs <= zero {
					// A gradient that is 0 but for rounding in float64:
					// gtstorm's must be as small (relative errors of
					// rounding noise mean nothing).
					if !(gotMax <= zero) {
						t.Errorf("%s (torch %s): max|g| %g, want ≤ %g (float64's is %g: 0 but for rounding)", p.Name, e.Name, gotMax, zero, e.GradMaxAbs)
					}
					continue
				}
				c := compareTorchTensor(torchTensor{Name: p.Name, GradMaxAbs: e.GradMaxAbs, GradSumSq: e.GradSumSq}, got, want, s)
				worst = math.Max(worst, c.maxRel)
				for _, msg := range c.failed {
					t.Errorf("%s (torch %s): %s", p.Name, e.Name, msg)
				}
			}
			lossRel := math.Abs(float64(loss)-f.Loss) / f.Loss
			normRel := math.Abs(math.Sqrt(sumSq)-math.Sqrt(torchSumSq)) / math.Sqrt(torchSumSq)
			t.Logf("%s (torch %s): %d parameters; logits within %.2e; loss %.9g, torch %.9g (rel %.2e); |grad| %.9g, torch %.9g (rel %.2e); max rel. error per coordinate %.2e",
				name, f.Torch, m.NumParams(), zErr, loss, f.Loss, lossRel, math.Sqrt(sumSq), math.Sqrt(torchSumSq), normRel, worst)
			if !(zErr <= onnxrtTol) || !(lossRel <= torchLossTol) || !(normRel <= torchNormTol) {
				t.Errorf("logits error %.3g (want ≤ %g), loss error %.3g (≤ %g), gradient norm error %.3g (≤ %g)", zErr, onnxrtTol, lossRel, torchLossTol, normRel, torchNormTol)
			}
		})
	}
}

// withoutDropout returns m rebuilt from its spec with every Dropout's rate
// 0: the identity, as in torch's eval mode.
func withoutDropout(t *testing.T, m Model) Model {
	t.Helper()
	s, err := Spec(m)
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Layers {
		s.Layers[i].Rate = 0
	}
	r, err := NetFromSpec(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// torchToGtstorm returns the name gtstorm's import gives torch's
// parameter name: a module's weight is .w (.g for a GroupNorm's scale), its
// bias .b; a bare nn.Parameter used in a MatMul names its layer (w2 →
// w2.w), and the one added to it is that layer's bias (b2 → w2.b).
func torchToGtstorm(name string, ps []Param) string {
	if base, ok := strings.CutSuffix(name, ".weight"); ok {
		if slices.ContainsFunc(ps, func(p Param) bool { return p.Name == base+".g" }) {
			return base + ".g"
		}
		if slices.ContainsFunc(ps, func(p Param) bool { return p.Name == base+".a" }) {
			return base + ".a" // nn.PReLU's slopes
		}
		return base + ".w"
	}
	if base, ok := strings.CutSuffix(name, ".bias"); ok {
		return base + ".b"
	}
	if g, ok := map[string]string{"w2": "w2.w", "b2": "w2.b"}[name]; ok {
		return g // mlp_dropout's h @ w2 + b2
	}
	for _, suffix := range []string{".g", ".c", ".p", ".s", ".b"} {
		if slices.ContainsFunc(ps, func(p Param) bool { return p.Name == name+suffix }) {
			return name + suffix // a layer scale's gamma, a class token, a position embedding, a scalar
		}
	}
	return ""
}

// TestImportONNXSpecRoundTrip stores an imported network as a NetSpec
// (JSON, as a model file holds it) and rebuilds it: the same layout and
// the same logits, bit for bit.
func TestImportONNXSpecRoundTrip(t *testing.T) {
	for _, name := range append(slices.Clone(torchFixtures), "sigmoid") {
		m, x0 := importFixture(t, name)
		spec, js := specJSON(t, m)
		_, r := fromSpecJSON(t, js)
		if r.Name() != m.Name() || fmt.Sprint(r.Params()) != fmt.Sprint(m.Params()) {
			t.Fatalf("%s: rebuilt %s %v, want %s %v", name, r.Name(), r.Params(), m.Name(), m.Params())
		}
		shape, _, _ := Classifier(m)
		b := batchOf(imageSet(3, 4, 10, false, shape...), seq(4)...)
		z1, err1 := Logits(m, x0, b)
		z2, err2 := Logits(r, x0, b)
		if err1 != nil || err2 != nil || !slices.Equal(z1, z2) {
			t.Errorf("%s: logits of the rebuilt network differ (%v, %v)", name, err1, err2)
		}
		t.Logf("%s: spec of %d layers, %d bytes of JSON", name, len(spec.Layers), len(js))
	}
	for _, c := range []struct {
		spec NetSpec
		want string
	}{
		{NetSpec{Name: "x", Shape: []int{1, 4, 4}, Classes: 2}, "0 layers"},
		{NetSpec{Name: "x", Shape: []int{1, 4, 4}, Classes: 2, Layers: []LayerSpec{{Op: "relu", In: []int{3}}}}, "not made before it"},
		{NetSpec{Name: "x", Shape: []int{1, 4, 4}, Classes: 2, Layers: []LayerSpec{{Op: "softmax", In: []int{0}}}}, `unknown op "softmax"`},
		{NetSpec{Name: "x", Shape: []int{1, 4, 4}, Classes: 2, Layers: []LayerSpec{{Op: "dense", Name: "fc", In: []int{0}, Units: 3}}}, "want the 2 class logits"},
		{NetSpec{Name: "x", Shape: []int{1, 4, 4}, Classes: 2, Layers: []LayerSpec{{Op: "conv", Name: "c", In: []int{0}, Out: 2, Kernel: 9, Init: "uniform"}}}, "does not fit"},
	} {
		if _, err := NetFromSpec(c.spec); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NetFromSpec(%+v): %v, want %q", c.spec, err, c.want)
		}
	}
}

// logSoftmaxRows returns log_softmax of each row of k logits, in float64.
func logSoftmaxRows(z []float32, k int) []float32 {
	out := make([]float32, len(z))
	for r := 0; r < len(z); r += k {
		row := z[r : r+k]
		hi := float64(slices.Max(row))
		var sum float64
		for _, v := range row {
			sum += math.Exp(float64(v) - hi)
		}
		lse := hi + math.Log(sum)
		for j, v := range row {
			out[r+j] = float32(float64(v) - lse)
		}
	}
	return out
}

// TestTorchFixturesListed checks that torchFixtures names every fixture
// make_fixtures.py wrote with torch's gradient (testdata/onnx/*.bin), so
// that none is left out of the import tests.
func TestTorchFixturesListed(t *testing.T) {
	bins, err := filepath.Glob(filepath.Join("testdata", "onnx", "*.bin"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range bins {
		names = append(names, strings.TrimSuffix(filepath.Base(b), ".bin"))
	}
	want := slices.Sorted(slices.Values(torchFixtures))
	if slices.Sort(names); !slices.Equal(names, want) {
		t.Errorf("testdata/onnx holds the fixtures %v, torchFixtures lists %v", names, want)
	}
}

// TestScopeOf checks the module paths read from torch's node names, which
// name the imported layers as torch's state_dict does.
func TestScopeOf(t *testing.T) {
	for node, want := range map[string]string{
		"/layer1/layer1.0/conv1/Conv":                            "layer1.0.conv1",
		"/block/block/block.3/MatMul":                            "block.block.3",
		"/features/features.1/features.1.0/block/block.3/MatMul": "features.1.0.block.3",
		"/fc/Gemm":    "fc",
		"/Flatten":    "",
		"Conv_0":      "",
		"//a//b/Relu": "a.b",
	} {
		if got := scopeOf(node); got != want {
			t.Errorf("scopeOf(%q) = %q, want %q", node, got, want)
		}
	}
}
