package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/train"
	"github.com/gtstorm/gtstorm/weights"
)

// whole returns the bytes of models/testdata/onnx/name.onnx.
func whole(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "models", "testdata", "onnx", name+".onnx"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// onnxFixture copies models/testdata/onnx/name.onnx (made by PyTorch) into a
// temporary folder and returns its path.
func onnxFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "models", "testdata", "onnx", name+".onnx"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".onnx")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// gtOK runs gtstorm with args and returns its output, failing the test on
// a non-zero exit.
func gtOK(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("gtstorm %s: exit %d: %s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// TestModelONNXTrainEvalPredictExportResume trains a network PyTorch
// exported (--model FILE.onnx) on a tiny MNIST folder for a few rounds, from the file's
// weights; then eval, predict and export read its model file without the
// .onnx file, and resume continues the run, refusing a changed file.
func TestModelONNXTrainEvalPredictExportResume(t *testing.T) {
	net := onnxFixture(t, "gn_resnet")
	out := filepath.Join(t.TempDir(), "run")
	mnist := writeTinyMNIST(t, filepath.Join(t.TempDir(), "mnist"), 28, 64, 16)
	gtOK(t, "train", "--model", net, "--data-dir", mnist, "--algo", "dsgd", "--nodes", "2", "--topology", "complete", "--partition", "iid", "--batch", "8",
		"--iters", "4", "--eval-every", "2", "--checkpoint-every", "2", "--local-eval", "20", "--grad-samples", "5", "--eta0", "0.05", "--out", out)
	var cfg map[string]any
	b, err := os.ReadFile(filepath.Join(out, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &cfg); err != nil || cfg["model"] != net {
		t.Fatalf("config.json records model %v (%v), want %s", cfg["model"], err, net)
	}
	if _, ok := cfg["init"]; ok {
		t.Errorf("config.json records init %v; the default is left out", cfg["init"])
	}
	model := filepath.Join(out, train.ModelFile)
	ck, err := weights.Read(model)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Model != "gn_resnet.onnx" || len(ck.Params) != 2626 {
		t.Fatalf("%s holds %s with %d parameters, want gn_resnet.onnx with 2626", model, ck.Model, len(ck.Params))
	}
	// The model file stands alone: eval, predict and export need no .onnx.
	if err := os.Rename(net, net+".away"); err != nil {
		t.Fatal(err)
	}
	if text := gtOK(t, "eval", "--checkpoint", model); !strings.Contains(text, "gn_resnet.onnx") {
		t.Errorf("eval does not name the model:\n%s", text)
	}
	// Data of another shape than the stored network reads: one line, exit 2.
	small := writeTinyMNIST(t, filepath.Join(t.TempDir(), "mnist14"), 14, 16, 16)
	var out14, err14 bytes.Buffer
	code := run([]string{"eval", "--checkpoint", model, "--data-dir", small}, &out14, &err14)
	if msg := err14.String(); code != 2 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "want data of samples [1 28 28], which the network in "+model+" reads") || !strings.Contains(msg, "samples are [1 14 14]") {
		t.Errorf("eval on 14×14 images: exit %d, stderr %q; want exit 2 and one line naming both shapes", code, msg)
	}
	images, _ := writeTestPNGs(t, t.TempDir(), 2)
	if lines := strings.Count(gtOK(t, append([]string{"predict", "--model", model}, images...)...), "\n"); lines != 2 {
		t.Errorf("predict printed %d lines for 2 images", lines)
	}
	exported := filepath.Join(t.TempDir(), "again.onnx")
	gtOK(t, "export", "--model", model, "--onnx", exported)
	if enc, err := os.ReadFile(exported); err != nil || !bytes.Contains(enc, []byte("InstanceNormalization")) {
		t.Errorf("the export (%v) has no GroupNorm", err)
	}
	// Resume reads the file again: it must be there, unchanged.
	var stdout, stderr bytes.Buffer
	if code := run([]string{"resume", "--out", out, "--iters", "6"}, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), "gn_resnet.onnx") {
		t.Errorf("resume without the network file: exit %d, %q", code, stderr.String())
	}
	// … and refuses another file under its name, even of the same network
	// (here with a metadata entry appended: k = v).
	if err := os.WriteFile(net, append(whole(t, "gn_resnet"), 0x72, 6, 0x0a, 1, 'k', 0x12, 1, 'v'), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"resume", "--out", out, "--iters", "6"}, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), "changed") {
		t.Errorf("resume with a changed network file: exit %d, %q", code, stderr.String())
	}
	if err := os.Rename(net+".away", net); err != nil {
		t.Fatal(err)
	}
	gtOK(t, "resume", "--out", out, "--iters", "6")
	if ck, err := weights.Read(model); err != nil || ck.Model != "gn_resnet.onnx" {
		t.Errorf("after resume: %v, %+v", err, ck)
	}
}

