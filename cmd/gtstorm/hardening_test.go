package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// TestBadFilesExit1: a bad input file (data, edge list) is an error of the
// run, not of the command line: one line naming the file, exit status 1, as
// the README says.
func TestBadFilesExit1(t *testing.T) {
	dir := t.TempDir()
	edges := filepath.Join(dir, "junk.edges")
	os.WriteFile(edges, []byte("0 1\n1 x\n"), 0o644)
	svm := filepath.Join(dir, "bad.svm")
	os.WriteFile(svm, []byte("1 1:0.5\nfoo 2:1\n"), 0o644)
	for _, args := range [][]string{
		{"train", "--topology", edges, "--out", filepath.Join(dir, "a")},
		{"train", "--dataset", "libsvm", "--data-dir", svm, "--batch", "1", "--out", filepath.Join(dir, "b")},
	} {
		cmd := gtstorm(t, args...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		cmd.Run()
		msg := errb.String()
		if code := cmd.ProcessState.ExitCode(); code != 1 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, dir) {
			t.Errorf("gtstorm %s: exit %d, stderr %q; want exit 1 and one line naming the file", strings.Join(args, " "), code, msg)
		}
	}
}

// TestGridInterruptNamesFolder: an interrupted grid whose --out was
// defaulted (it carries a timestamp) prints the exact command, with that
// folder, that continues it.
func TestGridInterruptNamesFolder(t *testing.T) {
	needA8A(t)
	dir := t.TempDir()
	a8aAbs, _ := filepath.Abs(a8a)
	cmd := gtstorm(t, "compare", "--dataset", "libsvm", "--data-dir", a8aAbs, "--algos", "dsgd", "--partitions", "iid",
		"--batch", "1", "--eta0", "0.1", "--iters", "200000", "--eval-every", "1000", "--local-eval", "100", "--grad-samples", "10")
	cmd.Dir = dir
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "round 1000/") {
			cmd.Process.Signal(syscall.SIGINT)
		}
	}
	cmd.Wait()
	runs, _ := filepath.Glob(filepath.Join(dir, "runs", "*-compare-libsvm"))
	if len(runs) != 1 {
		t.Fatalf("want one default output folder, have %v\n%s", runs, log.String())
	}
	want := "--out runs/" + filepath.Base(runs[0])
	if !strings.Contains(log.String(), "gtstorm compare ") || !strings.Contains(log.String(), want) {
		t.Errorf("the interrupted grid does not print the command that continues it (with %q):\n%s", want, log.String())
	}
}

// TestSecondSignalStopsAtOnce: a second signal ends the process at once
// (exit 130) and leaves no temporary file behind.
func TestSecondSignalStopsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("a run of several seconds")
	}
	out := filepath.Join(t.TempDir(), "run")
	cmd := gtstorm(t, "train", "--dataset", "mnist", "--iters", "100000", "--eval-every", "1", "--checkpoint-every", "1",
		"--local-eval", "10000", "--out", out)
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	sc := bufio.NewScanner(stderr)
	sent := 0
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		switch {
		case sent == 0 && strings.HasPrefix(sc.Text(), "round 2/"):
			cmd.Process.Signal(syscall.SIGINT)
			sent++
		case sent == 1 && strings.Contains(sc.Text(), "stopping after the current round"):
			// The round in progress takes a second (an evaluation on 10000
			// samples per node): the second signal lands inside it.
			cmd.Process.Signal(syscall.SIGINT)
			sent++
		}
	}
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 || !strings.Contains(log.String(), "stopped at once") {
		t.Errorf("exit %d after two signals, want 130\n%s", code, log.String())
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// TestTrainKeepsUsersOutputs: a folder holding only a user's own
// metrics.csv or curve.png (no config.json, which a run writes first) is
// not a run's: train refuses it without --force, naming the file, and
// leaves the file as it was.
func TestTrainKeepsUsersOutputs(t *testing.T) {
	for _, name := range []string{"metrics.csv", "curve.png"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte("mine"), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr bytes.Buffer
			code := run([]string{"train", "--out", dir, "--iters", "2", "--eval-every", "2", "--local-eval", "20", "--grad-samples", "10"}, &stdout, &stderr)
			if code == 0 || !strings.Contains(stderr.String(), name) || strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("train into a folder holding only %s: exit %d, stderr %q; want a one-line refusal naming it", name, code, stderr.String())
			}
			if b, err := os.ReadFile(path); err != nil || string(b) != "mine" {
				t.Errorf("%s after the refusal: %q, %v", name, b, err)
			}
		})
	}
}

