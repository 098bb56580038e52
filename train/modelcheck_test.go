package train

import (
	"path/filepath"
	"testing"
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
