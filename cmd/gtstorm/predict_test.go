package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/gif"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/train"
	"github.com/gtstorm/gtstorm/train/modelfile"
	"github.com/gtstorm/gtstorm/weights"
)

// writeTestPNGs writes the first n MNIST test images as 28×28 grey PNGs
// into dir and returns their paths and labels.
func writeTestPNGs(t *testing.T, dir string, n int) ([]string, []int) {
	t.Helper()
	_, test, err := data.LoadMNIST("")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	var labels []int
	for i := range n {
		g := image.NewGray(image.Rect(0, 0, 28, 28))
		copy(g.Pix, test.Bytes[i*784:(i+1)*784])
		var buf bytes.Buffer
		if err := png.Encode(&buf, g); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, fmt.Sprintf("test-%03d.png", i))
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths, labels = append(paths, p), append(labels, int(test.Labels[i]))
	}
	return paths, labels
}

// jsonLine is one line of predict --json, decoded strictly.
type jsonLine struct {
	Image string `json:"image"`
	Top   []struct {
		Class *int     `json:"class"`
		Name  *string  `json:"name"`
		Prob  *float64 `json:"prob"`
	} `json:"top"`
}

// TestPredictCommand trains a small MNIST model and predicts test images
// written as PNGs through the binary, in text and as JSON lines.
func TestPredictCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a model for a few seconds")
	}
	cfg := train.Default()
	cfg.Algo, cfg.Nodes, cfg.Topology, cfg.Partition = "dsgd", 2, "complete", "iid"
	cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = 300, 300, 0
	cfg.Eta0, cfg.LocalEvalSamples, cfg.GradSamples = 0.05, 100, 10
	out := t.TempDir()
	if _, err := train.Train(context.Background(), cfg, train.Options{Out: out}); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(out, train.ModelFile)
	const n = 40
	images, labels := writeTestPNGs(t, t.TempDir(), n)
	want, err := modelfile.Predict(model, images, 3)
	if err != nil {
		t.Fatal(err)
	}

	// JSON lines, flags after the images.
	cmd := gtstorm(t, append(append([]string{"predict"}, images...), "--model", model, "--json")...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("predict --json: %v: %s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("predict --json printed %d lines for %d images:\n%s", len(lines), n, stdout.String())
	}
	correct := 0
	for i, line := range lines {
		var keys map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &keys); err != nil || len(keys) != 2 || keys["image"] == nil || keys["top"] == nil {
			t.Fatalf("line %d is not an object of image and top: %q (%v)", i, line, err)
		}
		var got jsonLine
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&got); err != nil {
			t.Fatalf("line %d: %v: %q", i, err, line)
		}
		if got.Image != images[i] || len(got.Top) != 3 {
			t.Fatalf("line %d: %q", i, line)
		}
		for r, c := range got.Top {
			if c.Class == nil || c.Name == nil || c.Prob == nil {
				t.Fatalf("line %d: entry %d lacks class, name or prob: %q", i, r, line)
			}
			w := want[i].Top[r]
			if *c.Class != w.Class || *c.Name != strconv.Itoa(w.Class) || *c.Prob != w.Prob {
				t.Fatalf("line %d: entry %d is %d %q %v, modelfile.Predict gives %+v", i, r, *c.Class, *c.Name, *c.Prob, w)
			}
		}
		if *got.Top[0].Class == labels[i] {
			correct++
		}
	}
	if correct < n*8/10 {
		t.Errorf("%d of %d test images predicted right, want 80%%", correct, n)
	}

	// Text, --top 2, flags first.
	cmd = gtstorm(t, append([]string{"predict", "--model", model, "--top", "2"}, images[:3]...)...)
	stdout.Reset()
	stderr.Reset()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("predict: %v: %s", err, stderr.String())
	}
	text := stdout.String()
	sc := bufio.NewScanner(strings.NewReader(text))
	for i := 0; i < 3; i++ {
		if !sc.Scan() {
			t.Fatalf("predict printed fewer than 3 lines")
		}
		w := want[i].Top
		line := fmt.Sprintf("%s: %d %.4f, %d %.4f", images[i], w[0].Class, w[0].Prob, w[1].Class, w[1].Prob)
		if sc.Text() != line {
			t.Errorf("line %d: %q, want %q", i, sc.Text(), line)
		}
	}
	if sc.Scan() {
		t.Errorf("extra output %q", sc.Text())
	}
	t.Logf("predict output:\n%s", text)
}

