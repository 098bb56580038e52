package modelfile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/train"
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

// TestExport exports an MNIST and a CIFAR-10 model: the file holds the
// graph models.ONNX builds from the checkpoint's weights, and its doc
// string says how the input is scaled.
func TestExport(t *testing.T) {
	dir := t.TempDir()
	cifarCfg := train.Default()
	cifarCfg.Dataset = "cifar10"
	for _, c := range []struct {
		m         models.Model
		meta      []byte
		doc       string
		prop      string
		transform string // the start of gtstorm.input.transform
	}{
		{models.NewMNISTCNN(), mustJSON(t, meta{Config: train.Default()}), "divided by 255, in [0,1]", "gtstorm.dataset", "x = byte/255"},
		{models.NewCIFARCNN(), mustJSON(t, map[string]any{"config": cifarCfg,
			"input": map[string]any{"shape": []int{3, 32, 32}, "mean": []float32{0.5, 0.25, 0.125}, "std": []float32{0.2, 0.3, 0.4},
				"classes": []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}}}),
			"mean [0.5 0.25 0.125] and std [0.2 0.3 0.4]", "gtstorm.input.std", "x = (byte/255 - mean[c]) / std[c], mean and std in gtstorm.input.mean"},
		{models.NewCIFARCNN(), mustJSON(t, meta{Config: cifarCfg}), "mean and standard deviation of the CIFAR-10 training set", "gtstorm.normalize",
			"x = (byte/255 - mean[c]) / std[c], mean and std of the CIFAR-10 training set (not recorded)"},
	} {
		ckpt := filepath.Join(dir, c.m.Name()+".gtck")
		params := writeCNNCheckpoint(t, ckpt, c.m, c.meta)
		out := filepath.Join(dir, c.m.Name()+".onnx")
		res, err := Export(ckpt, out)
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
		om.ProducerVersion = producerVersion()
		want, err := om.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, want) {
			t.Errorf("%s: file differs from the encoding of models.ONNX", c.m.Name())
		}
		// The file's own fields, decoded: gtstorm's version and the input's
		// preprocessing.
		version, props := modelInfo(t, b)
		if version == "" || version != producerVersion() {
			t.Errorf("%s: producer_version %q, want %q", c.m.Name(), version, producerVersion())
		}
		if _, ok := props[c.prop]; !ok {
			t.Errorf("%s: metadata lacks %s: %v", c.m.Name(), c.prop, props)
		}
		if props["gtstorm.input.scale"] != "1/255" || !strings.HasPrefix(props["gtstorm.input.transform"], c.transform) {
			t.Errorf("%s: input scale %q and transform %q, want 1/255 and %q", c.m.Name(),
				props["gtstorm.input.scale"], props["gtstorm.input.transform"], c.transform)
		}
		if _, ok := props["gtstorm.input.background"]; ok != (c.m.Name() == "mnist-cnn") {
			t.Errorf("%s: metadata has gtstorm.input.background: %v", c.m.Name(), ok)
		}
		left, _ := filepath.Glob(filepath.Join(dir, ".*tmp*"))
		if len(left) > 0 {
			t.Errorf("temporary files left: %v", left)
		}
	}
}

// modelInfo decodes the producer_version (field 3) and metadata_props
// (field 14, entries of key 1 and value 2) of an ONNX ModelProto,
// following the protobuf wire format independently of internal/onnx.
func modelInfo(t *testing.T, b []byte) (string, map[string]string) {
	t.Helper()
	var version string
	props := map[string]string{}
	for num, v := range protoFields(t, b) {
		switch num {
		case 3:
			version = string(v)
		case 14:
			var key, value string
			for n, f := range protoFields(t, v) {
				if n == 1 {
					key = string(f)
				} else if n == 2 {
					value = string(f)
				}
			}
			if _, dup := props[key]; dup {
				t.Errorf("metadata key %q occurs twice", key)
			}
			props[key] = value
		}
	}
	return version, props
}

