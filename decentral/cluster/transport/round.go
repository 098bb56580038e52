package transport

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// maxShares is the most vectors a node may share a round: k is one byte.
const maxShares = 256

// BeginRound starts round t of W = w: every local node i expects shares
// vectors from each node of w.From(i) that another rank runs. The first
// round may be any t ≥ 0 (a run resumed from a snapshot); each later one
// must be the next, after the previous round's Wait returned.
func (x *Exchange) BeginRound(t int, w *graph.Mixing, shares int) error {
	return x.beginRound(t, w, shares, false)
}

// BeginNextRound starts round t as BeginRound does, after round t−1's Wait
// returned but while its Recv calls may still run: Recv goes on returning
// round t−1's vectors until round t's Wait returns, and round t's Sends may
// come meanwhile. Frames of round t+1 wait, unread, until then.
func (x *Exchange) BeginNextRound(t int, w *graph.Mixing, shares int) error {
	return x.beginRound(t, w, shares, true)
}

func (x *Exchange) beginRound(t int, w *graph.Mixing, shares int, next bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case x.err != nil:
		return x.err
	case x.closed:
		return fmt.Errorf("transport: rank %d: BeginRound after Close", x.cfg.Rank)
	case x.leaving:
		return fmt.Errorf("transport: rank %d: BeginRound after Leave", x.cfg.Rank)
	case !x.started:
		return fmt.Errorf("transport: rank %d: BeginRound before Start", x.cfg.Rank)
	case w == nil || w.Nodes() != x.cfg.Nodes:
		return fmt.Errorf("transport: rank %d: round %d's mixing matrix is not over the run's %d nodes", x.cfg.Rank, t, x.cfg.Nodes)
	case shares < 0 || shares > maxShares:
		return fmt.Errorf("transport: rank %d: round %d shares %d vectors, want [0, %d]", x.cfg.Rank, t, shares, maxShares)
	case t < 0:
		return fmt.Errorf("transport: rank %d: round %d, want ≥ 0", x.cfg.Rank, t)
	case next && !x.begun:
		return fmt.Errorf("transport: rank %d: BeginNextRound(%d) before any round", x.cfg.Rank, t)
	case next && x.done != x.round+1:
		return fmt.Errorf("transport: rank %d: round %d began before round %d's Wait returned", x.cfg.Rank, t, x.round)
	case x.begun && int64(t) != x.round+1:
		return fmt.Errorf("transport: rank %d: round %d after round %d, want round %d", x.cfg.Rank, t, x.round, x.round+1)
	case x.begun && (x.pending > 0 || x.outPending > 0):
		return fmt.Errorf("transport: rank %d: round %d began before round %d's Wait returned", x.cfg.Rank, t, x.round)
	}
	r := int64(t)
	if !x.begun {
		x.done, x.first = r, r // a resumed run completed the rounds before its first
	}
	x.round, x.begun, x.shares, x.pending = r, true, shares, 0
	if !next {
		x.cur.Store(r)
	}
	for _, e := range x.inEdgesLocked(w) {
		e.expect[r&1] = r
		x.pending += shares
		if in := &e.in[r&1]; in.round == r {
			for k := range in.seen {
				if in.seen[k] && k >= shares {
					return x.unexpectedLocked(e, r, k)
				}
				if in.done[k] && k < shares {
					x.pending--
				}
			}
		}
	}
	for _, l := range x.links {
		if l == nil {
			continue
		}
		for _, e := range l.edges {
			if e.in[r&1].round == r && e.expect[r&1] != r {
				return x.unexpectedLocked(e, r, -1)
			}
		}
	}
	x.cond.Broadcast() // readers holding frames of round t+1 go on
	return nil
}

