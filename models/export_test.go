package models

import (
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	onnxgo "github.com/owulveryck/onnx-go"
	"github.com/owulveryck/onnx-go/backend/x/gorgonnx"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/models/internal/graphops"
)

// The exported ONNX graphs are run by an ONNX runtime that is not ours:
// onnx-go (github.com/owulveryck/onnx-go, a test-only dependency) decodes
// the file with its own protobuf bindings (gogo/protobuf, generated from
// onnx.proto3) and runs it on its Gorgonia backend gorgonnx, whose Conv,
// MaxPool, Relu, Flatten and Gemm are Gorgonia's stock convolution and
// pooling ops and gonum's BLAS — none of this package's kernels. Its logits
// must match the model's own forward pass (Logits) within onnxTol.
const onnxTol = 1e-4

// runONNX decodes the encoded model b with onnx-go and runs it on x
// [shape...] with the gorgonnx backend, returning the first output.
func runONNX(t *testing.T, b []byte, x []float32, shape ...int) []float32 {
	t.Helper()
	var z []float32
	// Gorgonia's graph builders share package state (see graphops.Build).
	err := graphops.Build(func() error {
		z = runONNXLocked(t, b, x, shape...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// runONNXLocked is runONNX under graphops.Build's lock.
func runONNXLocked(t *testing.T, b []byte, x []float32, shape ...int) []float32 {
	t.Helper()
	backend := gorgonnx.NewGraph()
	model := onnxgo.NewModel(backend)
	if err := model.UnmarshalBinary(b); err != nil {
		t.Fatalf("onnx-go cannot decode the export: %v", err)
	}
	in := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float32(nil), x...)))
	if err := model.SetInput(0, in); err != nil {
		t.Fatalf("onnx-go SetInput: %v", err)
	}
	if err := backend.Run(); err != nil {
		t.Fatalf("onnx-go run: %v", err)
	}
	outs, err := model.GetOutputTensors()
	if err != nil || len(outs) != 1 {
		t.Fatalf("onnx-go outputs %v, %v", outs, err)
	}
	if got, want := outs[0].Shape(), (tensor.Shape{shape[0], 10}); !got.Eq(want) {
		t.Fatalf("onnx-go output shape %v, want %v", got, want)
	}
	z, ok := outs[0].Data().([]float32)
	if !ok {
		t.Fatalf("onnx-go output holds %T, want []float32", outs[0].Data())
	}
	return append([]float32(nil), z...)
}

// skipShort skips the tests that train a network or start Python: -short
// (the race pass of CI) keeps TestONNXOddBatch, which runs the export on
// onnx-go as well.
func skipShort(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a network or starts Python; run without -short")
	}
}

// trainSome takes steps of plain SGD from Init(seed) on batches of d, so the
// exported weights are those of a network that has learnt something.
func trainSome(t *testing.T, m Model, seed uint64, d *data.Dataset, steps, batch int, lr float32) []float32 {
	t.Helper()
	params := m.Init(seed)
	w := newWorker(t, m)
	rng := rand.New(rand.NewPCG(seed, 3))
	for range steps {
		idx := make([]int, batch)
		for k := range idx {
			idx[k] = rng.IntN(d.Len())
		}
		_, g := grad(t, w, params, batchOf(d, idx...))
		for i := range params {
			params[i] -= lr * g[i]
		}
	}
	return params
}

// denseInputs returns the network inputs of the samples of b, one after
// another (NCHW for images).
func denseInputs(b data.Batch) []float32 {
	dim := b.Data.Dim()
	x := make([]float32, b.Len()*dim)
	for k, i := range b.Index {
		b.Data.Dense(i, x[k*dim:(k+1)*dim])
	}
	return x
}

