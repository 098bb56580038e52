package train

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/weights"
)

// writeCNNCheckpoint writes model.gtck of a CNN run with the given metadata
// (raw JSON; nil for none) and returns its parameters.
func writeCNNCheckpoint(t *testing.T, path string, m models.Model, metaJSON []byte) []float32 {
	t.Helper()
	params := m.Init(4)
	ck := modelCheckpoint(m, params)
	ck.Meta = metaJSON
	if err := weights.Write(path, ck); err != nil {
		t.Fatal(err)
	}
	return params
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestExportONNX exports an MNIST and a CIFAR-10 model: the file holds the
// graph models.ONNX builds from the checkpoint's weights, and its doc
// string says how the input is scaled.
func TestExportONNX(t *testing.T) {
	dir := t.TempDir()
	cifarCfg := Default()
	cifarCfg.Dataset = "cifar10"
	for _, c := range []struct {
		m    models.Model
		meta []byte
		doc  string
		prop string
	}{
		{models.NewMNISTCNN(), mustJSON(t, meta{Config: Default()}), "divided by 255, in [0,1]", "gtstorm.dataset"},
		{models.NewCIFARCNN(), mustJSON(t, map[string]any{"config": cifarCfg,
			"input": map[string]any{"shape": []int{3, 32, 32}, "mean": []float32{0.5, 0.25, 0.125}, "std": []float32{0.2, 0.3, 0.4}}}),
			"mean [0.5 0.25 0.125] and std [0.2 0.3 0.4]", "gtstorm.input.std"},
		{models.NewCIFARCNN(), mustJSON(t, meta{Config: cifarCfg}), "mean and standard deviation of the CIFAR-10 training set", "gtstorm.normalize"},
		{models.NewCIFARCNN(), nil, "standardised per channel when the run normalised", "gtstorm.source"},
	} {
		ckpt := filepath.Join(dir, c.m.Name()+".gtck")
		params := writeCNNCheckpoint(t, ckpt, c.m, c.meta)
		out := filepath.Join(dir, c.m.Name()+".onnx")
		res, err := ExportONNX(ckpt, out)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if res.Bytes != len(b) || res.Model != c.m.Name() || res.Params != c.m.NumParams() || res.Opset < 13 {
			t.Errorf("%s: result %+v for a file of %d bytes", c.m.Name(), res, len(b))
		}
		if len(res.Input) != 4 || res.Input[0] != -1 || len(res.Output) != 2 || res.Output[1] != 10 {
			t.Errorf("%s: input %v, output %v", c.m.Name(), res.Input, res.Output)
		}
		if !strings.Contains(res.Doc, c.doc) || !strings.Contains(res.Doc, "NCHW") {
			t.Errorf("%s: doc %q lacks %q", c.m.Name(), res.Doc, c.doc)
		}
		// The file is the encoding of models.ONNX with that doc string: the
		// weights it holds are the checkpoint's, bit for bit.
		om, err := models.ONNX(c.m, params)
		if err != nil {
			t.Fatal(err)
		}
		var em exportMeta
		if c.meta != nil {
			json.Unmarshal(c.meta, &em)
		}
		om.DocString, om.Metadata = exportDoc(c.m.Name(), ckpt, &em)
		want, err := om.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, want) {
			t.Errorf("%s: file differs from the encoding of models.ONNX", c.m.Name())
		}
		if !bytes.Contains(b, []byte(c.prop)) {
			t.Errorf("%s: metadata lacks %s", c.m.Name(), c.prop)
		}
		left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
		if len(left) > 0 {
			t.Errorf("temporary files left: %v", left)
		}
	}
}

// TestExportONNXErrors: bad input gets a one-line error naming the file,
// and an existing output file is left as it was.
func TestExportONNXErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "model.gtck")
	writeCNNCheckpoint(t, good, models.NewMNISTCNN(), mustJSON(t, meta{Config: Default()}))
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("not a checkpoint\n"), 0o644)
	logreg := filepath.Join(dir, "logreg.gtck")
	writeLogRegCheckpoint(t, logreg, "a9a.txt", []float32{1, 2, 3})
	odd := filepath.Join(dir, "odd.gtck")
	if err := weights.Write(odd, &weights.Checkpoint{Model: "mnist-cnn", Tensors: []weights.Tensor{{Name: "w", Shape: []int{3}}}, Params: []float32{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(dir, "old.onnx")
	os.WriteFile(existing, []byte("old"), 0o644)
	missingDir := filepath.Join(dir, "no", "such", "dir", "m.onnx")
	for _, c := range []struct {
		name, in, out, want string
	}{
		{"not a model file", text, existing, text},
		{"missing model file", filepath.Join(dir, "absent.gtck"), existing, "absent.gtck"},
		{"logistic regression", logreg, existing, logreg + " holds a logistic regression"},
		{"foreign layout", odd, existing, odd},
		{"unwritable output", good, missingDir, missingDir},
		{"output is a directory", good, dir, dir},
		{"output is the checkpoint", good, good, "would overwrite the checkpoint"},
	} {
		_, err := ExportONNX(c.in, c.out)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		msg := err.Error()
		t.Logf("%s: %s", c.name, msg)
		if !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q, want one line containing %q", c.name, msg, c.want)
		}
	}
	if b, _ := os.ReadFile(existing); string(b) != "old" {
		t.Errorf("a failed export changed the existing output to %q", b)
	}
	if _, err := weights.Read(good); err != nil {
		t.Errorf("the checkpoint no longer reads: %v", err)
	}
}
