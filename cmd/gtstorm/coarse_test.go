package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestCoarseRunNamed: a CIFAR-100 run on the coarse labels records its
// data as cifar100-coarse (summary.json, the headline), a run on the fine
// labels as cifar100, as before.
func TestCoarseRunNamed(t *testing.T) {
	root := t.TempDir()
	cifar := writeCIFAR100(t, filepath.Join(root, "data"), 12, 4)
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{nil, "cifar100"},
		{[]string{"--coarse-labels"}, "cifar100-coarse"},
	} {
		out := filepath.Join(root, "run-"+tc.want)
		args := append(append([]string{"train", "--out", out, "--dataset", "cifar100", "--data-dir", cifar}, tinyRun...), tc.flags...)
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 0 {
			t.Fatalf("%v: exit %d: %s", tc.flags, code, stderr.String())
		}
		if sum := readSummary(t, out); sum.Data != tc.want || sum.Dataset != "cifar100" {
			t.Errorf("%v: summary data %q, dataset %q; want %q, cifar100", tc.flags, sum.Data, sum.Dataset, tc.want)
		}
		if !strings.Contains(stdout.String(), " on "+tc.want+", ") {
			t.Errorf("%v: the headline does not name %s:\n%s", tc.flags, tc.want, stdout.String())
		}
	}
}
