package train

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
)

// TestDiskFull runs into tiny tmpfs folders that fill up at different
// points of the run: the run must fail with an error, and every output left
// behind must be complete (parseable), never torn, with no temporary file.
// It needs permission to mount (root); elsewhere it is skipped.
func TestDiskFull(t *testing.T) {
	needA8A(t)
	failedAt := map[string]bool{} // the outputs whose writing failed
	mounted := false
	for _, kb := range []int{8, 24, 72, 104} {
		t.Run(fmt.Sprintf("%dKiB", kb), func(t *testing.T) {
			dir := t.TempDir()
			if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%dk", kb)); err != nil {
				t.Skipf("cannot mount a small tmpfs here: %v", err)
			}
			defer syscall.Unmount(dir, 0)
			mounted = true
			cfg := lrConfig(decentral.GTSTORM)
			cfg.Nodes, cfg.CheckpointEvery = 40, 10
			_, err := Train(context.Background(), cfg, Options{Out: dir})
			t.Logf("%d KiB: %v", kb, err)
			if err != nil {
				if !strings.Contains(err.Error(), "no space left") {
					t.Errorf("err = %v, want it to say the disk is full", err)
				}
				for _, f := range []string{MetricsFile, CheckpointFile, ModelFile, SummaryFile, CurveFile} {
					if strings.Contains(err.Error(), "write "+filepath.Join(dir, f)) {
						failedAt[f] = true
					}
				}
			}
			checkNoTornFiles(t, dir)
		})
	}
	if mounted && len(failedAt) < 2 {
		t.Errorf("the disk filled up while writing %v only; want at least two different outputs", failedAt)
	}
}

// checkNoTornFiles parses every output present in dir.
func checkNoTornFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		switch e.Name() {
		case MetricsFile:
			_, err = ReadCSV(bytes.NewReader(b))
		case SummaryFile:
			_, err = ReadSummary(bytes.NewReader(b))
		case ConfigFile:
			_, err = readConfig(path)
		case CheckpointFile:
			_, err = readCheckpoint(path)
		case ModelFile:
			_, _, err = ReadModelFile(path)
		case CurveFile:
			_, err = png.Decode(bytes.NewReader(b))
		default:
			err = fmt.Errorf("unexpected file (a temporary left behind?)")
		}
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
		}
	}
}
