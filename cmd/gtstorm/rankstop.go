package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/gtstorm/gtstorm/decentral/cluster/transport"
	"github.com/gtstorm/gtstorm/train"
)

// sinceRank begins the reason of a rank that stops because a peer did.
const sinceRank = "since rank "

// stopReason says in a few words why a rank stops, for its peers' errors:
// a rank stopped by a peer names the rank that stopped first and its
// address, so that every rank's error names it, however it learnt of it.
func stopReason(err error) string {
	var peer *transport.PeerStoppedError
	switch {
	case err == nil:
		return "finished"
	case errors.Is(err, train.ErrInterrupted):
		return "interrupted"
	case errors.As(err, &peer):
		if strings.HasPrefix(peer.Why, sinceRank) {
			return peer.Why // the rank that stopped first, whichever peer told of it
		}
		return fmt.Sprintf("%s%d at %s stopped", sinceRank, peer.Rank, peer.Addr)
	}
	why, _, _ := strings.Cut(err.Error(), "\n")
	if len(why) > 200 {
		why = why[:200] + "…"
	}
	if b, ok := transport.Blame(err); ok {
		// A peer that went silent: the ranks this one tells blame it.
		return fmt.Sprintf("%s%d stopped responding (failed: %s)", sinceRank, b, why)
	}
	return "failed: " + why
}

// resumeError is a rank's stop that a resume of every rank continues: an
// interruption after a checkpoint, a peer rank that stopped, or a folder
// that holds the rank's earlier run. It names the
// command that resumes a run over several processes, and hides the
// *train.InterruptedError, whose general advice names `gtstorm resume`,
// while errors.Is still sees what it wraps.
type resumeError struct {
	err  error
	next string
}

func (e *resumeError) Error() string { return fmt.Sprintf("%v (continue with: %s)", e.err, e.next) }

// Is reports whether the wrapped error is target, as errors.Is does.
func (e *resumeError) Is(target error) bool { return errors.Is(e.err, target) }

// withResume adds to err, if a resume continues the run (or the folder's
// earlier one), the command next that does it.
func withResume(err error, next string) error {
	var (
		stopped *train.InterruptedError
		peer    *transport.PeerStoppedError
		exists  *train.RunExistsError
	)
	switch {
	case (errors.As(err, &stopped) && stopped.Checkpoint != "") || errors.As(err, &peer) || errors.Is(err, train.ErrWaitInterrupted):
		return &resumeError{err, next}
	case errors.As(err, &exists):
		return &resumeError{err, next + ", or choose another folder, or pass --force to replace it"}
	}
	return err
}

// followLauncher returns a context that ctx's end or the end of pipe (the
// launcher's death closes its end) cancels, calling gone for the latter,
// and the function that releases it. Writes to a closed stderr then fail
// rather than kill the rank, so that it still writes its checkpoint.
func followLauncher(ctx context.Context, pipe io.Reader, gone func()) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		io.Copy(io.Discard, pipe)
		if ctx.Err() == nil {
			signal.Ignore(syscall.SIGPIPE)
			gone()
			cancel()
		}
	}()
	return ctx, cancel
}

// blamePrefix begins the line a failed rank writes naming the rank it
// waited for in vain; launch reads it.
const blamePrefix = "waited in vain for rank "

// blameLine is the line of rank r that waited in vain for rank b.
func blameLine(r, b int) string {
	return fmt.Sprintf("rank %d: %s%d", r, blamePrefix, b)
}

// blameRE matches blameLine's lines.
var blameRE = regexp.MustCompile(`^rank (\d+): ` + blamePrefix + `(\d+)$`)

// parseBlame returns the ranks of a blameLine.
func parseBlame(line string) (r, b int, ok bool) {
	m := blameRE.FindStringSubmatch(line)
	if m == nil {
		return 0, 0, false
	}
	r, _ = strconv.Atoi(m[1])
	b, _ = strconv.Atoi(m[2])
	return r, b, true
}
