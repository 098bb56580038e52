package main

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/gtstorm/gtstorm/decentral/cluster/transport"
	"github.com/gtstorm/gtstorm/train"
)

// signalGrace is how long a rank told to stop (a signal, or its launcher's
// death) lets the round in progress finish before it gives up waiting for
// its peers.
const signalGrace = 2 * time.Second

// errWaitInterrupted ends the waits of a rank told to stop while a peer
// keeps it waiting: the round in progress is dropped, and the rank's
// checkpoint is of the last round it completed.
var errWaitInterrupted = fmt.Errorf("%w while waiting for peers", train.ErrInterrupted)

// abortAfterSignal waits until ctx is done (a signal) and, unless running
// is closed within signalGrace after it, aborts the rank's waits through
// its control plane c: a rank waiting on a dead peer honours a signal
// promptly instead of after the peer timeout.
func abortAfterSignal(ctx context.Context, running <-chan struct{}, c *transport.Control, rank int, stderr io.Writer) {
	select {
	case <-running:
		return
	case <-ctx.Done():
	}
	t := time.NewTimer(signalGrace)
	defer t.Stop()
	select {
	case <-running:
	case <-t.C:
		fmt.Fprintf(stderr, "rank %d: still waiting for peers %v after the stop; dropping the round in progress\n", rank, signalGrace)
		c.Abort(errWaitInterrupted)
	}
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
