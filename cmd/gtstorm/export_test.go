package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	onnxgo "github.com/owulveryck/onnx-go"
	"github.com/owulveryck/onnx-go/backend/x/gorgonnx"
	"gorgonia.org/tensor"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/train"
	"github.com/gtstorm/gtstorm/weights"
)

// TestExportONNXEndToEnd trains a short MNIST run, exports its model.gtck
// with `gtstorm export`, and runs the ONNX file with onnx-go's Gorgonia
// backend (gorgonnx), an ONNX runtime that is not gtstorm's, on the first
// 100 MNIST test images: its logits must match the model's own forward
// pass within 1e-4. Where a Python with Debian's python3-onnx is
// installed, onnx.checker validates the file as well.
func TestExportONNXEndToEnd(t *testing.T) {
	_, test, err := data.LoadMNIST("")
	if err != nil {
		t.Skipf("MNIST not available: %v", err)
	}
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	out, err := gtstorm(t, "train", "--dataset", "mnist", "--iters", "20", "--nodes", "2", "--eval-every", "20",
		"--local-eval", "10", "--grad-samples", "10", "--batch", "32", "--eta0", "0.1", "--partition", "iid",
		"--out", run).CombinedOutput()
	if err != nil {
		t.Fatalf("train: %v\n%s", err, out)
	}
	model := filepath.Join(run, "model.gtck")
	onnxFile := filepath.Join(dir, "model.onnx")
	out, err = gtstorm(t, "export", "--model", model, "--onnx", onnxFile).CombinedOutput()
	if err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "wrote "+onnxFile) || !strings.Contains(string(out), "[N,1,28,28]") {
		t.Errorf("export says %q", out)
	}
	enc, err := os.ReadFile(onnxFile)
	if err != nil {
		t.Fatal(err)
	}
	ck, err := weights.Read(model)
	if err != nil {
		t.Fatal(err)
	}
	n := 100
	b := data.Batch{Data: test, Index: make([]int, n)}
	for i := range b.Index {
		b.Index[i] = i
	}
	want, err := models.Logits(models.NewMNISTCNN(), ck.Params, b)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, n*test.Dim())
	for i := range n {
		test.Dense(i, x[i*test.Dim():(i+1)*test.Dim()])
	}

	backend := gorgonnx.NewGraph()
	om := onnxgo.NewModel(backend)
	if err := om.UnmarshalBinary(enc); err != nil {
		t.Fatalf("onnx-go cannot decode %s: %v", onnxFile, err)
	}
	if err := om.SetInput(0, tensor.New(tensor.WithShape(n, 1, 28, 28), tensor.WithBacking(x))); err != nil {
		t.Fatal(err)
	}
	if err := backend.Run(); err != nil {
		t.Fatalf("onnx-go run: %v", err)
	}
	outs, err := om.GetOutputTensors()
	if err != nil {
		t.Fatal(err)
	}
	got, ok := outs[0].Data().([]float32)
	if !ok || len(got) != len(want) || !outs[0].Shape().Eq(tensor.Shape{n, 10}) {
		t.Fatalf("onnx-go output %v of %T, want [%d 10] float32", outs[0].Shape(), outs[0].Data(), n)
	}
	var maxDiff float64
	for i := range got {
		maxDiff = math.Max(maxDiff, math.Abs(float64(got[i]-want[i])))
	}
	t.Logf("100 MNIST test images: max |onnx-go − gtstorm| logit difference %.3g", maxDiff)
	if !(maxDiff <= 1e-4) {
		t.Errorf("logits differ by up to %g, want ≤ 1e-4", maxDiff)
	}

	py := ""
	for _, c := range []string{os.Getenv("GTSTORM_PYTHON"), "python3", "/usr/bin/python3"} {
		if c != "" && exec.Command(c, "-c", "import onnx").Run() == nil {
			py = c
			break
		}
	}
	if py == "" {
		t.Log("no python3 with the onnx package (apt-get install python3-onnx): onnx.checker not run")
		return
	}
	out, err = exec.Command(py, "-c", `
import sys, onnx
m = onnx.load(sys.argv[1])
onnx.checker.check_model(m, full_check=True)
assert m.opset_import[0].version >= 13
print("onnx", onnx.__version__, "checker: ok")
`, onnxFile).CombinedOutput()
	if err != nil {
		t.Fatalf("onnx.checker rejects %s: %v\n%s", onnxFile, err, out)
	}
	t.Logf("%s", bytes.TrimSpace(out))
}

// TestExportErrors: bad arguments exit 2 and bad files 1, each with one
// line on stderr naming the flag or the file.
func TestExportErrors(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("hello\n"), 0o644)
	logreg := filepath.Join(dir, "logreg.gtck")
	// Both files carry run metadata, as train writes them: export refuses
	// a file without it, as eval and predict do.
	lcfg := train.Default()
	lcfg.Dataset, lcfg.DataDir = "libsvm", "a9a.txt"
	m := models.NewLogReg(4, models.DefaultAlpha)
	ck := &weights.Checkpoint{Model: m.Name(), Params: m.Init(1), Meta: mustMarshal(t, map[string]any{"config": lcfg})}
	for _, p := range m.Params() {
		ck.Tensors = append(ck.Tensors, weights.Tensor{Name: p.Name, Shape: p.Shape})
	}
	if err := weights.Write(logreg, ck); err != nil {
		t.Fatal(err)
	}
	cnn := filepath.Join(dir, "model.gtck")
	c := models.NewMNISTCNN()
	ck = &weights.Checkpoint{Model: c.Name(), Params: c.Init(1), Meta: mustMarshal(t, map[string]any{"config": train.Default()})}
	for _, p := range c.Params() {
		ck.Tensors = append(ck.Tensors, weights.Tensor{Name: p.Name, Shape: p.Shape})
	}
	if err := weights.Write(cnn, ck); err != nil {
		t.Fatal(err)
	}
	noDir := filepath.Join(dir, "missing", "m.onnx")
	for _, tc := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"export", "--onnx", "x.onnx"}, 2, "--model"},
		{[]string{"export", "--model", cnn}, 2, "--onnx"},
		{[]string{"export", "--model", cnn, "--onnx", "a.onnx", "extra"}, 2, `"extra"`},
		{[]string{"export", "--model", text, "--onnx", filepath.Join(dir, "a.onnx")}, 1, text},
		{[]string{"export", "--model", logreg, "--onnx", filepath.Join(dir, "a.onnx")}, 1, logreg + " holds a logistic regression"},
		{[]string{"export", "--model", cnn, "--onnx", noDir}, 1, noDir},
	} {
		cmd := gtstorm(t, tc.args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		status := 0
		if ee, ok := err.(*exec.ExitError); ok {
			status = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		msg := stderr.String()
		if status != tc.status || !strings.Contains(msg, tc.want) || strings.Count(msg, "\n") != 1 {
			t.Errorf("%v: status %d, stderr %q; want status %d and one line containing %q", tc.args, status, msg, tc.status, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "a.onnx")); err == nil {
		t.Errorf("a failed export left a.onnx")
	}
	// A valid export of the untrained model writes the file.
	good := filepath.Join(dir, "good.onnx")
	if out, err := gtstorm(t, "export", "--model", cnn, "--onnx", good).CombinedOutput(); err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	if fi, err := os.Stat(good); err != nil || fi.Size() < 4*int64(c.NumParams()) {
		t.Errorf("good.onnx: %v, %v", fi, err)
	}
}

// mustMarshal returns the JSON encoding of v.
func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