// unexpectedLocked fails the Exchange: e's remote node sent vector k (or
// anything, k < 0) of round r, which round r does not expect.
func (x *Exchange) unexpectedLocked(e *edge, r int64, k int) error {
	what := "vectors"
	if k >= 0 {
		what = fmt.Sprintf("vector %d", k)
	}
	err := fmt.Errorf("transport: rank %d: %s sent %s of round %d to node %d, which that round does not expect",
		x.cfg.Rank, x.who(e.remote), what, r, e.local)
	x.failLocked(err)
	return err
}

// Send sends node's vectors of the round to the nodes of to: those of other
// ranks over their edges' streams, those of this rank in memory (they read
// vecs itself). vecs and its vectors must stay unchanged until the round's
// Recv calls are over. It returns the payload bytes a network would carry
// for all of to, 4 × floats × len(to), as decentral.MemExchange does.
func (x *Exchange) Send(node int, to []int, vecs [][]float32) (int64, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.checkSendLocked("Send", node, to, len(vecs)); err != nil {
		return 0, err
	}
	if x.decode != nil {
		return 0, fmt.Errorf("transport: rank %d: Send from node %d, but this run's messages travel encoded (SendEncoded)", x.cfg.Rank, node)
	}
	floats, err := x.floatsLocked(node, vecs)
	if err != nil {
		return 0, err
	}
	sent := x.sent[x.round&1]
	sent[node] = append(sent[node][:0], vecs...)
	x.each[x.round&1][node] = scattered{}
	x.queueSameLocked(node, to, job{round: x.round, vecs: sent[node]})
	return int64(floats) * 4 * int64(len(to)), nil
}

// checkSendLocked returns the error of a Send (or SendEncoded, named by
// op) of n vectors from node to the nodes of to, or nil.
func (x *Exchange) checkSendLocked(op string, node int, to []int, n int) error {
	switch {
	case x.err != nil:
		return x.err
	case x.closed:
		return fmt.Errorf("transport: rank %d: %s after Close", x.cfg.Rank, op)
	case x.leaving:
		return fmt.Errorf("transport: rank %d: %s after Leave", x.cfg.Rank, op)
	case !x.begun:
		return fmt.Errorf("transport: rank %d: %s before BeginRound", x.cfg.Rank, op)
	case node < 0 || node >= x.cfg.Nodes || x.owner[node] != x.cfg.Rank:
		return fmt.Errorf("transport: rank %d: %s from node %d, which this rank does not run", x.cfg.Rank, op, node)
	case n != x.shares:
		return fmt.Errorf("transport: rank %d: node %d sends %d vectors in round %d, want %d", x.cfg.Rank, node, n, x.round, x.shares)
	}
	for _, j := range to {
		if j < 0 || j >= x.cfg.Nodes || j == node {
			return fmt.Errorf("transport: rank %d: node %d sends to node %d, want another node of [0, %d)", x.cfg.Rank, node, j, x.cfg.Nodes)
		}
	}
	return nil
}

// Wait returns once every vector the round expects has arrived and every
// vector sent has been handed to gRPC; or an error: ctx's, a fault of a
// peer's frames (naming its node and rank), a peer that said BYE before the
// round (at once, wrapping a *PeerStoppedError), or a peer that neither sent
// nor took a frame for the peer timeout (naming its rank and address).
func (x *Exchange) Wait(ctx context.Context) error {
	start := time.Now()
	defer func() {
		x.waitNanos.Add(int64(time.Since(start)))
		x.waits.Add(1)
	}()
	x.mu.Lock()
	x.waitStart = start
	x.mu.Unlock()
	tick := time.NewTicker(min(x.timeout/8, time.Second))
	defer tick.Stop()
	for {
		x.mu.Lock()
		switch {
		case x.err != nil:
			x.mu.Unlock()
			return x.err
		case x.closed:
			x.mu.Unlock()
			return fmt.Errorf("transport: rank %d: Wait after Close", x.cfg.Rank)
		case !x.begun:
			x.mu.Unlock()
			return fmt.Errorf("transport: rank %d: Wait before BeginRound", x.cfg.Rank)
		case x.pending == 0 && x.outPending == 0:
			x.done = x.round + 1
			for _, l := range x.links {
				if l != nil && l.att != nil {
					l.wakeWriter() // to acknowledge the round
				}
			}
			if x.cur.Load() != x.round {
				x.cur.Store(x.round) // Recv reads this round now
				x.cond.Broadcast()   // readers holding frames of the next round go on
			}
			x.mu.Unlock()
			return nil
		}
		if err := x.stoppedLocked(); err != nil {
			x.mu.Unlock()
			return fmt.Errorf("transport: rank %d: %w", x.cfg.Rank, err)
		}
		x.mu.Unlock()
		select {
		case <-ctx.Done():
			x.mu.Lock()
			r := x.round
			x.mu.Unlock()
			return fmt.Errorf("transport: rank %d: round %d: %w", x.cfg.Rank, r, ctx.Err())
		case <-x.progress:
		case <-tick.C:
			x.mu.Lock()
			err := x.stalledLocked(time.Now())
			x.mu.Unlock()
			if err != nil {
				return err
			}
		}
	}
}