// protoFields yields the field number and payload of each length-delimited
// field of a protobuf message, skipping the others.
func protoFields(t *testing.T, b []byte) func(yield func(int, []byte) bool) {
	return func(yield func(int, []byte) bool) {
		for len(b) > 0 {
			key, n := binary.Uvarint(b)
			if n <= 0 {
				t.Fatalf("bad field key at % x", b[:min(len(b), 8)])
			}
			b = b[n:]
			var payload []byte
			switch key & 7 {
			case 0:
				if _, n = binary.Uvarint(b); n <= 0 {
					t.Fatalf("field %d: bad varint", key>>3)
				}
			case 1:
				n = 8 // fixed64
			case 5:
				n = 4 // fixed32
			case 2:
				l, m := binary.Uvarint(b)
				if m <= 0 || uint64(len(b)-m) < l {
					t.Fatalf("field %d: bad length", key>>3)
				}
				payload, n = b[m:m+int(l)], m+int(l)
			default:
				t.Fatalf("field %d: wire type %d", key>>3, key&7)
			}
			if n > len(b) {
				t.Fatalf("field %d: truncated", key>>3)
			}
			b = b[n:]
			if key&7 == 2 && !yield(int(key>>3), payload) {
				return
			}
		}
	}
}

// TestModuleVersion: the producer_version of an export is gtstorm's module
// version from the build information, whether gtstorm is the main module
// or a dependency, and "devel" when none is recorded.
func TestModuleVersion(t *testing.T) {
	dep := func(path, version string, replace *debug.Module) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v9.9.9"},
			Deps: []*debug.Module{{Path: "golang.org/x/image", Version: "v0.30.0"}, {Path: path, Version: version, Replace: replace}}}
	}
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"main module", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v1.4.0"}}, true, "v1.4.0"},
		{"pseudo-version", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v0.0.0-20260101000000-abcdef123456+dirty"}}, true, "v0.0.0-20260101000000-abcdef123456+dirty"},
		{"devel build", &debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"}}, true, "devel"},
		{"test binary", &debug.BuildInfo{Main: debug.Module{Path: modulePath}}, true, "devel"},
		{"dependency", dep(modulePath, "v1.2.0", nil), true, "v1.2.0"},
		{"replaced dependency", dep(modulePath, "v1.2.0", &debug.Module{Path: "example.com/fork", Version: "v1.2.1"}), true, "v1.2.1"},
		{"replaced by a folder", dep(modulePath, "v1.2.0", &debug.Module{Path: "../gtstorm"}), true, "devel"},
		{"not linked", dep("example.com/other", "v1.0.0", nil), true, "devel"},
		{"no build information", nil, false, "devel"},
	} {
		if got := moduleVersion(c.bi, c.ok); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestExportErrors: bad input gets a one-line error naming the file,
// and an existing output file is left as it was.
func TestExportErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "model.gtck")
	writeCNNCheckpoint(t, good, models.NewMNISTCNN(), mustJSON(t, meta{Config: train.Default()}))
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
		_, err := Export(c.in, c.out)
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

// TestExportDocDatasets: the doc string names the logits of the run's
// class count, and the metadata records a dark background for the
// light-on-dark data (MNIST, Fashion-MNIST, FEMNIST) and for no other.
func TestExportDocDatasets(t *testing.T) {
	for _, c := range []struct {
		dataset string
		classes int
		dark    bool
	}{
		{"mnist", 10, true},
		{"fashion-mnist", 10, true},
		{"femnist", 62, true},
		{"cifar100", 100, false},
		{"images", 3, false},
	} {
		cfg := train.Default()
		cfg.Dataset = c.dataset
		in := &train.InputSpec{Shape: []int{1, 28, 28}, Classes: make([]string, c.classes)}
		doc, list := exportDoc("resnet20-gn", "model.gtck", &exportMeta{Config: &cfg, Input: in})
		props := map[string]string{}
		for _, p := range list {
			props[p.Key] = p.Value
		}
		if want := fmt.Sprintf("Output: float32 [N,%d] class logits", c.classes); !strings.Contains(doc, want) {
			t.Errorf("%s: doc %q lacks %q", c.dataset, doc, want)
		}
		if bg, ok := props["gtstorm.input.background"]; ok != c.dark || (ok && !strings.Contains(bg, c.dataset)) {
			t.Errorf("%s: background %q (present %v), want present %v", c.dataset, bg, ok, c.dark)
		}
	}
}