// compareONNX exports m at params, runs the export with onnx-go on the
// samples of b and compares its logits with Logits.
func compareONNX(t *testing.T, m Model, params []float32, b data.Batch) []byte {
	t.Helper()
	_, enc := marshalONNX(t, m, params)
	want, err := Logits(m, params, b)
	if err != nil {
		t.Fatal(err)
	}
	got := runONNX(t, enc, denseInputs(b), append([]int{b.Len()}, b.Data.Shape...)...)
	if len(got) != len(want) {
		t.Fatalf("onnx-go gives %d logits, the model %d", len(got), len(want))
	}
	var maxDiff, maxAbs float64
	agree := 0
	for k := range b.Len() {
		g, w := got[k*10:(k+1)*10], want[k*10:(k+1)*10]
		for j := range g {
			maxDiff = math.Max(maxDiff, math.Abs(float64(g[j]-w[j])))
			maxAbs = math.Max(maxAbs, math.Abs(float64(w[j])))
		}
		if argmax(g) == argmax(w) {
			agree++
		}
	}
	t.Logf("%s: %d samples, max |logit| %.3f, max |onnx-go − gtstorm| = %.3g, predictions agree on %d/%d",
		m.Name(), b.Len(), maxAbs, maxDiff, agree, b.Len())
	if maxDiff > onnxTol || math.IsNaN(maxDiff) {
		t.Errorf("%s: logits differ by up to %g, want ≤ %g", m.Name(), maxDiff, onnxTol)
	}
	if agree != b.Len() {
		t.Errorf("%s: predictions agree on %d of %d samples", m.Name(), agree, b.Len())
	}
	if maxAbs < 0.5 {
		t.Errorf("%s: logits up to %g only: the comparison is too easy", m.Name(), maxAbs)
	}
	return enc
}

func argmax(v []float32) int {
	best := 0
	for j, x := range v {
		if x > v[best] {
			best = j
		}
	}
	return best
}

// TestONNXMNISTMatchesOnnxGo compares the logits of a trained MNIST CNN on
// the first 100 MNIST test images.
func TestONNXMNISTMatchesOnnxGo(t *testing.T) {
	skipShort(t)
	train, test, err := data.LoadMNIST("")
	if err != nil {
		t.Skipf("MNIST not available: %v", err)
	}
	m := NewMNISTCNN()
	params := trainSome(t, m, 7, train, 30, 64, 0.1)
	enc := compareONNX(t, m, params, batchOf(test, seq(100)...))
	checkWithPython(t, enc, m.Name())
}

// TestONNXCIFARMatchesOnnxGo compares the logits of a CIFAR CNN after a few
// steps on random images, on 100 other random images normalised per
// channel as a CIFAR run feeds them. Random labels teach the network
// little, so its weights are then doubled: five layers deep, that makes
// logits of a few units, like a trained network's, rather than tenths.
func TestONNXCIFARMatchesOnnxGo(t *testing.T) {
	skipShort(t)
	m := NewCIFARCNN()
	params := trainSome(t, m, 11, imageSet(5, 256, 10, true, 3, 32, 32), 10, 32, 0.05)
	for i := range params {
		params[i] *= 2
	}
	enc := compareONNX(t, m, params, batchOf(imageSet(6, 100, 10, true, 3, 32, 32), seq(100)...))
	checkWithPython(t, enc, m.Name())
}

// TestONNXOddBatch runs batch sizes other than the one of the comparison
// (the batch dimension is dynamic), including a piece boundary of Logits.
func TestONNXOddBatch(t *testing.T) {
	m := NewMNISTCNN()
	params := m.Init(3)
	d := imageSet(9, 70, 10, false, 1, 28, 28)
	for _, n := range []int{2, 70} {
		_, enc := marshalONNX(t, m, params)
		b := batchOf(d, seq(n)...)
		want, err := Logits(m, params, b)
		if err != nil {
			t.Fatal(err)
		}
		got := runONNX(t, enc, denseInputs(b), n, 1, 28, 28)
		for i := range want {
			if d := math.Abs(float64(got[i] - want[i])); d > onnxTol {
				t.Fatalf("batch %d: logit %d differs by %g", n, i, d)
			}
		}
	}
}

