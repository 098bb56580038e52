package models

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The exports run in onnxruntime (issue 31: "onnxruntime gives eval's
// logits"): Microsoft's ONNX runtime, through npm's onnxruntime-node, which
// testdata/onnxrt/package.json pins and testdata/onnxrt/run.js drives.
// .ci/run installs it into $XDG_CACHE_HOME/gtstorm/onnxrt (by default
// ~/.cache/gtstorm/onnxrt) and sets GTSTORM_REQUIRE_ONNXRUNTIME=1 when the
// install succeeded, so that the test fails rather than skips there.

// onnxrtTol bounds |onnxruntime − Logits| by onnxrtTol·max(1, |logit|).
const onnxrtTol = 1e-4

// onnxRuntime returns node and the node_modules folder that holds
// onnxruntime-node, or skips the test saying what is missing (fails it
// under GTSTORM_REQUIRE_ONNXRUNTIME=1).
func onnxRuntime(t *testing.T) (node, modules string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...) + "; install it with: d=${XDG_CACHE_HOME:-$HOME/.cache}/gtstorm/onnxrt; mkdir -p $d && cp models/testdata/onnxrt/package*.json $d && (cd $d && ONNXRUNTIME_NODE_INSTALL=skip npm ci)"
		if os.Getenv("GTSTORM_REQUIRE_ONNXRUNTIME") == "1" {
			t.Fatalf("%s (GTSTORM_REQUIRE_ONNXRUNTIME=1: required)", msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("no node on PATH (onnxruntime-node runs the exports)")
	}
	var dirs []string
	if d := os.Getenv("GTSTORM_ONNXRUNTIME_DIR"); d != "" {
		dirs = append(dirs, d)
	}
	if cache, err := os.UserCacheDir(); err == nil {
		dirs = append(dirs, filepath.Join(cache, "gtstorm", "onnxrt"))
	}
	dirs = append(dirs, filepath.Join("testdata", "onnxrt"))
	for _, d := range dirs {
		m := filepath.Join(d, "node_modules")
		if _, err := os.Stat(filepath.Join(m, "onnxruntime-node", "package.json")); err == nil {
			modules, err = filepath.Abs(m)
			if err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if modules == "" {
		missing("onnxruntime-node is not installed in any of %s", strings.Join(dirs, ", "))
	}
	cmd := exec.Command(node, "-e", `require("onnxruntime-node")`)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	if out, err := cmd.CombinedOutput(); err != nil {
		missing("onnxruntime-node in %s does not load: %v\n%s", modules, err, out)
	}
	return node, modules
}

// runOnnxruntime runs the encoded model enc on x [shape...] in
// onnxruntime-node and returns its output and the shape it reports.
func runOnnxruntime(t *testing.T, node, modules string, enc []byte, x []float32, shape []int) ([]float32, []int) {
	t.Helper()
	dir := t.TempDir()
	model, in, out := filepath.Join(dir, "model.onnx"), filepath.Join(dir, "input.bin"), filepath.Join(dir, "logits.bin")
	if err := os.WriteFile(model, enc, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, float32Bytes(x), 0o644); err != nil {
		t.Fatal(err)
	}
	dims := make([]string, len(shape))
	for i, s := range shape {
		dims[i] = fmt.Sprint(s)
	}
	cmd := exec.Command(node, filepath.Join("testdata", "onnxrt", "run.js"), model, in, strings.Join(dims, ","), out)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	stdout, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("onnxruntime rejects or fails on the export: %v\n%s", err, stderr)
	}
	var report struct {
		Onnxruntime map[string]string `json:"onnxruntime"`
		Dims        []int             `json:"dims"`
		Type        string            `json:"type"`
	}
	if err := json.Unmarshal(stdout, &report); err != nil {
		t.Fatalf("run.js printed %q: %v", stdout, err)
	}
	if report.Type != "float32" {
		t.Fatalf("onnxruntime output of type %s, want float32", report.Type)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	z := make([]float32, len(b)/4)
	for i := range z {
		z[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	t.Logf("onnxruntime-node %s", report.Onnxruntime["node"])
	return z, report.Dims
}

func float32Bytes(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// TestONNXRuntimeMatchesLogits exports networks of every kind (the paper
// CNNs, an MLP, the FedAvg CNN and ResNet-GNs, whose GroupNorm is the
// Reshape–InstanceNormalization–Reshape–Mul–Add form) with ONNX, runs each
// export in onnxruntime and compares its logits with Logits, gtstorm's own
// forward pass (what eval computes). The weights are Init's, with
// GroupNorm's scale and shift moved off 1 and 0 (so that a transposed or
// misplaced γ or β shows) and the classifier scaled so that the logits
// reach a few units.
func TestONNXRuntimeMatchesLogits(t *testing.T) {
	skipShort(t)
	node, modules := onnxRuntime(t)
	for _, c := range []struct {
		name    string
		shape   []int
		classes int
	}{
		{"mnist-cnn", []int{1, 28, 28}, 10},
		{"cifar-cnn", []int{3, 32, 32}, 10},
		{"mlp:48,24", []int{1, 28, 28}, 10},
		{"fedavg-cnn", []int{1, 28, 28}, 62},
		{"resnet8-gn", []int{3, 16, 16}, 10},
		{"resnet20-gn", []int{3, 32, 32}, 10},
	} {
		t.Run(strings.ReplaceAll(c.name, ":", "_"), func(t *testing.T) {
			m := mustNew(t, c.name, c.shape, c.classes)
			params := onnxrtParams(m, 5)
			b := batchOf(imageSet(51, 5, c.classes, true, c.shape...), seq(5)...)
			_, enc := marshalONNX(t, m, params)
			want, err := Logits(m, params, b)
			if err != nil {
				t.Fatal(err)
			}
			got, dims := runOnnxruntime(t, node, modules, enc, denseInputs(b), append([]int{b.Len()}, c.shape...))
			if !slices.Equal(dims, []int{b.Len(), c.classes}) || len(got) != len(want) {
				t.Fatalf("onnxruntime gives logits of shape %v (%d values), want [%d %d]", dims, len(got), b.Len(), c.classes)
			}
			var maxErr, maxAbs float64
			agree := 0
			for k := range b.Len() {
				g, w := got[k*c.classes:(k+1)*c.classes], want[k*c.classes:(k+1)*c.classes]
				for j := range g {
					d := math.Abs(float64(g[j]-w[j])) / math.Max(1, math.Abs(float64(w[j])))
					if d > maxErr || math.IsNaN(d) {
						maxErr = d
					}
					maxAbs = math.Max(maxAbs, math.Abs(float64(w[j])))
				}
				if argmax(g) == argmax(w) {
					agree++
				}
			}
			t.Logf("%s %v: %d samples, %d parameters, max |logit| %.3f, max |onnxruntime − gtstorm|/max(1,|logit|) = %.3g, predictions agree on %d/%d",
				c.name, c.shape, b.Len(), m.NumParams(), maxAbs, maxErr, agree, b.Len())
			if !(maxErr <= onnxrtTol) {
				t.Errorf("%s: logits differ by up to %.3g (relative to max(1,|logit|)), want ≤ %g", c.name, maxErr, onnxrtTol)
			}
			if maxAbs < 0.5 {
				t.Errorf("%s: logits up to %g only: the comparison is too easy", c.name, maxAbs)
			}
		})
	}
}

// onnxrtParams returns m.Init(seed) with every GroupNorm scale drawn from
// 1 + 0.2·N(0,1) and shift from 0.2·N(0,1), and the last dense layer's
// weights scaled so that the logits spread over a few units.
func onnxrtParams(m Model, seed uint64) []float32 {
	params := m.Init(seed)
	rng := rand.New(rand.NewPCG(seed, 31))
	ps := m.Params()
	for _, p := range ps {
		v := params[p.Offset : p.Offset+p.Size()]
		switch {
		case m.(*classifier).isGroupNorm(p.Name) && strings.HasSuffix(p.Name, ".g"):
			for i := range v {
				v[i] = 1 + 0.2*float32(rng.NormFloat64())
			}
		case m.(*classifier).isGroupNorm(p.Name):
			for i := range v {
				v[i] = 0.2 * float32(rng.NormFloat64())
			}
		}
	}
	last := ps[len(ps)-2] // the classifier's weights (the bias is last)
	for i := range params[last.Offset : last.Offset+last.Size()] {
		params[last.Offset+i] *= 8
	}
	return params
}

// isGroupNorm reports whether the parameter tensor name belongs to a
// GroupNorm or ChannelNorm layer: a scale or shift per channel.
func (cm *classifier) isGroupNorm(name string) bool {
	for _, l := range cm.net.layers {
		if (l.kind == kindGroupNorm || l.kind == kindChannelNorm) && (name == l.name+".g" || name == l.name+".b") {
			return true
		}
	}
	return false
}
