package train

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/internal/kernels"
	"github.com/gtstorm/gtstorm/models"
)

// a8a is the real LibSVM file shipped beside the repository.
const a8a = "../testdata/libsvm/a8a"

// lrConfig is a fast logistic-regression run on a8a.
func lrConfig(algo string) Config {
	c := Default()
	c.Dataset, c.DataDir, c.Algo = "libsvm", a8a, algo
	c.Partition, c.Batch, c.Eta0 = "iid", 1, 0.1
	c.Iters, c.EvalEvery, c.CheckpointEvery = 60, 10, 20
	c.LocalEvalSamples, c.GradSamples = 500, 50
	return c
}

func needA8A(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(a8a); err != nil {
		t.Fatalf("a8a, the LibSVM file the tests train on, is missing from testdata/libsvm: %v", err)
	}
}

// cancelAt is a progress writer that cancels a run once it reports round n.
type cancelAt struct {
	marker string
	cancel context.CancelFunc
}

func (c cancelAt) Write(b []byte) (int, error) {
	if bytes.Contains(b, []byte(c.marker)) {
		c.cancel()
	}
	return len(b), nil
}

// withoutSeconds returns rows in metrics.csv's exact form (where NaN equals
// NaN) with their wall times cleared.
func withoutSeconds(rows []Row) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		r.Seconds = 0
		out[i] = strings.Join(r.record(), ",")
	}
	return out
}

// TestResumeEqualsUninterrupted interrupts each algorithm's run between
// checkpoints and resumes it: metrics rows and summary must equal an
// uninterrupted run's, number for number (wall times aside).
func TestResumeEqualsUninterrupted(t *testing.T) {
	needA8A(t)
	for _, algo := range decentral.Algorithms() {
		t.Run(algo, func(t *testing.T) {
			if algo != decentral.GTSTORM {
				skipVariantUnderRace(t, decentral.GTSTORM)
			}
			resumeEqualsUninterrupted(t, lrConfig(algo))
		})
	}
}

