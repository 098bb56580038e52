package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestLaunchResumeItersExtends: `launch --resume --iters T` extends a
// launched run to T rounds exactly as `resume --iters T` extends a train
// run: 2 ranks run 20 rounds (the last row, off the --eval-every grid,
// goes), are extended to 30, and end with the metrics and model of a
// 30-round train run. Counts a run cannot take are refused in one line
// (exit 2) before any rank starts.
func TestLaunchResumeItersExtends(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	needA8A(t)
	dir := t.TempDir()
	a8aAbs, _ := filepath.Abs(a8a)
	flags := []string{"--dataset", "libsvm", "--data-dir", a8aAbs, "--batch", "1", "--eta0", "0.1", "--nodes", "4",
		"--eval-every", "8", "--checkpoint-every", "4", "--local-eval", "100", "--grad-samples", "10"}
	one := trainReference(t, dir, append(flags, "--iters", "30"))
	out := filepath.Join(dir, "launch")
	if b, err := gtstorm(t, append([]string{"launch", "--ranks", "2", "--insecure", "--out", out, "--iters", "20"}, flags...)...).CombinedOutput(); err != nil {
		t.Fatalf("launch: %v\n%s", err, b)
	}
	b, err := gtstorm(t, "launch", "--resume", "--out", out, "--iters", "30").CombinedOutput()
	if err != nil {
		t.Fatalf("launch --resume --iters 30: %v\n%s", err, b)
	}
	if !strings.Contains(string(b), "resuming 2 ranks from round 20 to round 30") {
		t.Errorf("launch --resume --iters 30 does not say what it resumes:\n%s", b)
	}
	if got, want := metricsWithoutSeconds(t, out), metricsWithoutSeconds(t, one); got != want {
		t.Errorf("extended launch's metrics\n%s\nwant train's\n%s", got, want)
	}
	sameModel(t, out, one)
	if sum := readSummary(t, out); sum.Iters != 30 || sum.CommRounds != 30 {
		t.Errorf("extended launch's summary: iters %d, rounds %d; want 30", sum.Iters, sum.CommRounds)
	}

	cosine := filepath.Join(dir, "cosine")
	if b, err := gtstorm(t, append([]string{"launch", "--ranks", "2", "--insecure", "--out", cosine, "--iters", "8", "--schedule", "cosine"}, flags...)...).CombinedOutput(); err != nil {
		t.Fatalf("launch cosine: %v\n%s", err, b)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", out, "--iters", "10"}, "--iters 10: want at least the 30 rounds already done"},
		{[]string{"--out", out, "--iters", "0"}, "--iters 0: want the round count"},
		{[]string{"--out", out, "--eta0", "1"}, "--eta0: a resumed run keeps its settings; give none but --iters"},
		{[]string{"--out", cosine, "--iters", "16"}, "--iters 16: want the run's own 8 rounds: its --schedule cosine"},
	} {
		cmd := gtstorm(t, append([]string{"launch", "--resume"}, tc.args...)...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		cmd.Run()
		if code, msg := cmd.ProcessState.ExitCode(), errb.String(); code != 2 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tc.want) {
			t.Errorf("launch --resume %s: exit %d, stderr %q; want exit 2 and one line with %q", strings.Join(tc.args, " "), code, msg, tc.want)
		}
	}
}
