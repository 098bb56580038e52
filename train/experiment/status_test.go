package experiment

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/train"
)

// TestDivergedStatusSaysItOnce: a real grid whose cells blow up records
// each as "diverged after round N: what went wrong", with the word
// "diverged" once, in results.csv, in the progress lines and in
// summary.json (which says "after round N: …" and leaves the word to its
// key), whichever way the run diverged.
func TestDivergedStatusSaysItOnce(t *testing.T) {
	needA8A(t)
	var cells []Cell
	for _, algo := range []string{decentral.DSGD, decentral.GTSTORM, decentral.GNSD} {
		base := lrConfig(algo)
		base.Iters, base.CheckpointEvery, base.EvalEvery, base.Eta0 = 10, 0, 5, 3e38
		cells = append(cells, Cell{Label: algo, Configs: Seeds(base, 1)})
	}
	out := t.TempDir()
	var progress bytes.Buffer
	res, err := RunGrid(context.Background(), cells, out, train.Options{Progress: &progress})
	if err != nil {
		t.Fatalf("a diverged cell stopped the grid: %v", err)
	}
	if _, _, err := WriteReport(out, "a8a", res, false); err != nil {
		t.Fatal(err)
	}
	recs := readResults(t, out)
	if len(recs) != len(cells)+1 {
		t.Fatalf("results.csv has %d records, want %d", len(recs), len(cells)+1)
	}
	for i, r := range res {
		sum := r.Summaries[0]
		if !strings.HasPrefix(sum.Diverged, "after round ") || strings.Contains(sum.Diverged, "diverged") {
			t.Errorf("%s: summary.json diverged = %q, want \"after round N: …\" without the word again", r.Label, sum.Diverged)
		}
		status := recs[i+1][len(recs[i+1])-1]
		if !strings.HasPrefix(status, "diverged after round ") || strings.Count(status, "diverged") != 1 {
			t.Errorf("%s: results.csv status %q, want \"diverged after round N: …\" with one \"diverged\"", r.Label, status)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(progress.String()), "\n") {
		if strings.Contains(line, "recorded, going on") && strings.Count(line, "diverged") != 1 {
			t.Errorf("progress line %q repeats \"diverged\"", line)
		}
	}
	if !strings.Contains(progress.String(), "recorded, going on") {
		t.Errorf("no progress line reports the divergence:\n%s", progress.String())
	}
}

// TestDivergedStatusOfOldSummaries: a summary.json written before Diverged
// left out the word (it read "after round 5: diverged: …") still gives a
// status with the word once.
func TestDivergedStatusOfOldSummaries(t *testing.T) {
	for _, tc := range []struct{ diverged, want string }{
		{"", ""},
		{`after round 5: "x" blew up`, `diverged after round 5: "x" blew up`},
		{"after round 5: diverged: x has a NaN or Inf value", "diverged after round 5: x has a NaN or Inf value"},
		{"after round 7: rank 1: node state of node 3: diverged: x has a NaN or Inf value", "diverged after round 7: rank 1: node state of node 3: x has a NaN or Inf value"},
	} {
		s := &train.Summary{Diverged: tc.diverged}
		if got := s.DivergedStatus(); got != tc.want {
			t.Errorf("Diverged %q: status %q, want %q", tc.diverged, got, tc.want)
		}
	}
}