// resumeEqualsUninterrupted runs cfg whole, and again interrupted in round
// 30 and resumed, and fails t unless the resumed run's metrics and summary
// equal the whole run's; it returns the interrupted run's checkpoint.
func resumeEqualsUninterrupted(t *testing.T, cfg Config) *resumeState {
	t.Helper()
	full := t.TempDir()
	want, err := Train(context.Background(), cfg, Options{Out: full})
	if err != nil {
		t.Fatal(err)
	}
	_, wantRows, err := readRun(full)
	if err != nil {
		t.Fatal(err)
	}

	cut := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = Train(ctx, cfg, Options{Out: cut, Progress: cancelAt{"round 30/", cancel}})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("interrupted run: err = %v, want ErrInterrupted", err)
	}
	if _, err := os.Stat(filepath.Join(cut, SummaryFile)); err == nil {
		t.Fatal("an interrupted run wrote summary.json")
	}
	ck, err := readCheckpoint(filepath.Join(cut, CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if ck.snap.Round != 30 {
		t.Fatalf("checkpoint of round %d, want 30 (the round in progress when interrupted)", ck.snap.Round)
	}

	got, err := Resume(context.Background(), cut, 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, gotRows, err := readRun(cut)
	if err != nil {
		t.Fatal(err)
	}
	if len(gotRows) != len(wantRows) {
		t.Fatalf("resumed run has %d metrics rows, want %d", len(gotRows), len(wantRows))
	}
	for i, r := range withoutSeconds(gotRows) {
		if w := withoutSeconds(wantRows)[i]; r != w {
			t.Errorf("row %d:\n got %s\nwant %s", i, r, w)
		}
	}
	got.Seconds, want.Seconds = 0, 0
	if !reflect.DeepEqual(*got, *want) {
		t.Errorf("summary:\n got %+v\nwant %+v", *got, *want)
	}
	return ck
}

// TestOutputs checks every output of a finished run and that eval of its
// model reproduces the final test accuracy.
func TestOutputs(t *testing.T) {
	needA8A(t)
	out := t.TempDir()
	cfg := lrConfig(decentral.GTSTORM)
	sum, err := Train(context.Background(), cfg, Options{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{MetricsFile, SummaryFile, CurveFile, ConfigFile, CheckpointFile, ModelFile} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("output %s missing or empty (%v)", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(out, LockFile)); err == nil {
		t.Error("the lock file outlived the run")
	}
	_, rows, err := readRun(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != cfg.Iters/cfg.EvalEvery+1 || rows[0].Round != 0 || rows[len(rows)-1].Round != cfg.Iters {
		t.Errorf("metrics rounds %d..%d in %d rows, want 0..%d every %d", rows[0].Round, rows[len(rows)-1].Round, len(rows), cfg.Iters, cfg.EvalEvery)
	}
	// GT-STORM: m·B·(1 + 2T) samples; 2p floats sent to each neighbour per round.
	if want := int64(cfg.Nodes * cfg.Batch * (1 + 2*cfg.Iters)); sum.Samples != want {
		t.Errorf("samples = %d, want %d", sum.Samples, want)
	}
	if sum.StateFloatsPerNode != 2*sum.Params || sum.CommRounds != cfg.Iters {
		t.Errorf("state floats %d (want %d), rounds %d (want %d)", sum.StateFloatsPerNode, 2*sum.Params, sum.CommRounds, cfg.Iters)
	}
	if first, last := rows[0].Stationarity(), rows[len(rows)-1].Stationarity(); !(last < first) {
		t.Errorf("S(x) went from %g to %g: no progress", first, last)
	}
	// model.gtck holds x̄ as evaluated (what modelfile.Eval computes).
	ck, m, err := ReadModelFile(filepath.Join(out, ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	trainSet, test, err := LoadData(m.Config)
	if err != nil {
		t.Fatal(err)
	}
	model, err := NewModel(m.Config, trainSet)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := models.NewPool(model, 1)
	if err != nil {
		t.Fatal(err)
	}
	acc, loss, err := pool.Evaluate(ck.Params, test, EvalChunk)
	if err != nil {
		t.Fatal(err)
	}
	if acc != float64(sum.FinalTestAcc) || loss != float64(sum.FinalTestLoss) {
		t.Errorf("eval of model.gtck: acc %v loss %v, summary says %v and %v", acc, loss, sum.FinalTestAcc, sum.FinalTestLoss)
	}
}

// TestSameSeedSameMetrics runs a configuration twice, with one and with
// two workers: the metrics and the model file's bytes must be identical,
// and summary.json must record each run's workers and kernel set.
func TestSameSeedSameMetrics(t *testing.T) {
	needA8A(t)
	var runs [][]string
	var models [][]byte
	for _, workers := range []int{1, 2} {
		cfg := lrConfig(decentral.GNSD)
		cfg.Workers = workers
		out := t.TempDir()
		sum, err := Train(context.Background(), cfg, Options{Out: out})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Workers != workers || sum.Kernels != kernels.Name() {
			t.Errorf("summary records workers %d and kernels %q, want %d and %q", sum.Workers, sum.Kernels, workers, kernels.Name())
		}
		_, rows, err := readRun(out)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, withoutSeconds(rows))
		model, err := os.ReadFile(filepath.Join(out, ModelFile))
		if err != nil {
			t.Fatal(err)
		}
		models = append(models, model)
	}
	for i := range runs[0] {
		if runs[0][i] != runs[1][i] {
			t.Errorf("row %d differs between 1 and 2 workers:\n%s\n%s", i, runs[0][i], runs[1][i])
		}
	}
	if !bytes.Equal(models[0], models[1]) {
		t.Errorf("%s differs between 1 and 2 workers", ModelFile)
	}
}

// TestDivergenceStops makes GT-STORM overflow: the run must stop with an
// error naming the round and node, and keep the last good checkpoint.
func TestDivergenceStops(t *testing.T) {
	needA8A(t)
	out := t.TempDir()
	cfg := lrConfig(decentral.GTSTORM)
	cfg.Eta0, cfg.CheckpointEvery, cfg.EvalEvery, cfg.Iters = 3e38, 2, 5, 50
	_, err := Train(context.Background(), cfg, Options{Out: out})
	if !errors.Is(err, decentral.ErrDiverged) {
		t.Fatalf("err = %v, want a divergence", err)
	}
	for _, w := range []string{"round ", "node ", "last good checkpoint"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	ck, err := readCheckpoint(filepath.Join(out, CheckpointFile))
	if err != nil {
		t.Fatalf("last good checkpoint: %v", err)
	}
	for _, x := range ck.snap.Slab("x") {
		if x != x || x > 3.4e38 || x < -3.4e38 {
			t.Fatalf("checkpoint of round %d holds a non-finite value", ck.snap.Round)
		}
	}
	// summary.json records the divergence, with the last good evaluation.
	sum, rows, err := readRun(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.Diverged, "after round ") || !strings.Contains(sum.Diverged, "NaN or Inf") {
		t.Errorf("summary.json diverged = %q, want the round and the cause", sum.Diverged)
	}
	if last := rows[len(rows)-1]; float64(sum.FinalTestAcc) != last.TestAcc || sum.CommRounds < last.Round {
		t.Errorf("summary: accuracy %v after %d rounds; want the last good row's %v (round %d) and the round it diverged in",
			sum.FinalTestAcc, sum.CommRounds, last.TestAcc, last.Round)
	}
}

// TestTrainKeepsPreviousRun: training into a folder that holds a run is
// refused (nothing lost) unless Overwrite is set.
func TestTrainKeepsPreviousRun(t *testing.T) {
	needA8A(t)
	out := t.TempDir()
	cfg := lrConfig(decentral.DSGD)
	cfg.Iters = 10
	if _, err := Train(context.Background(), cfg, Options{Out: out}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(out, SummaryFile))
	cfg.Seed++
	if _, err := Train(context.Background(), cfg, Options{Out: out}); err == nil || !strings.Contains(err.Error(), "already holds a run") {
		t.Fatalf("second run into %s: err = %v, want a refusal", out, err)
	}
	if after, _ := os.ReadFile(filepath.Join(out, SummaryFile)); !bytes.Equal(before, after) {
		t.Fatal("the refused run changed the previous summary")
	}
	if _, err := Train(context.Background(), cfg, Options{Out: out, Overwrite: true}); err != nil {
		t.Fatalf("with Overwrite: %v", err)
	}
}
