package transport

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Every wait of a rank on another is bounded by the peer timeout, says
// while it lasts what it waits for (a line through Logf naming the rank and
// its address), and fails naming that rank when the bound passes. Abort
// ends every wait at once, for a rank told to stop (a signal) while a peer
// keeps it waiting.

// PeerTimeoutError is the error of a wait for a peer rank that did not
// answer within the peer timeout.
type PeerTimeoutError struct {
	Rank    int           // the rank waited for
	Addr    string        // its address
	What    string        // what was waited for ("the gather stream")
	Timeout time.Duration // how long
	Last    string        // the last connection error or state, or ""
}

func (e *PeerTimeoutError) Error() string {
	last := ""
	if e.Last != "" {
		last = "; " + e.Last
	}
	return fmt.Sprintf("rank %d at %s did not answer within %v (waiting for %s)%s", e.Rank, e.Addr, e.Timeout, e.What, last)
}

// silentRank matches the errors of a round's Wait that name a rank silent
// for the peer timeout.
var silentRank = regexp.MustCompile(`rank (\d+) at \S+ silent for`)

// Blame returns the rank an error of the Exchange or its Control says this
// rank waited for in vain: the rank of a *PeerTimeoutError, the rank a
// *PeerStoppedError names as the first to stop, or the rank a round's Wait
// found silent.
func Blame(err error) (int, bool) {
	var lost *PeerTimeoutError
	if errors.As(err, &lost) {
		return lost.Rank, true
	}
	var stopped *PeerStoppedError
	if errors.As(err, &stopped) {
		// A rank stopped by a peer names the rank that stopped first.
		if m := sinceRank.FindStringSubmatch(stopped.Why); m != nil {
			r, _ := strconv.Atoi(m[1])
			return r, true
		}
		return stopped.Rank, true
	}
	if err == nil {
		return 0, false
	}
	if m := silentRank.FindStringSubmatch(err.Error()); m != nil {
		r, _ := strconv.Atoi(m[1])
		return r, true
	}
	return 0, false
}

// sinceRank matches the reason of a BYE of a rank stopped by another.
var sinceRank = regexp.MustCompile(`^since rank (\d+) `)

// aborter ends every wait of a rank once Abort is called.
type aborter struct {
	once sync.Once
	ch   chan struct{}
	mu   sync.Mutex
	err  error
}

// done returns the channel Abort closes.
func (a *aborter) done() <-chan struct{} {
	a.once.Do(func() { a.ch = make(chan struct{}) })
	return a.ch
}

// cause returns Abort's error, or nil.
func (a *aborter) cause() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// Abort makes every wait of the rank — the Exchange's Wait, Gather,
// AgreeRound, the opening of the stream to rank 0 — return err at once,
// and every later one too: for a rank that must stop (a signal) while a
// peer keeps it waiting. Leave and Close still work after it.
func (c *Control) Abort(err error) {
	if err == nil {
		err = errors.New("aborted")
	}
	a := &c.abort
	a.done()
	a.mu.Lock()
	first := a.err == nil
	if first {
		a.err = err
		close(a.ch)
	}
	a.mu.Unlock()
	if !first {
		return
	}
	c.fail(fmt.Errorf("transport: rank %d: %w", c.cfg.Rank, err))
	c.wake()
}

// progressEvery is how often a wait for a peer says what it waits for.
func progressEvery(limit time.Duration) time.Duration {
	return min(max(limit/5, time.Second), 10*time.Second)
}

// lastOf describes what this rank knows of rank r's connection: its last
// error and the connection's state.
func (rc *rankConn) lastOf(r int) string {
	var parts []string
	rc.mu.Lock()
	if err := rc.peers[r].lastErr; err != nil {
		parts = append(parts, "last error: "+err.Error())
	}
	rc.mu.Unlock()
	if cc := rc.conns[r]; cc != nil {
		parts = append(parts, "connection "+cc.GetState().String())
	}
	return strings.Join(parts, "; ")
}

// bounded runs f, a wait for rank r's answer (what) that ends when cancel
// is called, and cancels it when ctx is done, on Abort if abortable, or
// when limit passes. Meanwhile it reports through Logf, every few seconds, what it
// waits for. It returns f's error, or why f was cut short: ctx's error,
// Abort's, or a *PeerTimeoutError naming rank r.
func (rc *rankConn) bounded(ctx context.Context, limit time.Duration, r int, what string, abortable bool, cancel func(), f func() error) error {
	done := make(chan struct{})
	var aborted <-chan struct{} // nil: never
	if abortable {
		aborted = rc.abort.done()
	}
	over := make(chan error, 1)
	go func() {
		start := time.Now()
		tick := time.NewTicker(progressEvery(limit))
		defer tick.Stop()
		deadline := time.NewTimer(limit)
		defer deadline.Stop()
		var cut error
		defer func() { over <- cut }()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				cut = ctx.Err()
			case <-aborted:
				cut = rc.abort.cause()
			case <-deadline.C:
				cut = &PeerTimeoutError{Rank: r, Addr: rc.cfg.Addrs[r], What: what, Timeout: limit, Last: rc.lastOf(r)}
			case <-tick.C:
				if time.Since(start) > limit-time.Second/2 {
					continue // the bound's error says it next
				}
				last := rc.lastOf(r)
				if last != "" {
					last = "; " + last
				}
				rc.logf("transport: rank %d: waiting for rank %d at %s (%s) for %v of %v%s", rc.cfg.Rank, r, rc.cfg.Addrs[r], what,
					time.Since(start).Round(time.Second), limit, last)
				continue
			}
			cancel()
			return
		}
	}()
	err := f()
	close(done)
	cut := <-over
	var lost *PeerTimeoutError
	if errors.As(cut, &lost) && err != nil && status.Code(err) != codes.OK {
		// gRPC's account of the cancelled wait names the connection's
		// latest error, if any.
		if msg := status.Convert(err).Message(); strings.Contains(msg, "connection error") {
			lost.Last = strings.TrimPrefix(lost.Last+"; "+msg, "; ")
		}
	}
	if cut != nil {
		return cut
	}
	return err
}
