package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/train"
	"github.com/gtstorm/gtstorm/train/experiment"
)

// TestAdvice: each typed error of the libraries gets the command line's
// advice, also when wrapped, and other errors pass unchanged.
func TestAdvice(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&train.RunExistsError{Dir: "runs/a", File: "model.gtck"}, "gtstorm resume --out runs/a"},
		{&train.FolderInUseError{Dir: "runs/a", PID: 7}, "wait for it"},
		{&experiment.GridFolderError{Dir: "runs/g", Reason: "is not empty"}, "--force"},
		{&train.NoCheckpointError{Dir: "runs/a", Started: true}, "start it again with gtstorm train"},
		{&train.InterruptedError{Dir: "runs/a", Round: 3, Checkpoint: "runs/a/checkpoint.gtck"}, "gtstorm resume --out runs/a"},
		{&train.InterruptedError{Dir: "runs/a"}, "the same command again with --out runs/a"},
		{&train.MemoryError{Source: "cgroup"}, "set --max-memory"},
		{&data.FeatureCountError{File: "f", Features: 20000000}, "--features 20000000"},
		{&data.NotPresentError{Name: "a9a", Dir: "/d", Path: "/d/a9a"}, "gtstorm data fetch a9a --data-dir /d"},
	} {
		wrapped := fmt.Errorf("context: %w", tc.err)
		got := advise(wrapped)
		if !strings.Contains(got.Error(), tc.want) || !errors.Is(got, tc.err) {
			t.Errorf("advise(%T) = %q, want it to say %q and wrap the error", tc.err, got, tc.want)
		}
	}
	plain := errors.New("plain")
	if advise(plain) != plain || advise(nil) != nil {
		t.Error("advise changed an error it has no advice for")
	}
}
