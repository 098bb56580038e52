package train

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/internal/inputfile"
)

// toySpec is docs/ARCHITECTURE.md's "add a dataset" done in a test: one
// registry entry for a text format of 2 features and 3 classes ("label x0
// x1" a line, in DIR/toy.txt), registered in a registry of this test only.
func toySpec() data.Spec {
	file := func(dir string) string { return filepath.Join(dir, "toy.txt") }
	load := func(dir string, _ data.LoadOptions) (*data.Dataset, *data.Dataset, error) {
		b, err := inputfile.Read(file(dir), 1<<20, "a toy data file")
		if err != nil {
			return nil, nil, fmt.Errorf("toy: %w", err)
		}
		d := &data.Dataset{Name: "toy-train", Shape: []int{2}, Classes: 3}
		for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var label int
			var x0, x1 float32
			if _, err := fmt.Sscan(line, &label, &x0, &x1); err != nil || label < 0 || label > 2 {
				return nil, nil, fmt.Errorf("load %s: line %d: want a label in [0, 3) and two values", file(dir), i+1)
			}
			d.Labels = append(d.Labels, uint8(label))
			d.Floats = append(d.Floats, x0, x1)
		}
		return d, nil, nil
	}
	return data.Spec{
		Name: "toy", Model: "mlp:4", Load: load,
		Files: func(dir string, _ data.LoadOptions) ([]string, error) { return []string{file(dir)}, nil },
		Sizes: func(string, data.LoadOptions) data.Sizes {
			return data.Sizes{Train: 30, Shape: []int{2}, Classes: 3, Bytes: 30 * 9, Detail: "toy, 30 samples"}
		},
		ClassNames: func(string, data.LoadOptions) []string { return []string{"low", "mid", "high"} },
	}
}

// toyFolder writes 30 toy samples, and a partition file giving them to 3
// nodes, into a new folder.
func toyFolder(t *testing.T) (dir, partition string) {
	dir = t.TempDir()
	var text, part strings.Builder
	for i := range 30 {
		fmt.Fprintf(&text, "%d %g %g\n", i%3, float64(i%3)+0.1*float64(i%5), 0.5)
		fmt.Fprintf(&part, "%d\n", (i/2)%3)
	}
	partition = filepath.Join(dir, "nodes.txt")
	for p, b := range map[string]string{filepath.Join(dir, "toy.txt"): text.String(), partition: part.String()} {
		if err := os.WriteFile(p, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, partition
}

// TestToyDatasetTrains adds a dataset through a registry of its own and
// trains on it with a partition file: the run validates, estimates its
// memory, loads, trains the entry's default model, records both files as
// inputs and names the classes as the entry does; the built-ins know
// nothing of it.
func TestToyDatasetTrains(t *testing.T) {
	reg, err := data.Builtin().With(toySpec())
	if err != nil {
		t.Fatal(err)
	}
	dir, partition := toyFolder(t)
	cfg := Default()
	cfg.Dataset, cfg.DataDir, cfg.Partition = "toy", dir, "file:"+partition
	cfg.Nodes, cfg.Topology, cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = 3, "ring", 6, 3, 3
	cfg.Batch, cfg.LocalEvalSamples, cfg.GradSamples = 2, 0, 0
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "--dataset toy") {
		t.Fatalf("the built-ins take --dataset toy: %v", err)
	}
	cfg = cfg.WithDatasets(reg)
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	if est := cfg.EstimateMemory(); est.Peak <= 0 || cfg.ModelName() != "mlp:4" || cfg.IsLogReg() {
		t.Fatalf("estimate %v, model %s", est.Peak, cfg.ModelName())
	}
	out := filepath.Join(t.TempDir(), "run")
	sum, err := Train(context.Background(), cfg, Options{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range sum.Inputs {
		paths = append(paths, f.Path)
	}
	if !slices.Equal(paths, []string{filepath.Join(dir, "toy.txt"), partition}) {
		t.Fatalf("inputs %v, want the data and the partition file", paths)
	}
	if names := cfg.classNames(3); !slices.Equal(names, []string{"low", "mid", "high"}) {
		t.Fatalf("class names %v", names)
	}
	if names := (Config{Dataset: "toy"}).classNames(3); !slices.Equal(names, []string{"0", "1", "2"}) {
		t.Fatalf("class names without the registry %v", names)
	}
}
