package models

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// fuzzShapes are the data shapes a fuzzed file is imported against: the
// committed fixtures' images and vectors.
var fuzzShapes = [][]int{{1, 28, 28}, {3, 32, 32}, {784}}

// FuzzImportONNX feeds the committed ONNX fixtures, and the fuzzer's
// mutations of them, to ImportONNX on each fixture shape. A file either is
// refused with an error (one line, naming the file) or gives a model whose
// gradient on a two-sample batch is computed without a panic; an imported
// model's parameter vector has its declared length.
func FuzzImportONNX(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "onnx", "*.onnx"))
	if err != nil || len(files) == 0 {
		f.Fatalf("fixtures: %v (%d files)", err, len(files))
	}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, shape := range fuzzShapes {
			m, x0, err := ImportONNX("fuzz.onnx", b, shape, 10)
			if err != nil {
				if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "fuzz.onnx") {
					t.Fatalf("shape %v: error is not one line naming the file: %q", shape, msg)
				}
				continue
			}
			if len(x0) != m.NumParams() {
				t.Fatalf("shape %v: %d initial values, %d parameters", shape, len(x0), m.NumParams())
			}
			if m.NumParams() > 1<<20 {
				continue // a mutated size too large to evaluate here
			}
			w, err := m.NewWorker()
			if err != nil {
				continue
			}
			d := imageSet(1, 2, 10, false, shape...)
			g := make([]float32, m.NumParams())
			w.Grad(x0, batchOf(d, 0, 1), g) // must not panic; NaN from mutated weights is fine
		}
	})
}

// mutation changes one thing in a parsed model. A NaN where the file says
// how a layer computes (an attribute, a Constant's value) must be refused.
type mutation struct {
	apply  func(m *onnx.Model)
	refuse bool
}

// badInts are the values an integer attribute or constant is set to.
var badInts = []int64{0, -1, -3, 2, 7, 1 << 40, -1 << 40}

// badFloats are the values a float attribute or constant is set to.
var badFloats = []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), -1, 0, 1, 2, 1e30}

// mutations lists, for a parsed model, every single-point change the
// structured test tries: each node removed, its last input dropped or
// renamed; each integer of each attribute and integer constant set to each
// of badInts, and each float one to each of badFloats; each dimension of
// the graph's input set to each of badInts, and its rank halved; each
// initialiser dimension grown by one or zeroed, and each of its first
// integers set to each of badInts.
func mutations(om *onnx.Model) []mutation {
	var ms []mutation
	add := func(refuse bool, f func(m *onnx.Model)) { ms = append(ms, mutation{f, refuse}) }
	for i, n := range om.Graph.Nodes {
		add(false, func(m *onnx.Model) { m.Graph.Nodes = slices.Delete(m.Graph.Nodes, i, i+1) })
		if len(n.Inputs) > 0 {
			last := len(n.Inputs) - 1
			add(false, func(m *onnx.Model) { m.Graph.Nodes[i].Inputs = m.Graph.Nodes[i].Inputs[:last] })
			add(false, func(m *onnx.Model) { m.Graph.Nodes[i].Inputs[last] = "no such value" })
		}
		for j, a := range n.Attrs {
			for _, v := range badInts {
				if a.Type == onnx.AttrInt {
					add(false, func(m *onnx.Model) { m.Graph.Nodes[i].Attrs[j].I = v })
				}
				for k := range min(len(a.Ints), 4) {
					add(false, func(m *onnx.Model) { m.Graph.Nodes[i].Attrs[j].Ints[k] = v })
				}
				if a.T != nil {
					for k := range min(len(a.T.Int64s), 4) {
						add(false, func(m *onnx.Model) { m.Graph.Nodes[i].Attrs[j].T.Int64s[k] = v })
					}
					for k := range min(len(a.T.Dims), 4) {
						add(false, func(m *onnx.Model) { m.Graph.Nodes[i].Attrs[j].T.Dims[k] = v })
					}
				}
			}
			for _, v := range badFloats {
				nan := math.IsNaN(float64(v))
				if a.Type == onnx.AttrFloat {
					add(nan, func(m *onnx.Model) { m.Graph.Nodes[i].Attrs[j].F = v })
				}
				if a.T != nil {
					for k := range min(len(a.T.Floats), 2) {
						add(nan, func(m *onnx.Model) { m.Graph.Nodes[i].Attrs[j].T.Floats[k] = v })
					}
				}
			}
		}
	}
	for i, in := range om.Graph.Inputs {
		for k := range in.Shape {
			for _, v := range badInts {
				add(false, func(m *onnx.Model) { m.Graph.Inputs[i].Shape[k] = onnx.Dim{Value: v} })
			}
		}
		add(false, func(m *onnx.Model) { m.Graph.Inputs[i].Shape = m.Graph.Inputs[i].Shape[:len(in.Shape)/2] })
	}
	for i, t := range om.Graph.Initializers {
		for k := range t.Dims {
			add(false, func(m *onnx.Model) { m.Graph.Initializers[i].Dims[k]++ })
			add(false, func(m *onnx.Model) { m.Graph.Initializers[i].Dims[k] = 0 })
		}
		for k := range min(len(t.Int64s), 4) {
			for _, v := range badInts {
				add(false, func(m *onnx.Model) { m.Graph.Initializers[i].Int64s[k] = v })
			}
		}
	}
	return ms
}

