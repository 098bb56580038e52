package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/train"
)

// TestLaunchResumeRefusesOtherRanks: `launch --resume` restarts the ranks
// its ranks file lists, so a --ranks that names another count, which it
// would ignore, is refused in one line (exit 2) before anything starts;
// the run's own count passes that check.
func TestLaunchResumeRefusesOtherRanks(t *testing.T) {
	out := t.TempDir()
	ranks := "# gtstorm ranks: 2\n127.0.0.1:1 # rank 0\n127.0.0.1:2 # rank 1\n"
	if err := os.WriteFile(filepath.Join(out, train.RanksFileName), []byte(ranks), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"launch", "--resume", "--out", out, "--ranks", "3"}, &stdout, &stderr)
	want := "--ranks 3: the run in " + out + " was launched on 2 ranks and resumes on them"
	if msg := stderr.String(); code != 2 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, want) {
		t.Errorf("launch --resume --ranks 3: exit %d, stderr %q; want exit 2 and one line with %q", code, msg, want)
	}
	stderr.Reset()
	// The run's own count: refused further on, for its missing checkpoints.
	run([]string{"launch", "--resume", "--out", out, "--ranks", "2"}, &stdout, &stderr)
	if strings.Contains(stderr.String(), "--ranks") {
		t.Errorf("launch --resume --ranks 2 of a 2-rank run: stderr %q; want no refusal of --ranks", stderr.String())
	}
}