// writeUntrainedModel writes an MNIST model file with fresh parameters, in
// the form of releases that did not store the input description.
func writeUntrainedModel(t *testing.T, path string) {
	t.Helper()
	m := models.NewMNISTCNN()
	cfgJSON, err := json.Marshal(map[string]any{"config": train.Default()})
	if err != nil {
		t.Fatal(err)
	}
	ck := &weights.Checkpoint{Model: m.Name(), Params: m.Init(1), Meta: cfgJSON}
	for _, p := range m.Params() {
		ck.Tensors = append(ck.Tensors, weights.Tensor{Name: p.Name, Shape: p.Shape})
	}
	if err := weights.Write(path, ck); err != nil {
		t.Fatal(err)
	}
}

// zeroPNG returns a PNG whose header says 0×0 pixels.
func zeroPNG() []byte {
	chunk := func(typ string, body []byte) []byte {
		var b bytes.Buffer
		binary.Write(&b, binary.BigEndian, uint32(len(body)))
		b.WriteString(typ)
		b.Write(body)
		binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), body...)))
		return b.Bytes()
	}
	ihdr := make([]byte, 13)
	ihdr[8] = 8
	out := []byte("\x89PNG\r\n\x1a\n")
	out = append(out, chunk("IHDR", ihdr)...)
	return append(out, chunk("IEND", nil)...)
}

// TestPredictBadInput: a bad model or bad flags print no prediction and
// one line (exit 1 and 2; bad flags print the usage on stdout, as every
// command does). A bad image, of a format other than PNG and JPEG among
// them though the binary links GIF and TIFF decoders, gets a line naming
// it on stderr (an object with its "error" with --json) while the others
// are classified, and exit status 1 at the end. An image of dark ink on
// white is inverted, with a note on stderr.
func TestPredictBadInput(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "model.gtck")
	writeUntrainedModel(t, model)
	var full bytes.Buffer
	g := image.NewGray(image.Rect(0, 0, 28, 28))
	for i := range g.Pix {
		g.Pix[i] = uint8(i)
	}
	png.Encode(&full, g)
	good := []string{filepath.Join(dir, "good.png")}
	os.WriteFile(good[0], full.Bytes(), 0o644)
	var paper, anim bytes.Buffer
	png.Encode(&paper, invertGray(g))
	gif.Encode(&anim, g, nil)
	files := map[string][]byte{
		"notes.txt": []byte("not an image\n"),
		"zero.png":  zeroPNG(),
		"trunc.png": full.Bytes()[:full.Len()-20],
		"paper.png": paper.Bytes(),
		"anim.gif":  anim.Bytes(),
	}
	for name, b := range files {
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	file := func(name string) string { return filepath.Join(dir, name) }
	const failed = "images could not be classified"
	cases := []struct {
		args           []string
		code           int
		stdout, stderr []string // what each line holds
	}{
		{[]string{"predict", "--model", model, good[0], file("notes.txt")}, 1,
			[]string{good[0] + ": "}, []string{file("notes.txt") + ": not a PNG or JPEG image", "1 of 2 " + failed}},
		{[]string{"predict", "--model", model, file("zero.png"), good[0]}, 1,
			[]string{good[0] + ": "}, []string{file("zero.png") + ": PNG of 0×0", "1 of 2 " + failed}},
		{[]string{"predict", "--model", model, "--json", file("trunc.png")}, 1,
			[]string{`{"image":"` + file("trunc.png") + `","error":"` + file("trunc.png") + `: truncated PNG`}, []string{"1 of 1 " + failed}},
		{[]string{"predict", "--model", model, file("absent.png")}, 1, nil, []string{file("absent.png"), "1 of 1 " + failed}},
		{[]string{"predict", "--model", model, file("anim.gif"), good[0]}, 1,
			[]string{good[0] + ": "}, []string{file("anim.gif") + ": GIF image, want a PNG or JPEG image", "1 of 2 " + failed}},
		{[]string{"predict", "--model", model, "--json", good[0], file("anim.gif"), file("paper.png"), file("notes.txt")}, 1,
			[]string{`{"image":"` + good[0] + `","top":[`, `{"image":"` + file("anim.gif") + `","error":"` + file("anim.gif") + `: GIF image`,
				`{"image":"` + file("paper.png") + `","top":[`, `{"image":"` + file("notes.txt") + `","error":"`},
			[]string{"note: " + file("paper.png") + " has a light background; inverted", "2 of 4 " + failed}},
		{[]string{"predict", "--model", model, file("paper.png")}, 0,
			[]string{file("paper.png") + ": "}, []string{"note: " + file("paper.png") + " has a light background; inverted"}},
		{[]string{"predict", "--model", file("notes.txt"), good[0]}, 1, nil, []string{file("notes.txt")}},
		{[]string{"predict", good[0]}, 2, nil, []string{"--model"}},
		{[]string{"predict", "--model", model}, 2, nil, []string{"no IMAGE"}},
		{[]string{"predict", "--model", model, "--top", "0", good[0]}, 2, nil, []string{"--top 0"}},
		{[]string{"predict", "--model", model, "--colour", good[0]}, 2, nil, []string{"colour"}},
	}
	for _, c := range cases {
		cmd := gtstorm(t, c.args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Run()
		code := cmd.ProcessState.ExitCode()
		if code != c.code || c.code != 2 && !linesHold(stdout.String(), c.stdout) || !linesHold(stderr.String(), c.stderr) || strings.Contains(stderr.String(), "panic") {
			t.Errorf("gtstorm %s: exit %d, stdout %q, stderr %q; want exit %d, stdout lines with %q and stderr lines with %q",
				strings.Join(c.args, " "), code, stdout.String(), stderr.String(), c.code, c.stdout, c.stderr)
		}
	}

	// The --json objects: an inverted image says so, a failed one has
	// its image and error only.
	out, _ := gtstorm(t, "predict", "--model", model, "--json", file("paper.png"), file("anim.gif")).Output()
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	var inverted, bad map[string]any
	if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &inverted) != nil || json.Unmarshal([]byte(lines[1]), &bad) != nil ||
		len(inverted) != 3 || inverted["inverted"] != true || inverted["top"] == nil || len(bad) != 2 || bad["error"] == nil {
		t.Errorf("predict --json paper.png anim.gif: %q", out)
	}

	// A file named like a flag after "--" is an image.
	dash := filepath.Join(dir, "-x.png")
	os.WriteFile(dash, full.Bytes(), 0o644)
	cmd := gtstorm(t, "predict", "--model", model, "--top", "1", "--", "-x.png")
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || !strings.HasPrefix(stdout.String(), "-x.png: ") || strings.Count(stdout.String(), ",") != 0 {
		t.Errorf("predict -- -x.png: %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
	}
	// The untrained model's file, without input description, predicts.
	preds, err := modelfile.Predict(model, good, 10)
	if err != nil || len(preds) != 1 || len(preds[0].Top) != 10 {
		t.Fatalf("modelfile.Predict: %v, %+v", err, preds)
	}
}

// linesHold reports whether text has one line per entry of want, each
// holding its entry.
func linesHold(text string, want []string) bool {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if text == "" {
		lines = nil
	}
	if len(lines) != len(want) {
		return false
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			return false
		}
	}
	return true
}