// TestImportONNXMutations imports every single-point mutation of every
// committed fixture (see mutations) on the fixtures' shapes: each is
// refused in one line naming the file, or imports to a model whose
// gradient on a two-sample batch is computed without a panic; a NaN in an
// attribute or a Constant is refused.
func TestImportONNXMutations(t *testing.T) {
	if testing.Short() {
		t.Skip("imports thousands of mutated files")
	}
	files, err := filepath.Glob(filepath.Join("testdata", "onnx", "*.onnx"))
	if err != nil || len(files) == 0 {
		t.Fatalf("fixtures: %v (%d files)", err, len(files))
	}
	var tried, imported int
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		om, err := onnx.Unmarshal(b)
		if err != nil {
			t.Fatal(err)
		}
		for i, mu := range mutations(om) {
			for _, shape := range fuzzShapes {
				m, err := onnx.Unmarshal(b)
				if err != nil {
					t.Fatal(err)
				}
				mu.apply(m)
				tried++
				what := fmt.Sprintf("%s mutation %d", filepath.Base(path), i)
				if importMutated(t, what, m, shape) {
					imported++
					if mu.refuse {
						t.Errorf("%s, shape %v: a NaN in an attribute or constant imports", what, shape)
					}
				}
			}
		}
	}
	t.Logf("%d mutated imports, %d imported", tried, imported)
}

// importMutated imports m on shape, failing t on a panic or on an error
// that is not one line naming the file, and reports whether it imported.
func importMutated(t *testing.T, what string, m *onnx.Model, shape []int) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s, shape %v: panic: %v\n%s", what, shape, r, panicSite(debug.Stack()))
		}
	}()
	model, x0, err := importModel("fuzz.onnx", m, shape, 10, ImportOptions{})
	if err != nil {
		if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "fuzz.onnx") {
			t.Errorf("%s, shape %v: error is not one line naming the file: %q", what, shape, msg)
		}
		return false
	}
	if len(x0) != model.NumParams() || model.NumParams() > 1<<20 {
		return true
	}
	w, err := model.NewWorker()
	if err != nil {
		return true
	}
	d := imageSet(1, 2, 10, false, shape...)
	w.Grad(x0, batchOf(d, 0, 1), make([]float32, model.NumParams()))
	return true
}

// panicSite is the frame of a panic's stack that raised it: the first
// function of this module after the runtime's panic.
func panicSite(stack []byte) string {
	lines := strings.Split(string(stack), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "panic(") {
			for j, l := range lines[i+1 : len(lines)-1] {
				if strings.Contains(l, "gtstorm/") && !strings.Contains(l, "runtime") {
					return strings.Fields(lines[i+2+j])[0]
				}
			}
		}
	}
	return string(stack)
}