func TestONNXStructure(t *testing.T) {
	for _, c := range []struct {
		m     Model
		nodes string
	}{
		{NewMNISTCNN(), "Conv Relu MaxPool Conv Relu MaxPool Flatten Gemm"},
		{NewCIFARCNN(), "Conv Relu MaxPool Conv Relu MaxPool Flatten Gemm Relu Gemm Relu Gemm"},
	} {
		params := c.m.Init(1)
		om, err := ONNX(c.m, params)
		if err != nil {
			t.Fatal(err)
		}
		var ops []string
		for _, n := range om.Graph.Nodes {
			ops = append(ops, n.OpType)
		}
		if got := strings.Join(ops, " "); got != c.nodes {
			t.Errorf("%s: nodes %s, want %s", c.m.Name(), got, c.nodes)
		}
		if om.Opsets[0].Version < 13 {
			t.Errorf("%s: opset %d", c.m.Name(), om.Opsets[0].Version)
		}
		total := 0
		for i, p := range c.m.Params() {
			in := om.Graph.Initializers[i]
			if in.Name != p.Name || len(in.Floats) != p.Size() {
				t.Errorf("%s: initializer %d is %s with %d values, want %s with %d", c.m.Name(), i, in.Name, len(in.Floats), p.Name, p.Size())
			}
			total += len(in.Floats)
		}
		if total != c.m.NumParams() {
			t.Errorf("%s: initializers hold %d values, want %d", c.m.Name(), total, c.m.NumParams())
		}
		// The initialisers are copies: changing params afterwards changes nothing.
		params[0] += 1
		if om.Graph.Initializers[0].Floats[0] == params[0] {
			t.Errorf("%s: initializer shares the parameter vector", c.m.Name())
		}
		if !strings.Contains(om.Graph.DocString, "NCHW") || !strings.Contains(om.Graph.DocString, "[N,10]") {
			t.Errorf("%s: doc string %q does not describe input and output", c.m.Name(), om.Graph.DocString)
		}
	}
}

func TestONNXRejects(t *testing.T) {
	if _, err := ONNX(NewLogReg(5, DefaultAlpha), make([]float32, 5)); err == nil || !strings.Contains(err.Error(), "no ONNX export") {
		t.Errorf("logistic regression: error %v", err)
	}
	if _, err := ONNX(NewMNISTCNN(), make([]float32, 5)); err == nil || !strings.Contains(err.Error(), "length 5") {
		t.Errorf("short params: error %v", err)
	}
	if _, err := Logits(NewLogReg(5, DefaultAlpha), make([]float32, 5), data.Batch{}); err == nil {
		t.Errorf("Logits of a logistic regression: no error")
	}
}

// onnxPython returns a Python interpreter that imports the onnx package
// (Debian's python3-onnx), or "" if there is none.
func onnxPython() string {
	cands := []string{os.Getenv("GTSTORM_PYTHON"), "python3", "/usr/bin/python3"}
	for _, py := range cands {
		if py == "" {
			continue
		}
		if exec.Command(py, "-c", "import onnx").Run() == nil {
			return py
		}
	}
	return ""
}

// checkWithPython validates the encoded model with the ONNX project's own
// checker (onnx.checker.check_model with full_check, which also runs its
// strict shape inference), when a Python with onnx is installed; it logs a
// skip otherwise.
func checkWithPython(t *testing.T, enc []byte, name string) {
	t.Helper()
	py := onnxPython()
	if py == "" {
		t.Logf("%s: no python3 with the onnx package (apt-get install python3-onnx): checker not run", name)
		return
	}
	path := filepath.Join(t.TempDir(), name+".onnx")
	if err := os.WriteFile(path, enc, 0o644); err != nil {
		t.Fatal(err)
	}
	const script = `
import sys, onnx
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m, full_check=True)
out = m.graph.output[0].type.tensor_type.shape.dim
inferred = onnx.shape_inference.infer_shapes(m, strict_mode=True)
print("onnx", onnx.__version__, "checker ok; opset", m.opset_import[0].version, "ir", m.ir_version,
      "output", [d.dim_param or d.dim_value for d in out],
      "values", len(inferred.graph.value_info))
`
	out, err := exec.Command(py, "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: onnx.checker rejects the export: %v\n%s", name, err, out)
	}
	t.Logf("%s: %s", name, strings.TrimSpace(string(out)))
}

func TestONNXPythonChecker(t *testing.T) {
	skipShort(t)
	if onnxPython() == "" {
		t.Skip("no python3 with the onnx package (apt-get install python3-onnx)")
	}
	// The paper's CNNs, and the networks of SPEC §12 with GroupNorm (the
	// Reshape, InstanceNormalization, Reshape, Mul, Add form), residual
	// Adds and global average pooling, or a 62-class FEMNIST head.
	models := []Model{NewMNISTCNN(), NewCIFARCNN(),
		mustNew(t, "resnet8-gn", []int{3, 16, 16}, 10), mustNew(t, "fedavg-cnn", []int{1, 28, 28}, 62)}
	for _, m := range models {
		_, enc := marshalONNX(t, m, m.Init(1))
		checkWithPython(t, enc, m.Name())
	}
}