// invertGray returns g as dark on light.
func invertGray(g *image.Gray) *image.Gray {
	out := image.NewGray(g.Bounds())
	for i, v := range g.Pix {
		out.Pix[i] = 255 - v
	}
	return out
}

// TestNonFiniteModel: a model file holding a NaN or an infinite parameter is
// a bad file for predict, eval and export: exit 1 and one line naming the
// file and the parameter.
func TestNonFiniteModel(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "digit.png")
	var buf bytes.Buffer
	png.Encode(&buf, image.NewGray(image.Rect(0, 0, 28, 28)))
	os.WriteFile(img, buf.Bytes(), 0o644)
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(-1))} {
		model := filepath.Join(dir, fmt.Sprint("model-", bad, ".gtck"))
		writeUntrainedModel(t, model)
		ck, err := weights.Read(model)
		if err != nil {
			t.Fatal(err)
		}
		ck.Params[len(ck.Params)-3] = bad
		if err := weights.Write(model, ck); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"predict", "--model", model, img},
			{"eval", "--checkpoint", model},
			{"export", "--model", model, "--onnx", filepath.Join(dir, "m.onnx")},
		} {
			cmd := gtstorm(t, args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Run()
			code, msg := cmd.ProcessState.ExitCode(), stderr.String()
			if code != 1 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, model) || !strings.Contains(msg, "non-finite") || stdout.Len() != 0 {
				t.Errorf("gtstorm %s: exit %d, stdout %q, stderr %q; want exit 1 and one line naming the file and its non-finite parameter",
					strings.Join(args, " "), code, stdout.String(), msg)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "m.onnx")); err == nil {
			t.Errorf("export of a non-finite model wrote m.onnx")
		}
	}
}