// TestModelONNXBadInput checks that an ONNX file gtstorm cannot train is
// one line naming --model and why, and exit 2.
func TestModelONNXBadInput(t *testing.T) {
	dir := t.TempDir()
	truncated := filepath.Join(dir, "cut.onnx")
	whole, err := os.ReadFile(onnxFixture(t, "gn_resnet"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(truncated, whole[:len(whole)/3], 0o644)
	// The Sigmoid fixture with its operator renamed Softmax (as long a
	// name, so the encoding's lengths hold), which the import does not read.
	sigmoid, err := os.ReadFile(onnxFixture(t, "sigmoid"))
	if err != nil {
		t.Fatal(err)
	}
	softmax := filepath.Join(dir, "softmax.onnx")
	os.WriteFile(softmax, bytes.ReplaceAll(sigmoid, []byte("Sigmoid"), []byte("Softmax")), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", filepath.Join(dir, "missing.onnx")}, "no such file"},
		{[]string{"--model", truncated}, "past the end of the data"},
		{[]string{"--model", dir + "/x.onnx"}, "no such file"},
		{[]string{"--model", onnxFixture(t, "batchnorm")}, "BatchNormalization is refused"},
		{[]string{"--model", softmax}, `node "/Softmax" (Softmax): operator Softmax is not supported`},
		{[]string{"--model", onnxFixture(t, "gn_resnet"), "--dataset", "cifar10"}, "has shape [N,1,28,28], want [N,3,32,32]"},
		{[]string{"--model", "mlp:8", "--init", "file"}, "only a network file"},
		{[]string{"--model", onnxFixture(t, "mlp_dropout"), "--init", "zeros"}, "file or seed"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"train", "--iters", "1", "--out", t.TempDir()}, c.args...)
		code := run(args, &stdout, &stderr)
		msg := strings.TrimSpace(stderr.String())
		t.Logf("%s", msg)
		if code != 2 || !strings.Contains(msg, c.want) || !strings.Contains(msg, "--") || strings.Contains(msg, "\n") {
			t.Errorf("gtstorm %s: exit %d, stderr %q; want exit 2 and one line with %q", strings.Join(args, " "), code, msg, c.want)
		}
	}
}

// TestModelONNXCompare sweeps --model over an ONNX file and a built-in
// model, and --init over an ONNX file's two initialisations.
func TestModelONNXCompare(t *testing.T) {
	net := onnxFixture(t, "mlp_dropout")
	mnist := writeTinyMNIST(t, filepath.Join(t.TempDir(), "mnist"), 28, 48, 12)
	for _, vary := range [][]string{{"--vary", "model=" + net + ",mlp:8"}, {"--model", net, "--vary", "init=file,seed"}} {
		out := filepath.Join(t.TempDir(), "grid")
		args := append([]string{"compare", "--dataset", "mnist", "--data-dir", mnist, "--algos", "dsgd", "--partitions", "iid"}, vary...)
		args = append(args, "--nodes", "2", "--topology", "complete", "--iters", "2", "--batch", "4", "--eval-every", "1",
			"--grad-samples", "4", "--local-eval", "8", "--out", out)
		gtOK(t, args...)
		rows, col := readResults(t, out, 2)
		var settings []string
		for _, r := range rows[1:] {
			settings = append(settings, r[col["setting"]])
		}
		a, b := slices.Clone(rows[1]), slices.Clone(rows[2])
		a[col["setting"]], b[col["setting"]] = "", ""
		if slices.Equal(a, b) {
			t.Errorf("%v: the two cells have the same results %v", vary, a)
		}
		t.Logf("%v: %v", vary, settings)
	}
}
