package transport

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gtstorm/gtstorm/decentral/cluster/wire"
)

// Leaving: a rank that stops deliberately — interrupted, failed, or at the
// run's end — says BYE on every stream it has, after the frames already on
// it, naming the rounds it completed (see Leave). A peer that learns it
// stops waiting at once for what the rank would have sent or taken in a
// later round, instead of for the peer timeout, and the rank stays until
// its peers took their BYE, so that nothing it sent before is lost when it
// closes.

// errPeerLeft ends the reader of a stream whose peer said BYE.
var errPeerLeft = errors.New("peer said goodbye")

// PeerStoppedError is the error of a round, a gathering or a resume
// agreement that cannot complete because a peer rank stopped before it: the
// peer said BYE after completing Round rounds, and what is waited for would
// come from a later round.
type PeerStoppedError struct {
	Rank  int    // the rank that stopped
	Addr  string // its address
	Round int    // the rounds it completed
	Why   string // the reason it gave ("interrupted", "finished", a failure)
}

func (e *PeerStoppedError) Error() string {
	why := ""
	if e.Why != "" {
		why = " (" + e.Why + ")"
	}
	return fmt.Sprintf("rank %d at %s stopped after round %d%s", e.Rank, e.Addr, e.Round, why)
}

// Leave says BYE to every peer this rank has a stream with: on each edge's
// stream, after the vectors already handed to it (those of a round the rank
// did not complete are dropped), and on the gather stream to rank 0. A BYE
// names the rounds the rank completed and carries why it stops (cut to
// wire.MaxText bytes). A peer whose round, gathering or resume agreement
// waits on something of a later round from this rank then fails at once
// with a *PeerStoppedError naming it, rather than after the peer timeout.
//
// Leave returns once every peer took its BYE, which proves that the frames
// sent before it arrived too, or with an error naming the ranks that had
// not when ctx is done. No round begins after Leave; call Close next. Leave
// after Leave or Close, or before Start, does nothing.
func (c *Control) Leave(ctx context.Context, why string) error {
	if len(why) > wire.MaxText {
		why = why[:wire.MaxText]
	}
	c.mu.Lock()
	if !c.started || c.closed || c.leaving {
		c.mu.Unlock()
		return nil
	}
	c.leaving, c.why = true, why
	waits := c.data.leaveLocked()
	c.cond.Broadcast() // readers holding early frames drop them
	c.notify()
	done := c.done
	if c.cfg.Rank != 0 && c.peers[0].stopped < 0 {
		quit := make(chan struct{})
		waits = append(waits, leaveWait{0, quit})
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			defer close(quit)
			c.gatherBye(done, why)
		}()
	}
	c.mu.Unlock()

	var late []string
	for _, w := range waits {
		select {
		case <-w.quit:
		case <-ctx.Done():
			late = append(late, fmt.Sprintf("rank %d at %s", w.rank, c.cfg.Addrs[w.rank]))
		}
	}
	if len(late) > 0 {
		sort.Strings(late)
		late = slices.Compact(late)
		return fmt.Errorf("transport: rank %d: %s did not take this rank's goodbye: %w", c.cfg.Rank, strings.Join(late, ", "), ctx.Err())
	}
	return nil
}

// leaveLocked drops, as the rank leaves, the vectors queued on its edges
// but the one each link's writer is sending (those of a round the rank did
// not complete), wakes the writers of the links whose peer runs, which say
// BYE next, and returns those links to wait on. It holds x.mu.
func (x *Exchange) leaveLocked() []leaveWait {
	var waits []leaveWait
	for _, e := range x.edges {
		keep := 0
		if e.sending {
			keep = 1
		}
		x.outPending -= len(e.queue) - min(keep, len(e.queue))
		e.queue = e.queue[:min(keep, len(e.queue))]
		if e.att != nil && x.peers[e.rank].stopped < 0 {
			waits = append(waits, leaveWait{e.rank, e.att.quit})
			e.wakeWriter()
		}
	}
	return waits
}

// sendBye ends a's service of e while the rank leaves: it sends the BYE
// frame and, on a stream this rank opened, closes its sending side. The
// peer, taking it, ends the stream, which ends a's reader.
func (x *Exchange) sendBye(e *edge, a *attachment) {
	x.mu.Lock()
	done, why, gone := x.done, x.why, x.peers[e.rank].stopped >= 0
	x.mu.Unlock()
	if gone {
		return
	}
	b := wire.AppendText(nil, wire.Header{Kind: wire.Bye, Round: uint64(done), From: uint32(e.local), To: uint32(e.remote)}, why)
	if err := a.s.SendMsg(&b); err != nil {
		return // the stream broke: its reader ends
	}
	if cs, ok := a.s.(interface{ CloseSend() error }); ok {
		cs.CloseSend()
	}
}

