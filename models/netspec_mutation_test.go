package models

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// specMutants returns js, a NetSpec's JSON, with one change each: every
// number of every layer set to each of a few bad values, every field of a
// layer removed, and each layer removed.
func specMutants(t *testing.T, js []byte) [][]byte {
	t.Helper()
	var base map[string]any
	if err := json.Unmarshal(js, &base); err != nil {
		t.Fatal(err)
	}
	layers := base["layers"].([]any)
	var out [][]byte
	mutate := func(change func(spec map[string]any)) {
		var spec map[string]any
		if err := json.Unmarshal(js, &spec); err != nil {
			t.Fatal(err)
		}
		change(spec)
		b, err := json.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	bad := []float64{0, -1, -7, 3, 1e9, 1 << 40, 0.5}
	for _, v := range bad {
		mutate(func(s map[string]any) { s["classes"] = v })
		for k := range base["shape"].([]any) {
			mutate(func(s map[string]any) { s["shape"].([]any)[k] = v })
		}
	}
	for i, l := range layers {
		mutate(func(s map[string]any) { s["layers"] = append(s["layers"].([]any)[:i:i], s["layers"].([]any)[i+1:]...) })
		for key, val := range l.(map[string]any) {
			mutate(func(s map[string]any) { delete(s["layers"].([]any)[i].(map[string]any), key) })
			switch val := val.(type) {
			case float64:
				for _, v := range bad {
					mutate(func(s map[string]any) { s["layers"].([]any)[i].(map[string]any)[key] = v })
				}
			case []any:
				for k := range min(len(val), 3) {
					for _, v := range bad {
						mutate(func(s map[string]any) { s["layers"].([]any)[i].(map[string]any)[key].([]any)[k] = v })
					}
				}
				mutate(func(s map[string]any) { s["layers"].([]any)[i].(map[string]any)[key] = []any{} })
			case string:
				mutate(func(s map[string]any) { s["layers"].([]any)[i].(map[string]any)[key] = "no such" })
			}
		}
	}
	return out
}

// TestNetFromSpecMutations rebuilds every single-point mutation (see
// specMutants) of the specs of the zoo's networks and of the imported
// fixtures: each is refused with an error, or builds a network whose
// gradient on a two-sample batch is computed without a panic. A model
// file's spec is user input: a hand-edited file must not crash gtstorm.
func TestNetFromSpecMutations(t *testing.T) {
	if testing.Short() {
		t.Skip("rebuilds thousands of mutated specs")
	}
	var models []Model
	for _, name := range []string{"resnet20-gn", "fedavg-cnn", "mlp:16,8"} {
		m, err := New(name, []int{1, 28, 28}, 10)
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, m)
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "onnx", "*.onnx"))
	for _, path := range files {
		for _, shape := range fuzzShapes {
			if m, _, err := ImportONNXFile(path, shape, 10); err == nil {
				models = append(models, m)
				break
			}
		}
	}
	var tried, built int
	for _, m := range models {
		_, js := specJSON(t, m)
		for i, mut := range specMutants(t, js) {
			tried++
			if buildMutatedSpec(t, fmt.Sprintf("%s mutant %d", m.Name(), i), mut) {
				built++
			}
		}
	}
	t.Logf("%d networks, %d mutated specs, %d built", len(models), tried, built)
}

// buildMutatedSpec rebuilds the network of js, failing t on a panic, and
// reports whether it built.
func buildMutatedSpec(t *testing.T, what string, js []byte) (built bool) {
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s: panic: %v\n%s\n%s", what, r, panicSite(debug.Stack()), js)
		}
	}()
	var spec NetSpec
	if err := json.Unmarshal(js, &spec); err != nil {
		return false
	}
	m, err := NetFromSpec(spec)
	if err != nil {
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error of several lines: %q", what, err)
		}
		return false
	}
	if dim := product(spec.Shape); m.NumParams() > 1<<20 || dim <= 0 || dim > 1<<13 || spec.Classes > 1<<10 {
		return true // too large to evaluate here (a model file's data must match it anyway)
	}
	w, err := m.NewWorker()
	if err != nil {
		return true
	}
	d := imageSet(1, 2, spec.Classes, false, spec.Shape...)
	w.Grad(m.Init(1), batchOf(d, 0, 1), make([]float32, m.NumParams()))
	return true
}
