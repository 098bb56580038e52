package train

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
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
