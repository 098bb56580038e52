package train

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
)

// rowsOf reads a run folder's metrics rows in exact form, wall times aside.
func rowsOf(t *testing.T, dir string) []string {
	t.Helper()
	_, rows, err := readRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	return withoutSeconds(rows)
}

func sameRows(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("metrics rows differ:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// TestExtendEqualsLonger: a finished 25-round run (eval every 10) extended
// to 30 rounds has the rows of a fresh 30-round run: 0, 10, 20, 30, not 25.
func TestExtendEqualsLonger(t *testing.T) {
	needA8A(t)
	cfg := lrConfig(decentral.GTSTORM)
	cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = 30, 10, 0
	fresh := t.TempDir()
	want, err := Train(context.Background(), cfg, Options{Out: fresh})
	if err != nil {
		t.Fatal(err)
	}
	short := cfg
	short.Iters = 25
	ext := t.TempDir()
	if _, err := Train(context.Background(), short, Options{Out: ext}); err != nil {
		t.Fatal(err)
	}
	got, err := Resume(context.Background(), ext, 30, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, rowsOf(t, ext), rowsOf(t, fresh))
	if got.FinalTestAcc != want.FinalTestAcc || got.CommRounds != 30 {
		t.Errorf("extended summary: acc %v after %d rounds, want %v after 30", got.FinalTestAcc, got.CommRounds, want.FinalTestAcc)
	}
}

// TestResumeToRoundsDone: resume --iters R with R the rounds already done
// evaluates round R, as a fresh R-round run does.
func TestResumeToRoundsDone(t *testing.T) {
	needA8A(t)
	cfg := lrConfig(decentral.DSGD)
	cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = 60, 20, 10
	cut := t.TempDir()
	// Cancelled at the 33rd look: Train's own, Init's, then one per round.
	if _, err := Train(&cancelOnLook{Context: context.Background(), at: 33}, cfg, Options{Out: cut}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want an interruption", err)
	}
	ck, err := readCheckpoint(filepath.Join(cut, CheckpointFile))
	if err != nil || ck.snap.Round != 30 {
		t.Fatalf("checkpoint of round %v (%v); the test needs one of round 30, between evaluations", ck.snap.Round, err)
	}
	got, err := Resume(context.Background(), cut, 30, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Iters = 30
	fresh := t.TempDir()
	want, err := Train(context.Background(), cfg, Options{Out: fresh})
	if err != nil {
		t.Fatal(err)
	}
	sameRows(t, rowsOf(t, cut), rowsOf(t, fresh))
	if got.FinalTestAcc != want.FinalTestAcc || got.Stationarity != want.Stationarity || got.CommRounds != 30 {
		t.Errorf("summary: acc %v S %v after %d rounds; want %v %v after 30",
			got.FinalTestAcc, got.Stationarity, got.CommRounds, want.FinalTestAcc, want.Stationarity)
	}
}

// cancelOnLook is a context that reports cancellation from the at-th call
// of Err on.
type cancelOnLook struct {
	context.Context
	looks, at int
}

func (c *cancelOnLook) Err() error {
	c.looks++
	if c.looks >= c.at {
		return context.Canceled
	}
	return nil
}

// TestNoStaleSummaryReused: an interrupted resume --iters N leaves no
// summary of the shorter run, and a grid of N rounds then finishes the run
// instead of reusing the shorter one.
func TestNoStaleSummaryReused(t *testing.T) {
	needA8A(t)
	cfg := lrConfig(decentral.DSGD)
	cfg.Iters, cfg.CheckpointEvery = 20, 0
	out := t.TempDir()
	run := filepath.Join(out, "dsgd", "seed1") // as a grid runs it (experiment.RunGrid)
	if _, _, err := RunOrReuse(context.Background(), cfg, Options{Out: run}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Resume(ctx, run, 40, Options{}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("resume: err = %v, want an interruption", err)
	}
	if _, err := os.Stat(filepath.Join(run, SummaryFile)); err == nil {
		t.Error("the 20-round summary outlived a resume to 40 rounds")
	}
	cfg40 := cfg
	cfg40.Iters = 40
	s, _, err := RunOrReuse(context.Background(), cfg40, Options{Out: run})
	if err != nil {
		t.Fatal(err)
	}
	if s.CommRounds != 40 {
		t.Errorf("grid of 40 rounds reports a run of %d", s.CommRounds)
	}
	// A summary that claims fewer rounds than the configuration is never
	// taken for a finished run.
	sum, rows, err := readRun(run)
	if err != nil {
		t.Fatal(err)
	}
	if finished(sum, rows, cfg) {
		t.Error("a 40-round run passes for a finished 20-round one")
	}
}

// TestResumeIndependentOfFolder: a run started with relative --data-dir
// and --topology resumes from another folder holding other files of the
// same names on the files it started with, and refuses once those change.
func TestResumeIndependentOfFolder(t *testing.T) {
	needA8A(t)
	a8aAbs, _ := filepath.Abs(a8a)
	src, _ := os.ReadFile(a8aAbs)
	test, _ := os.ReadFile(a8aAbs + ".t")
	first, second := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(first, "a8a"), src, 0o644)
	os.WriteFile(filepath.Join(first, "a8a.t"), test, 0o644)
	os.WriteFile(filepath.Join(first, "edges.txt"), []byte("0 1\n1 2\n2 3\n3 4\n4 0\n0 2\n"), 0o644)
	os.WriteFile(filepath.Join(second, "a8a"), src[:len(src)/2], 0o644) // no a8a.t
	os.WriteFile(filepath.Join(second, "edges.txt"), []byte("0 1\n1 2\n2 3\n3 4\n"), 0o644)

	cfg := lrConfig(decentral.GTSTORM)
	cfg.DataDir, cfg.Topology, cfg.Nodes, cfg.Iters = "a8a", "edges.txt", 5, 40
	out := filepath.Join(t.TempDir(), "run")
	t.Chdir(first)
	full := filepath.Join(t.TempDir(), "full")
	want, err := Train(context.Background(), cfg, Options{Out: full})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := Train(ctx, cfg, Options{Out: out, Progress: cancelAt{"round 20/", cancel}}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want an interruption", err)
	}
	t.Chdir(second)
	got, err := Resume(context.Background(), out, 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Edges != want.Edges || got.EvalSet != "test" || got.FinalTestAcc != want.FinalTestAcc {
		t.Errorf("resumed from another folder: %d edges, eval on %s, acc %v; want %d, test, %v",
			got.Edges, got.EvalSet, got.FinalTestAcc, want.Edges, want.FinalTestAcc)
	}
	sameRows(t, rowsOf(t, out), rowsOf(t, full))

	// Changed inputs are refused, naming the file.
	for _, f := range []string{"edges.txt", "a8a.t"} {
		path := filepath.Join(first, f)
		old, _ := os.ReadFile(path)
		os.WriteFile(path, append(old, "\n"...), 0o644)
		_, err := Resume(context.Background(), out, 60, Options{})
		if !errors.Is(err, ErrInputsChanged) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s changed: err = %v, want a refusal naming it", f, err)
		}
		os.WriteFile(path, old, 0o644)
	}
}

// TestTrainTakesOverUncheckpointedFolder: a run killed before its first
// checkpoint leaves config.json and metrics.csv; resume says there is
// nothing to resume, and train takes the folder over without --force.
func TestTrainTakesOverUncheckpointedFolder(t *testing.T) {
	needA8A(t)
	out := t.TempDir()
	cfg := lrConfig(decentral.DSGD)
	cfg.Iters = 10
	writeJSON(filepath.Join(out, ConfigFile), cfg)
	os.WriteFile(filepath.Join(out, MetricsFile), csvBytes(nil), 0o644)
	if _, err := Resume(context.Background(), out, 0, Options{}); err == nil || !strings.Contains(err.Error(), "before its first checkpoint") {
		t.Errorf("resume: err = %v, want 'before its first checkpoint'", err)
	}
	if _, err := Train(context.Background(), cfg, Options{Out: out}); err != nil {
		t.Fatalf("train over a folder with no checkpoint: %v", err)
	}
}

// TestInterruptBeforeFirstRound: a signal during loading or Init is an
// interruption with a hint, not a bare "context canceled" (in a grid too:
// experiment's TestGridInterruptedBeforeFirstRound).
func TestInterruptBeforeFirstRound(t *testing.T) {
	needA8A(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := lrConfig(decentral.GTSTORM)
	out := t.TempDir()
	_, err := Train(ctx, cfg, Options{Out: out})
	if !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "before the first round") {
		t.Errorf("train: err = %v, want an interruption before the first round", err)
	}
	if _, err := Train(context.Background(), cfg, Options{Out: out}); err != nil {
		t.Errorf("train again after the early interruption: %v", err)
	}
}

// TestResumeRefusesEditedConfig: resume does not silently overwrite a
// hand-edited config.json.
func TestResumeRefusesEditedConfig(t *testing.T) {
	needA8A(t)
	out := t.TempDir()
	cfg := lrConfig(decentral.DSGD)
	cfg.Iters = 10
	if _, err := Train(context.Background(), cfg, Options{Out: out}); err != nil {
		t.Fatal(err)
	}
	edited, _ := cfg.Resolved()
	edited.Eta0 = 0.5
	writeJSON(filepath.Join(out, ConfigFile), edited)
	_, err := Resume(context.Background(), out, 20, Options{})
	if err == nil || !strings.Contains(err.Error(), "eta0") {
		t.Fatalf("err = %v, want a refusal naming eta0", err)
	}
	b, _ := os.ReadFile(filepath.Join(out, ConfigFile))
	if !strings.Contains(string(b), `"eta0": 0.5`) {
		t.Error("the refused resume overwrote the edited config.json")
	}
}

// TestCheckpointCostFlat: with metrics appended, a checkpoint's size does
// not grow with the run's history; a torn last metrics line (a kill in the
// middle of an append) is dropped on resume.
func TestCheckpointCostFlat(t *testing.T) {
	if raceEnabled {
		t.Skip("checkpoint sizes over 200 rounds that evaluate every round: one goroutine's numerics, 5 to 10 times slower under -race; checkpoints, interruption and resume run under it in TestResumeEqualsUninterrupted")
	}
	needA8A(t)
	size := func(iters int) int64 {
		cfg := lrConfig(decentral.DSGD)
		cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = iters, 1, 0
		out := t.TempDir()
		if _, err := Train(context.Background(), cfg, Options{Out: out}); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(filepath.Join(out, CheckpointFile))
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	if short, long := size(10), size(200); long-short > 16 {
		t.Errorf("checkpoint of 10 rows: %d bytes, of 200 rows: %d; want (nearly) the same", short, long)
	}

	cfg := lrConfig(decentral.GTSTORM)
	full := t.TempDir()
	if _, err := Train(context.Background(), cfg, Options{Out: full}); err != nil {
		t.Fatal(err)
	}
	cut := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := Train(ctx, cfg, Options{Out: cut, Progress: cancelAt{"round 30/", cancel}}); !errors.Is(err, ErrInterrupted) {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(filepath.Join(cut, MetricsFile), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("40,0.7,0.6") // a torn row
	f.Close()
	if _, err := Resume(context.Background(), cut, 0, Options{}); err != nil {
		t.Fatal(err)
	}
	sameRows(t, rowsOf(t, cut), rowsOf(t, full))
}

// TestTrainFailingToStartLeavesNoFolder: a run whose data cannot be read
// removes the folder it made; a folder that was there before stays, and a
// run that starts keeps its folder whatever happens later.
func TestTrainFailingToStartLeavesNoFolder(t *testing.T) {
	dir := t.TempDir()
	cfg := lrConfig(decentral.DSGD)
	cfg.DataDir = filepath.Join(dir, "no-such.libsvm")
	for _, c := range []struct {
		name   string
		before bool
	}{{"made by the run", false}, {"there before", true}} {
		out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
		if c.before {
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := Train(context.Background(), cfg, Options{Out: out}); err == nil {
			t.Fatalf("%s: trained on missing data", c.name)
		}
		_, err := os.Stat(out)
		if exists := err == nil; exists != c.before {
			t.Errorf("%s: folder exists %v after the failed start, want %v", c.name, exists, c.before)
		}
	}
}

// TestMissingFlagFileNamesTheFlag: a partition file that is not there is
// refused naming --partition, not only the path.
func TestMissingFlagFileNamesTheFlag(t *testing.T) {
	cfg := lrConfig(decentral.DSGD)
	cfg.Partition = "file:" + filepath.Join(t.TempDir(), "nodes.txt")
	_, err := Train(context.Background(), cfg, Options{Out: filepath.Join(t.TempDir(), "run")})
	if err == nil || !strings.HasPrefix(err.Error(), "--partition "+cfg.Partition+": ") {
		t.Errorf("err = %v, want one naming --partition %s", err, cfg.Partition)
	}
}
