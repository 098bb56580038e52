package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLaunchResumeRefusesChangedInputs: a launched run whose data file
// changed since it started is refused by launch --resume in one line,
// before any rank starts, naming the file. Each rank would refuse on its
// own, and launch used to report that as "rank 0 failed" and offer the
// very command that had just failed. With the file restored, the run
// resumes.
func TestLaunchResumeRefusesChangedInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	needA8A(t)
	dir := t.TempDir()
	orig, err := os.ReadFile(a8a)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "a8a")
	if err := os.WriteFile(file, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "launch")
	if b, err := gtstorm(t, "launch", "--ranks", "2", "--insecure", "--out", out, "--iters", "4",
		"--dataset", "libsvm", "--data-dir", file, "--nodes", "4", "--batch", "1", "--local-eval", "100", "--grad-samples", "10").CombinedOutput(); err != nil {
		t.Fatalf("launch: %v\n%s", err, b)
	}
	if err := os.WriteFile(file, append(bytes.Clone(orig), "\n+1 3:1\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	// As a process: launch starts its ranks from its own executable.
	b, err := gtstorm(t, "launch", "--resume", "--out", out, "--iters", "6").CombinedOutput()
	msg := string(b)
	if err == nil || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "inputs changed: input "+file+" changed") || strings.Contains(msg, "rank") {
		t.Errorf("launch --resume on changed data: %v, output %q; want a failure in one line naming the changed file, before any rank starts", err, msg)
	}
	if err := os.WriteFile(file, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := gtstorm(t, "launch", "--resume", "--out", out, "--iters", "6").CombinedOutput(); err != nil {
		t.Fatalf("launch --resume on the restored data: %v\n%s", err, b)
	}
}
