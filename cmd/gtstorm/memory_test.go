package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTrainRefusedForMemory: a run that cannot fit in --max-memory exits
// with status 1 within seconds, before loading anything, with one line
// giving the estimate, its largest part and the limit — no runtime "out of
// memory" and no goroutine dump.
func TestTrainRefusedForMemory(t *testing.T) {
	dir := t.TempDir()
	cmd := gtstorm(t, "train", "--nodes", "30000", "--topology", "ring", "--partition", "iid", "--iters", "1", "--max-memory", "1GiB")
	cmd.Dir = dir
	var errb bytes.Buffer
	cmd.Stderr = &errb
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	msg := errb.String()
	if code := cmd.ProcessState.ExitCode(); code != 1 || err == nil {
		t.Fatalf("exit %d (%v), stderr %q; want exit 1", code, err, msg)
	}
	if took > 10*time.Second {
		t.Errorf("refusal took %v, want a few seconds", took)
	}
	for _, want := range []string{"not enough memory", "needs about", "GiB", "optimizer state", "30000 nodes",
		"--max-memory allows 1.0 GiB", "--nodes", "--batch", "--workers"} {
		if !strings.Contains(msg, want) {
			t.Errorf("stderr %q lacks %q", msg, want)
		}
	}
	if strings.Count(msg, "\n") != 1 || strings.Contains(msg, "goroutine") || strings.Contains(msg, "fatal error") {
		t.Errorf("stderr is not one line without a dump: %q", msg)
	}
	// Refused before the output folder's run files: nothing but config.json.
	entries, _ := filepath.Glob(filepath.Join(dir, "runs", "*", "*"))
	for _, e := range entries {
		if base := filepath.Base(e); base != "config.json" && !strings.HasPrefix(base, ".") {
			t.Errorf("refused run left %s", e)
		}
	}
}

// TestMaxMemoryFlag: bad sizes exit with status 2 and one line naming the
// value and the syntax; a good size reaches config.json.
func TestMaxMemoryFlag(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []string{"8G", "lots", "-1GiB", "1.5.2MB", "12XB"} {
		cmd := gtstorm(t, "train", "--max-memory", bad)
		cmd.Dir = dir
		var errb bytes.Buffer
		cmd.Stderr = &errb
		cmd.Run()
		msg := errb.String()
		if code := cmd.ProcessState.ExitCode(); code != 2 || strings.Count(msg, "\n") != 1 ||
			!strings.Contains(msg, `"`+bad+`"`) || !strings.Contains(msg, "max-memory") || !strings.Contains(msg, "GiB") {
			t.Errorf("--max-memory %s: exit %d, stderr %q; want exit 2 and one line naming the value and the units", bad, code, msg)
		}
	}
	// A size that is accepted; the run itself is refused (1 MiB) before it
	// creates its folder, so nothing is loaded or left behind.
	out := filepath.Join(dir, "run")
	cmd := gtstorm(t, "train", "--max-memory", "1MiB", "--out", out)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(errb.String(), "--max-memory allows 1.0 MiB") {
		t.Errorf("--max-memory 1MiB: exit %d, stderr %q", code, errb.String())
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the refused run created %s", out)
	}
}
