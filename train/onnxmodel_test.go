package train

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/models"
)

// TestONNXModelConfig checks --init's validation, what Resolved records of
// an ONNX model, its place among the inputs, and x⁰: the file's
// initialisers, or Init(seed) with --init seed.
func TestONNXModelConfig(t *testing.T) {
	file := filepath.Join("..", "models", "testdata", "onnx", "mlp_dropout.onnx")
	abs, _ := filepath.Abs(file)
	cfg := Default()
	cfg.Model = file
	for _, c := range []struct {
		model, init, want string
	}{
		{file, "", ""}, {file, InitFile, ""}, {file, InitSeed, ""}, {"mlp:8", InitSeed, ""},
		{"mlp:8", InitFile, "only a network file"}, {file, "zeros", "file or seed"},
	} {
		k := cfg
		k.Model, k.Init = c.model, c.init
		err := k.Validate()
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("--model %s --init %q: %v, want %q", c.model, c.init, err, c.want)
		}
	}
	for _, c := range []struct{ model, init, wantModel, wantInit string }{
		{file, InitFile, abs, ""}, {file, InitSeed, abs, InitSeed}, {"mlp:8", InitSeed, "mlp:8", ""},
	} {
		k := cfg
		k.Model, k.Init = c.model, c.init
		r, err := k.Resolved()
		if err != nil || r.Model != c.wantModel || r.Init != c.wantInit {
			t.Errorf("Resolved(--model %s --init %q) = %q, %q (%v), want %q, %q", c.model, c.init, r.Model, r.Init, err, c.wantModel, c.wantInit)
		}
	}
	inputs, err := inputFiles(cfg, nil)
	if err != nil || inputs[len(inputs)-1].Path != abs {
		t.Errorf("inputs %v (%v), want %s last", inputs, err, abs)
	}
	m, err := NewModel(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, want, err := models.ImportONNXFile(file, []int{1, 28, 28}, 10)
	if err != nil {
		t.Fatal(err)
	}
	x0, err := initialParams(cfg, m)
	if err != nil || !slices.Equal(x0, want) {
		t.Errorf("x⁰ is not the file's initialisers (%v)", err)
	}
	cfg.Init = InitSeed
	if x0, err := initialParams(cfg, m); err != nil || !slices.Equal(x0, m.Init(cfg.Seed)) {
		t.Errorf("--init seed: x⁰ is not Init(seed) (%v)", err)
	}
}
