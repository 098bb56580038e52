package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/onnx"
	"github.com/gtstorm/gtstorm/train"
	"github.com/gtstorm/gtstorm/weights"
)

// scaledNetONNX writes an ONNX network for MNIST's samples whose
// convolution's output is multiplied by gamma [4,1,1], an initialiser
// named as torch names a folded parameter, and returns its path.
func scaledNetONNX(t *testing.T) string {
	t.Helper()
	ramp := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(i%7-3) / 10
		}
		return v
	}
	nd := func(op string, in []string, out string, attrs ...onnx.Attr) onnx.Node {
		return onnx.Node{Name: "/" + out + "/" + op, OpType: op, Inputs: in, Outputs: []string{out}, Attrs: attrs}
	}
	m := &onnx.Model{Opsets: []onnx.OpsetID{{Version: 13}}, Graph: onnx.Graph{Name: "scaled",
		Nodes: []onnx.Node{
			nd("Conv", []string{"x", "cw"}, "c", onnx.IntsAttr("pads", 1, 1, 1, 1), onnx.IntsAttr("strides", 2, 2)),
			nd("Mul", []string{"c", "onnx::Mul_9"}, "m"),
			nd("Relu", []string{"m"}, "r"),
			nd("ReduceMean", []string{"r", "axes"}, "p", onnx.IntAttr("keepdims", 0)),
			nd("Gemm", []string{"p", "fw", "fb"}, "y", onnx.IntAttr("transB", 1)),
		},
		Initializers: []onnx.Tensor{onnx.FloatTensor("cw", ramp(36), 4, 1, 3, 3), onnx.FloatTensor("onnx::Mul_9", []float32{1, 0.5, 2, 1.5}, 4, 1, 1),
			onnx.Int64Tensor("axes", []int64{2, 3}, 2), onnx.FloatTensor("fw", ramp(40), 10, 4), onnx.FloatTensor("fb", ramp(10), 10)},
		Inputs:  []onnx.ValueInfo{{Name: "x", ElemType: onnx.Float, Shape: []onnx.Dim{{Param: "N"}, {Value: 1}, {Value: 28}, {Value: 28}}}},
		Outputs: []onnx.ValueInfo{{Name: "y", ElemType: onnx.Float}}}}
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "scaled.onnx")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTrainableFlag trains an ONNX network with and without --trainable
// naming its scale: named, the scale is 4 parameters of the model file
// that training moves from the file's values, recorded in config.json, and
// resume continues the run; --trainable without an ONNX model, or naming
// no initialiser of the file, is one line and exit 2. Without it, train
// notes the constant scale.
func TestTrainableFlag(t *testing.T) {
	net := scaledNetONNX(t)
	mnist := writeTinyMNIST(t, filepath.Join(t.TempDir(), "mnist"), 28, 64, 16)
	params := map[string][]float32{}
	for _, trainable := range []string{"", "onnx::Mul_*"} {
		out := filepath.Join(t.TempDir(), "run")
		args := []string{"train", "--model", net, "--data-dir", mnist, "--algo", "dsgd", "--nodes", "2", "--topology", "complete", "--partition", "iid",
			"--batch", "8", "--iters", "3", "--eval-every", "3", "--eta0", "0.5", "--trainable", trainable, "--out", out}
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Fatalf("gtstorm %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
		}
		// Without --trainable, train says that the scale stays constant.
		note := "1 initialiser multiplies or is added to the data and stays constant (onnx::Mul_9)"
		if said := strings.Contains(stderr.String(), note); said != (trainable == "") {
			t.Errorf("--trainable %q: stderr says %q: %v, want %v:\n%s", trainable, note, said, trainable == "", stderr.String())
		}
		ck, err := weights.Read(filepath.Join(out, train.ModelFile))
		if err != nil {
			t.Fatal(err)
		}
		params[trainable] = ck.Params
		var cfg map[string]any
		b, _ := os.ReadFile(filepath.Join(out, "config.json"))
		if err := json.Unmarshal(b, &cfg); err != nil || (cfg["trainable"] != nil) != (trainable != "") {
			t.Errorf("--trainable %q: config.json records trainable %v (%v)", trainable, cfg["trainable"], err)
		}
		if trainable != "" {
			gtOK(t, "resume", "--out", out, "--iters", "5")
		}
	}
	if got := len(params["onnx::Mul_*"]) - len(params[""]); got != 4 {
		t.Fatalf("--trainable adds %d parameters, want the 4 scales", got)
	}
	// The conv's 36 weights come first, then the 4 scales: moved by training.
	if s := params["onnx::Mul_*"][36:40]; s[0] == 1 && s[1] == 0.5 && s[2] == 2 && s[3] == 1.5 {
		t.Errorf("the trainable scales %v are the file's values after training", s)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "mlp:8", "--trainable", "gamma"}, "--trainable gamma: want none with --model mlp:8"},
		{[]string{"--model", net, "--trainable", "gamma"}, `trainable "gamma" matches no initialiser that multiplies or is added to the network's data; the file's: onnx::Mul_9`},
		{[]string{"--model", net, "--trainable", "a,[b"}, `trainable "[b": want an initialiser's name or a path.Match pattern`},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"train", "--iters", "1", "--data-dir", mnist, "--out", t.TempDir()}, c.args...)
		code := run(args, &stdout, &stderr)
		msg := strings.TrimSpace(stderr.String())
		if code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("gtstorm %s: exit %d, stderr %q; want exit 2 and one line with %q", strings.Join(args, " "), code, msg, c.want)
		}
	}
}