// TestRefusedAtStartLeavesNothing: a bad setting or a missing --data-dir
// given to a command that makes its folder before it loads the data (rank,
// launch, compare, sweep), or an unknown dataset to eval, is refused before
// anything is written: one line naming the flag, exit status 2 for a bad
// setting and 1 for a missing file, and the working folder left empty.
func TestRefusedAtStartLeavesNothing(t *testing.T) {
	needA8A(t)
	in := t.TempDir()
	a8aAbs, _ := filepath.Abs(a8a)
	ranks := filepath.Join(in, "ranks")
	os.WriteFile(ranks, []byte("127.0.0.1:1\n"), 0o644)
	ckpt := filepath.Join(in, "run", "model.gtck")
	small := []string{"--dataset", "libsvm", "--iters", "1", "--nodes", "2", "--batch", "2", "--eval-every", "1", "--local-eval", "50", "--grad-samples", "5"}
	if err := gtstorm(t, append([]string{"train", "--data-dir", a8aAbs, "--out", filepath.Join(in, "run")}, small...)...).Run(); err != nil {
		t.Fatalf("the run to evaluate: %v", err)
	}
	rank := slices.Concat([]string{"rank", "--rank", "0", "--ranks", ranks, "--insecure", "--peer-timeout", "5s", "--out", "out"}, small)
	for _, tc := range []struct {
		args []string
		code int
		flag string
	}{
		{slices.Concat(rank, []string{"--data-dir", a8aAbs, "--eta0", "NaN"}), 2, "--eta0"},
		{slices.Concat(rank, []string{"--data-dir", a8aAbs, "--eta0", "-1"}), 2, "--eta0"},
		{slices.Concat(rank, []string{"--data-dir", a8aAbs, "--partition", "abc"}), 2, "--partition"},
		{slices.Concat(rank, []string{"--data-dir", "nope"}), 1, "--data-dir"},
		{slices.Concat([]string{"launch", "--insecure", "--out", "out"}, small, []string{"--data-dir", "nope"}), 1, "--data-dir"},
		{slices.Concat([]string{"compare", "--algos", "dsgd", "--partitions", "iid", "--out", "out"}, small, []string{"--data-dir", "nope"}), 1, "--data-dir"},
		{slices.Concat([]string{"sweep", "--out", "out"}, small, []string{"--vary", "data-dir=" + a8aAbs + ",nope"}), 1, "--data-dir"},
		{[]string{"eval", "--checkpoint", ckpt, "--dataset", "abc"}, 2, "--dataset"},
		{slices.Concat([]string{"compare", "--algos", "dsgd,abc", "--partitions", "iid", "--out", "out", "--data-dir", a8aAbs}, small), 2, "--algos dsgd,abc"},
		{slices.Concat([]string{"compare", "--algos", "dsgd", "--partitions", "iid,abc", "--out", "out", "--data-dir", a8aAbs}, small), 2, "--partitions iid,abc"},
	} {
		dir := t.TempDir()
		cmd := gtstorm(t, tc.args...)
		cmd.Dir = dir
		var errb bytes.Buffer
		cmd.Stderr = &errb
		cmd.Run()
		msg := errb.String()
		left, _ := os.ReadDir(dir)
		if code := cmd.ProcessState.ExitCode(); code != tc.code || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tc.flag) || len(left) != 0 {
			t.Errorf("gtstorm %s: exit %d, stderr %q, %d entries left in its folder; want exit %d, one line naming %s and nothing written",
				strings.Join(tc.args, " "), code, msg, len(left), tc.code, tc.flag)
		}
	}
}
