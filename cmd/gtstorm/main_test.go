package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestUsageExit: gtstorm without a command is a usage error, its usage on
// stderr and exit status 2; asking for help prints it on stdout, exit 0.
// The usage describes sweep as varying several settings.
func TestUsageExit(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		code   int
		stdout bool // the usage goes to stdout, else to stderr
	}{
		{nil, 2, false},
		{[]string{}, 2, false},
		{[]string{"help"}, 0, true},
		{[]string{"-h"}, 0, true},
		{[]string{"--help"}, 0, true},
	} {
		var out, errb bytes.Buffer
		code := run(tc.args, &out, &errb)
		usage, other := out.String(), errb.String()
		if !tc.stdout {
			usage, other = other, usage
		}
		if code != tc.code || !strings.Contains(usage, "Usage: gtstorm <command>") || other != "" {
			t.Errorf("gtstorm %q: exit %d, stdout %q, stderr %q; want exit %d and the usage on one of them", tc.args, code, out.String(), errb.String(), tc.code)
		}
		if strings.Contains(usage, "vary one setting") || !strings.Contains(usage, "--vary once or more") {
			t.Errorf("gtstorm %q: sweep's summary does not say it varies several settings:\n%s", tc.args, usage)
		}
	}
}