// stalledLocked returns the error naming the ranks that Wait still waits on
// and that have been silent for the peer timeout, or nil.
func (x *Exchange) stalledLocked(now time.Time) error {
	r := x.round
	missing := make(map[int][]string) // by rank
	for _, e := range x.edges {
		in := &e.in[r&1]
		if e.expect[r&1] == r {
			for k := range x.shares {
				if in.round != r || k >= len(in.done) || !in.done[k] {
					missing[e.rank] = append(missing[e.rank], fmt.Sprintf("vector %d from node %d to node %d", k, e.remote, e.local))
				}
			}
		}
		if len(e.queue) > 0 && e.multi {
			missing[e.rank] = append(missing[e.rank], fmt.Sprintf("sending node %d's vectors to %d nodes", e.local, len(e.queue[0].dests)))
		} else if len(e.queue) > 0 {
			missing[e.rank] = append(missing[e.rank], fmt.Sprintf("sending node %d's vectors to node %d", e.local, e.remote))
		}
	}
	var lost []string
	for rank, what := range missing {
		p := &x.peers[rank]
		since := now.Sub(x.waitStart)
		if p.heard.After(x.waitStart) {
			since = now.Sub(p.heard)
		}
		if since < x.timeout {
			continue
		}
		sort.Strings(what)
		if len(what) > 3 {
			what = append(what[:3], fmt.Sprintf("%d more", len(what)-3))
		}
		msg := fmt.Sprintf("rank %d at %s silent for %v (waiting for %s)", rank, x.cfg.Addrs[rank], since.Round(time.Millisecond), strings.Join(what, ", "))
		if cc := x.conns[rank]; cc != nil {
			msg += fmt.Sprintf("; connection %v", cc.GetState())
		}
		if p.lastErr != nil {
			msg += fmt.Sprintf("; last error: %v", p.lastErr)
		}
		lost = append(lost, msg)
	}
	if len(lost) == 0 {
		return nil
	}
	sort.Strings(lost)
	return fmt.Errorf("transport: rank %d: round %d: peer not answering within %v: %s", x.cfg.Rank, r, x.timeout, strings.Join(lost, "; "))
}

// Recv returns the vectors node from sent to node this round — the round
// in progress, or after BeginNextRound the one before it until the next
// Wait returns: those of a node of this rank as Send got them, those of
// another rank from the receive buffers of the round's parity. It is safe
// for concurrent use, does not allocate, and returns nil for a node node
// does not hear from.
func (x *Exchange) Recv(node, from int) [][]float32 {
	if from < 0 || from >= len(x.owner) {
		return nil
	}
	r := x.cur.Load()
	if x.owner[from] == x.cfg.Rank {
		if each := &x.each[r&1][from]; each.vecs != nil {
			return each.to(node)
		}
		return x.sent[r&1][from]
	}
	e := x.recvEdge(node, from)
	if e == nil || e.in[r&1].round != r {
		return nil
	}
	return e.in[r&1].vecs
}
