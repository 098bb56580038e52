package train

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/weights"
)

// v1Dir holds, per algorithm, a run folder written by the release whose
// checkpoints are format version 1 (fixed X, V, G slabs): a 40-round
// logistic regression on a8a (lrConfig, DataDir the absolute path of a8a
// beside the repository) interrupted at round 20, with its config.json,
// metrics.csv and checkpoint.gtck, and the metrics.csv of the same run
// uninterrupted (<algo>-uninterrupted.csv), both from that release.
const v1Dir = "testdata/v1-checkpoint"

// TestResumeVersion1Checkpoint resumes each committed version-1 run with
// today's code: the run must finish with exactly the metrics rows the old
// release got without interruption and those of a fresh run today, and its
// checkpoints are now written in the current format.
//
// The checkpoint records a8a's absolute path and SHA-256 (a resume refuses
// changed inputs), so the test runs only where a8a is at the recorded path
// with the same content, and skips elsewhere (as the other a8a tests do).
func TestResumeVersion1Checkpoint(t *testing.T) {
	for _, algo := range []string{decentral.DSGD, decentral.GNSD, decentral.GTSTORM} { // the release's three
		t.Run(algo, func(t *testing.T) {
			if algo != decentral.GTSTORM {
				skipVariantUnderRace(t, decentral.GTSTORM)
			}
			src := filepath.Join(v1Dir, algo)
			b, err := os.ReadFile(filepath.Join(src, CheckpointFile))
			if err != nil {
				t.Fatal(err)
			}
			if v := binary.LittleEndian.Uint32(b[len(weights.Magic):]); v != 1 {
				t.Fatalf("testdata checkpoint is format version %d, want 1", v)
			}
			ck, err := weights.Read(filepath.Join(src, CheckpointFile))
			if err != nil {
				t.Fatal(err)
			}
			names, _ := decentral.StateSlabs(algo)
			if s := ck.Optimizer; s.Round != 20 || len(s.Slabs) != len(names) || s.Slab(names[len(names)-1]) == nil {
				t.Fatalf("the version-1 checkpoint reads as round %d with %d slabs, want round 20 with %q", s.Round, len(s.Slabs), names)
			}
			var cfg Config
			cj, err := os.ReadFile(filepath.Join(src, ConfigFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(cj, &cfg); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(cfg.DataDir); err != nil {
				t.Skipf("the data the checkpoint was written from is not here: %v", err)
			}
			dir := t.TempDir()
			for _, f := range []string{ConfigFile, MetricsFile, CheckpointFile} {
				b, err := os.ReadFile(filepath.Join(src, f))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := Resume(context.Background(), dir, 0, Options{})
			if errors.Is(err, ErrInputsChanged) {
				t.Skipf("the data differs from the checkpoint's: %v", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			old, err := os.ReadFile(filepath.Join(v1Dir, algo+"-uninterrupted.csv"))
			if err != nil {
				t.Fatal(err)
			}
			resumed, err := os.ReadFile(filepath.Join(dir, MetricsFile))
			if err != nil {
				t.Fatal(err)
			}
			if g, w := csvWithoutSeconds(resumed), csvWithoutSeconds(old); g != w {
				t.Errorf("resumed version-1 run:\n%s\nthe old release uninterrupted:\n%s", g, w)
			}

			fresh := t.TempDir()
			want, err := Train(context.Background(), cfg, Options{Out: fresh})
			if err != nil {
				t.Fatal(err)
			}
			_, wantRows, err := readRun(fresh)
			if err != nil {
				t.Fatal(err)
			}
			_, gotRows, err := readRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := strings.Join(withoutSeconds(gotRows), "\n"), strings.Join(withoutSeconds(wantRows), "\n"); g != w {
				t.Errorf("resumed version-1 run:\n%s\nfresh run:\n%s", g, w)
			}
			got.Seconds, want.Seconds = 0, 0
			if !reflect.DeepEqual(*got, *want) {
				t.Errorf("summary:\n got %+v\nwant %+v", *got, *want)
			}
			if b, err := os.ReadFile(filepath.Join(dir, CheckpointFile)); err == nil && !bytes.Equal(b[len(weights.Magic):len(weights.Magic)+4], binary.LittleEndian.AppendUint32(nil, weights.Version)) {
				t.Errorf("the resumed run wrote a checkpoint of version %d, want %d", binary.LittleEndian.Uint32(b[len(weights.Magic):]), weights.Version)
			}
		})
	}
}

// csvWithoutSeconds returns metrics.csv's text with the columns from the
// wall time on cut from every line: the old releases' files end with it,
// today's add sim_seconds after it.
func csvWithoutSeconds(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i, l := range lines {
		fields := strings.Split(l, ",")
		lines[i] = strings.Join(fields[:min(len(fields), 13)], ",")
	}
	return strings.Join(lines, "\n")
}

// TestResumeReleaseCheckpoint resumes a finished 20-round GT-STORM run
// written by the release before this one (commit 8180517: its checkpoint
// carries the metrics rows inside, and no input fingerprints) and extends
// it to 40 rounds: the rows must equal a fresh 40-round run's. Like the
// other a8a tests, it needs a8a at the absolute path the run recorded.
func TestResumeReleaseCheckpoint(t *testing.T) {
	const src = "testdata/release-8180517"
	cj, err := os.ReadFile(filepath.Join(src, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	var cfg Config
	if err := json.Unmarshal(cj, &cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(cfg.DataDir); err != nil {
		t.Skipf("the release run's data %s is not here: %v", cfg.DataDir, err)
	}
	out := t.TempDir()
	for _, f := range []string{CheckpointFile, ConfigFile, MetricsFile} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(out, f), b, 0o644)
	}
	if _, err := Resume(context.Background(), out, 40, Options{}); err != nil {
		t.Fatalf("resume of the release's checkpoint: %v", err)
	}
	cfg.Iters = 40
	fresh := t.TempDir()
	if _, err := Train(context.Background(), cfg, Options{Out: fresh}); err != nil {
		t.Fatal(err)
	}
	sameRows(t, rowsOf(t, out), rowsOf(t, fresh))
}
