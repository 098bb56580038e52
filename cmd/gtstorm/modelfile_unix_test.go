//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/inputfile/inputfiletest"
	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/train"
	"github.com/gtstorm/gtstorm/weights"
)

// TestPredictEvalExportDamagedModel runs predict, eval and export on model
// files damaged in each way the hardening pass found, and on paths that are
// no regular file: each command exits with status 1 and one line on stderr
// naming the file and what was expected, prints nothing on stdout, and
// export writes no ONNX file. A predict image that is a link to /dev/zero
// or a named pipe gets its line while the other image is classified.
func TestPredictEvalExportDamagedModel(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "digit.png")
	var buf bytes.Buffer
	png.Encode(&buf, image.NewGray(image.Rect(0, 0, 28, 28)))
	if err := os.WriteFile(img, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(name string, damage func(ck *weights.Checkpoint)) string {
		m := models.NewMNISTCNN()
		meta, err := json.Marshal(map[string]any{"config": train.Default()})
		if err != nil {
			t.Fatal(err)
		}
		ck := &weights.Checkpoint{Model: m.Name(), Params: m.Init(1), Meta: meta}
		for _, p := range m.Params() {
			ck.Tensors = append(ck.Tensors, weights.Tensor{Name: p.Name, Shape: slices.Clone(p.Shape)})
		}
		damage(ck)
		path := filepath.Join(dir, name)
		if err := weights.Write(path, ck); err != nil {
			t.Fatal(err)
		}
		return path
	}
	zero, fifo := inputfiletest.NotRegular(t, filepath.Join(dir, "zero.gtck"), filepath.Join(dir, "fifo.gtck"))
	cases := []struct {
		name, path, want string
	}{
		{"renamed tensor", write("renamed.gtck", func(ck *weights.Checkpoint) { ck.Tensors[0].Name = "w" }), `tensor 0 is "w"`},
		{"permuted shape", write("permuted.gtck", func(ck *weights.Checkpoint) { slices.Reverse(ck.Tensors[0].Shape) }), "tensor 0 is"},
		{"one flat tensor", write("flat.gtck", func(ck *weights.Checkpoint) {
			ck.Tensors = []weights.Tensor{{Name: "all", Shape: []int{len(ck.Params)}}}
		}), "in 1 tensors"},
		{"huge but finite parameters", write("huge.gtck", func(ck *weights.Checkpoint) {
			for i := range ck.Params {
				ck.Params[i] = 1e30
			}
		}), "finite but so large that its outputs are not"},
		{"no metadata", write("nometa.gtck", func(ck *weights.Checkpoint) { ck.Meta = nil }), "no run metadata"},
		{"garbage metadata", write("garbage.gtck", func(ck *weights.Checkpoint) { ck.Meta = []byte("garbage") }), "run metadata: invalid character"},
		{"link to /dev/zero", zero, "a character device, want a regular file"},
		{"named pipe", fifo, "a named pipe (FIFO), want a regular file"},
	}
	onnx := filepath.Join(dir, "m.onnx")
	for _, c := range cases {
		for _, args := range [][]string{
			{"predict", "--model", c.path, img},
			{"eval", "--checkpoint", c.path},
			{"export", "--model", c.path, "--onnx", onnx},
		} {
			cmd := gtstorm(t, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Run()
			code, msg := cmd.ProcessState.ExitCode(), stderr.String()
			if code != 1 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, c.path) || !strings.Contains(msg, c.want) || stdout.Len() != 0 {
				t.Errorf("%s: gtstorm %s: exit %d, stdout %q, stderr %q; want exit 1 and one line naming the file and holding %q",
					c.name, strings.Join(args, " "), code, stdout.String(), msg, c.want)
			}
			if _, err := os.Stat(onnx); err == nil {
				t.Fatalf("%s: gtstorm %s wrote %s", c.name, strings.Join(args, " "), onnx)
			}
		}
	}

	// Images that are no regular file.
	model := write("model.gtck", func(*weights.Checkpoint) {})
	zeroPNG, fifoPNG := inputfiletest.NotRegular(t, filepath.Join(dir, "zero.png"), filepath.Join(dir, "fifo.png"))
	cmd := gtstorm(t, "predict", "--model", model, zeroPNG, img, fifoPNG)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !linesHold(stdout.String(), []string{img + ": "}) ||
		!linesHold(stderr.String(), []string{zeroPNG + ": a character device, want a regular file", fifoPNG + ": a named pipe (FIFO), want a regular file", "2 of 3 images could not be classified"}) {
		t.Errorf("predict of a link to /dev/zero and a named pipe: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}