// gatherBye says BYE to rank 0 on the gather stream, opening it if needed,
// and waits for rank 0 to end the stream (or for Close).
func (c *Control) gatherBye(done int64, why string) {
	to := &c.gatherTo
	to.mu.Lock()
	defer to.mu.Unlock()
	cs, err := c.gatherStreamLocked(c.ctx, false)
	if err != nil {
		return
	}
	b := wire.AppendText(nil, wire.Header{Kind: wire.Bye, Round: uint64(done), From: uint32(c.cfg.Rank)}, why)
	if cs.SendMsg(&b) != nil {
		return
	}
	cs.CloseSend()
	var m inMsg
	for cs.RecvMsg(&m) == nil {
		m.free()
	}
}

// bye takes the BYE frame m of e's remote node: its rank stopped.
func (x *Exchange) bye(e *edge, m *inMsg) error {
	f, err := m.frame()
	switch {
	case err != nil:
	case int(f.From) != e.remote || int(f.To) != e.local:
		err = fmt.Errorf("a BYE from node %d to node %d on the stream of node %d", f.From, f.To, e.local)
	case f.Round > math.MaxInt64/2:
		err = fmt.Errorf("a BYE after round %d", f.Round)
	}
	if err != nil {
		err = fmt.Errorf("transport: rank %d: %s sent a bad frame to node %d: %w", x.cfg.Rank, x.who(e.remote), e.local, err)
		x.fail(err)
		return err
	}
	x.peerLeft(e.rank, int64(f.Round), string(f.Payload))
	return errPeerLeft
}

// peerLeft records that rank said BYE after completing rounds rounds: the
// vectors queued for it of those rounds it took already, and Wait, Gather
// and AgreeRound stop waiting for anything of a later round from it.
func (rc *rankConn) peerLeft(rank int, rounds int64, why string) {
	rc.mu.Lock()
	p := &rc.peers[rank]
	if p.stopped < 0 {
		p.stopped, p.why = rounds, why
		rc.anyStopped = true
	}
	p.heard = time.Now()
	rc.data.peerLeftLocked(rank, p.stopped)
	rc.cond.Broadcast()
	rc.notify()
	rc.mu.Unlock()
	rc.control.wake()
}

// peerLeftLocked drops the vectors queued for rank, which said BYE after
// completing stopped rounds, of the rounds before: it took them already.
// It holds x.mu.
func (x *Exchange) peerLeftLocked(rank int, stopped int64) {
	for _, e := range x.edges {
		if e.rank != rank {
			continue
		}
		kept := e.queue[:0]
		for k, j := range e.queue {
			if (k == 0 && e.sending) || j.round >= stopped {
				kept = append(kept, j)
			} else {
				x.outPending--
			}
		}
		e.queue = kept
	}
}

// gone reports whether e's streams to rank are over: this rank leaves, or
// rank said BYE.
func (rc *rankConn) gone(rank int) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.leaving || rc.peers[rank].stopped >= 0
}

// stoppedLocked returns the error naming the lowest rank that said BYE
// before the round in progress while the round still waits for its
// vectors or to send it some, or nil.
func (x *Exchange) stoppedLocked() error {
	if !x.anyStopped {
		return nil
	}
	r, who := x.round, -1
	for _, e := range x.edges {
		p := &x.peers[e.rank]
		if p.stopped < 0 || p.stopped > r || (who >= 0 && e.rank >= who) {
			continue
		}
		if len(e.queue) > 0 || e.missingLocked(r, x.shares) {
			who = e.rank
		}
	}
	if who < 0 {
		return nil
	}
	return x.stoppedError(who)
}

// missingLocked reports whether round r still waits for a vector from e's
// remote node.
func (e *edge) missingLocked(r int64, shares int) bool {
	if e.expect[r&1] != r {
		return false
	}
	in := &e.in[r&1]
	for k := range shares {
		if in.round != r || k >= len(in.done) || !in.done[k] {
			return true
		}
	}
	return false
}

// stoppedError returns the *PeerStoppedError of rank, which said BYE; rc.mu
// is held.
func (rc *rankConn) stoppedError(rank int) *PeerStoppedError {
	p := &rc.peers[rank]
	return &PeerStoppedError{Rank: rank, Addr: rc.cfg.Addrs[rank], Round: int(p.stopped), Why: p.why}
}

// stoppedOwingLocked returns, on rank 0 holding the gather lock, the error
// naming the lowest rank that said BYE before round without having sent
// every state of its nodes of round, or nil. With round < 0 it names a rank
// that said BYE before sending its resume rounds.
func (c *Control) stoppedOwingLocked(round int) error {
	g := &c.gather
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.anyStopped {
		return nil
	}
	var have, count map[int]int
	if round >= 0 {
		have, count = map[int]int{}, map[int]int{}
		for _, s := range g.rounds[round] {
			have[c.owner[s.Node]]++
		}
		for _, r := range c.owner {
			count[r]++
		}
	}
	for r := 1; r < len(c.cfg.Addrs); r++ {
		p := &c.peers[r]
		if p.stopped < 0 {
			continue
		}
		if round < 0 {
			if _, ok := g.agree.rounds[r]; !ok {
				return c.stoppedError(r)
			}
			continue
		}
		if p.stopped < int64(round) && have[r] < count[r] {
			return c.stoppedError(r)
		}
	}
	return nil
}
