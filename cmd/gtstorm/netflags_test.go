package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestNetworkFlagsRefuseSpaces: the simulated network's number flags
// refuse a value with spaces around it, as every other number flag does: a
// usage error (exit 2) in one line naming the flag; --networks, which sets
// them per cell, too.
func TestNetworkFlagsRefuseSpaces(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		cmd, flag, value string
	}{
		{"train", "link-bandwidth", " 1"},
		{"train", "link-bandwidth", "1 "},
		{"train", "link-bandwidth", " 1Gbit"},
		{"train", "link-bandwidth", "1Gbit "},
		{"train", "link-bandwidth", "1Gbit/s "},
		{"train", "link-latency", " 1ms"},
		{"train", "link-latency", "1 "},
		{"train", "compute", " 1"},
		{"train", "link-drop", " 0.1"},
		{"train", "eta0", " 1"},
		{"compare", "link-bandwidth", " 1"},
		{"compare", "networks", "1ms/ 1Gbit"},
		{"compare", "networks", "1ms /1Gbit"},
	} {
		args := []string{tc.cmd, "--dataset", "libsvm", "--data-dir", a8a, "--iters", "1",
			"--out", filepath.Join(dir, tc.cmd), "--" + tc.flag, tc.value}
		var out, errb bytes.Buffer
		code := run(args, &out, &errb)
		msg := errb.String()
		if code != 2 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, tc.flag) {
			t.Errorf("gtstorm %s --%s %q: exit %d, stderr %q; want exit 2 and one line naming --%s", tc.cmd, tc.flag, tc.value, code, msg, tc.flag)
		}
	}
	// The forms without spaces still read.
	for _, v := range []string{"1Gbit", "1Gbit/s", "10Mbit", "100MB", "0"} {
		var out, errb bytes.Buffer
		args := []string{"train", "--dataset", "libsvm", "--data-dir", a8a, "--iters", "1", "--batch", "1",
			"--out", filepath.Join(dir, "ok"), "--force", "--link-bandwidth", v}
		if code := run(args, &out, &errb); code != 0 {
			t.Errorf("gtstorm train --link-bandwidth %s: exit %d, stderr %q", v, code, errb.String())
		}
	}
}
