package train

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/weights"
)

// knobsFixture holds 10-round runs of D-GET (--period 5 --big-batch 40)
// and CHOCO (--compress topk:0.1 --gamma 0.2) on a8a written by the build
// of commit 771e7c7, whose config.json and checkpoints keep the method
// knobs beside the other settings ("period", "big_batch", "compress",
// "gamma") and write D-GET's period for every method.
const knobsFixture = "testdata/knobs-771e7c7"

// fixtureDataDir is the a8a path the fixture's runs recorded.
const fixtureDataDir = "/work/main/testdata/libsvm/a8a"

// copyFixtureRun copies the fixture run of algo to a new folder, the
// recorded folder of a8a and a8a.t replaced by this checkout's (in
// config.json and in the checkpoint's metadata, its settings and its
// inputs, each left in its old form otherwise), and returns the folder.
func copyFixtureRun(t *testing.T, algo string) string {
	t.Helper()
	abs, err := filepath.Abs(a8a)
	if err != nil {
		t.Fatal(err)
	}
	// Every recorded path starts with a quote and the folder.
	from, to := `"`+filepath.Dir(fixtureDataDir)+"/", `"`+filepath.Dir(abs)+string(filepath.Separator)
	src, out := filepath.Join(knobsFixture, algo), t.TempDir()
	for _, f := range []string{ConfigFile, MetricsFile} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		b = []byte(strings.ReplaceAll(string(b), from, to))
		if err := os.WriteFile(filepath.Join(out, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ck, err := weights.Read(filepath.Join(src, CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ck.Meta), from+"a8a.t") {
		t.Fatalf("%s: the checkpoint's metadata does not name %s.t among its inputs", src, fixtureDataDir)
	}
	ck.Meta = []byte(strings.ReplaceAll(string(ck.Meta), from, to))
	if err := weights.Write(filepath.Join(out, CheckpointFile), ck); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOldKnobFiles: the config.json and checkpoint of a D-GET and a CHOCO
// run written before the method knobs moved under the method still load
// with their knobs, and resume to 20 rounds with the rows of a fresh
// 20-round run of the same settings.
func TestOldKnobFiles(t *testing.T) {
	for _, tc := range []struct {
		algo  string
		knobs map[string]string // flag form of each knob that applies
	}{
		{"d-get", map[string]string{"period": "5", "big-batch": "40"}},
		{"choco", map[string]string{"compress": "topk:0.1", "gamma": "0.2"}},
	} {
		t.Run(tc.algo, func(t *testing.T) {
			if tc.algo != "choco" {
				skipVariantUnderRace(t, "choco")
			}
			out := copyFixtureRun(t, tc.algo)
			cfg, err := readConfig(filepath.Join(out, ConfigFile))
			if err != nil {
				t.Fatal(err)
			}
			st, err := readCheckpoint(filepath.Join(out, CheckpointFile))
			if err != nil {
				t.Fatal(err)
			}
			if a, b := ResultKey(cfg), ResultKey(st.meta.Config); a != b {
				t.Errorf("config.json and the checkpoint load differently:\n%s\n%s", a, b)
			}
			if cfg.Algo != tc.algo {
				t.Fatalf("algo %q, want %s", cfg.Algo, tc.algo)
			}
			for _, s := range settings() {
				if want, ok := tc.knobs[s.Name]; ok {
					if got := s.field(&cfg).String(); got != want {
						t.Errorf("--%s %s, want %s", s.Name, got, want)
					}
				}
			}
			if err := cfg.Validate(); err != nil {
				t.Fatalf("the old settings are refused: %v", err)
			}
			if _, err := Resume(context.Background(), out, 20, Options{}); err != nil {
				t.Fatalf("resume of the old checkpoint: %v", err)
			}
			// The resumed run's config.json is today's, the knobs under
			// the method.
			b, err := os.ReadFile(filepath.Join(out, ConfigFile))
			if err != nil {
				t.Fatal(err)
			}
			var file struct {
				Method map[string]any `json:"method"`
			}
			json.Unmarshal(b, &file)
			if file.Method["name"] != tc.algo || len(file.Method) != len(tc.knobs)+1 {
				t.Errorf("the resumed run's config.json holds the method %v", file.Method)
			}
			cfg.Iters = 20
			fresh := t.TempDir()
			if _, err := Train(context.Background(), cfg, Options{Out: fresh}); err != nil {
				t.Fatal(err)
			}
			sameRows(t, rowsOf(t, out), rowsOf(t, fresh))
		})
	}
}
