package train

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/weights"
)

// TestReadModelFileOlderReleases: the checkpoints of earlier releases that
// train/testdata keeps (format versions 1 to 3) pass the one validation of
// a model file, so eval and export still read them.
func TestReadModelFileOlderReleases(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*", "*.gtck"))
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob(filepath.Join("testdata", "*", "*", "*.gtck"))
	if err != nil {
		t.Fatal(err)
	}
	paths = append(paths, more...)
	if len(paths) == 0 {
		t.Fatal("no checkpoints in testdata")
	}
	for _, p := range paths {
		ck, m, err := ReadModelFile(p)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		t.Logf("%s: %s with %d parameters, dataset %s", p, ck.Model, len(ck.Params), m.Config.Dataset)
	}
}

// TestRankCheckpointIsNoModelFile: the checkpoints of the ranks of a run
// spread over processes hold the mean of each rank's own nodes, not the
// run's model, so eval, predict and export refuse them in one line naming
// model.gtck; rank 0's model.gtck is the run's model and passes.
func TestRankCheckpointIsNoModelFile(t *testing.T) {
	needA8A(t)
	cfg := lrConfig(decentral.DSGD)
	cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = 4, 4, 1
	outs, _, errs := runRanks(t, cfg, []int{0, 0, 0, 0, 0, 1, 1, 1, 1, 1}, 2)
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	for r, out := range outs {
		path := filepath.Join(out, CheckpointFile)
		_, _, err := ReadModelFile(path)
		want := fmt.Sprintf("the checkpoint of rank %d of 2 of a run spread over ranks", r)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), ModelFile) || strings.Contains(err.Error(), "\n") {
			t.Errorf("rank %d's checkpoint: err = %v, want one line with %q naming %s", r, err, want, ModelFile)
		}
	}
	if _, _, err := ReadModelFile(filepath.Join(outs[0], ModelFile)); err != nil {
		t.Errorf("rank 0's model file: %v", err)
	}
}

// TestReadModelFileONNX: an ONNX file given where a model file is wanted
// (eval, predict, export) is refused in one line that says how it becomes
// one; any other file that is no checkpoint gets no such hint.
func TestReadModelFileONNX(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		hint bool
	}{{"net.onnx", true}, {"NET.ONNX", true}, {"net.bin", false}} {
		path := filepath.Join(dir, c.name)
		if err := os.WriteFile(path, []byte("\x08\x07\x12\x07pytorch"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, err := ReadModelFile(path)
		if err == nil || !errors.Is(err, weights.ErrNotCheckpoint) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("%s: %v, want one line wrapping weights.ErrNotCheckpoint", c.name, err)
		}
		if got := strings.Contains(err.Error(), "gtstorm train --model "+path); got != c.hint {
			t.Errorf("%s: %v; the hint to train it given: %v, want %v", c.name, err, got, c.hint)
		}
	}
}
