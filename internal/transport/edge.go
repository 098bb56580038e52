package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/gtstorm/gtstorm/internal/wire"
)

// edge is the link between a node of this rank and a node of another: its
// stream, the vectors waiting to be sent on it, and the receive buffers of
// what the remote node sends the local one, by round parity. Its fields are
// guarded by Exchange.mu, except the floats of the receive buffers, which
// only the edge's one reader writes and Recv reads once the round is done.
type edge struct {
	local, remote int
	rank          int           // the remote node's rank
	opener        bool          // this rank opens the stream: local < remote
	att           *attachment   // the live stream, or nil
	queue         []job         // sends not yet handed to gRPC, oldest first
	sending       bool          // the writer is sending queue[0]
	wake          chan struct{} // capacity 1: wakes the writer
	expect        [2]int64      // the round whose vectors in[p] must receive
	in            [2]inbox      // receive buffers by round parity
}

// inbox holds the vectors of one round on one edge. An encoded message's
// bytes gather in raw, and its vector is what they decode to; got and
// filled then count bytes.
type inbox struct {
	round  int64       // the round its vectors are of, -1 for none
	vecs   [][]float32 // by vector index k, reused round to round
	raw    [][]byte    // encoded messages by k, reused round to round
	got    []int       // floats (bytes, encoded) taken by chunks so far, by k
	filled []int       // floats (bytes, encoded) copied so far, by k
	seen   []bool      // a chunk of k arrived
	done   []bool      // vector k is complete
}

// job is one Send's vectors, or one SendEncoded's message, for one edge.
type job struct {
	round   int64
	vecs    [][]float32
	msg     []byte
	encoded bool
}

// stream is what a client and a server stream share.
type stream interface {
	SendMsg(m any) error
	RecvMsg(m any) error
	Context() context.Context
}

// attachment is a stream serving an edge, with its reader and writer.
type attachment struct {
	s      stream
	quit   chan struct{}      // closed when the reader ends
	cancel context.CancelFunc // ends a client stream; nil on the server
}

func edgeKey(local, remote int) uint64 { return uint64(local)<<32 | uint64(remote) }

// edgeLocked returns the edge between local and remote, making it the first
// time; an edge this rank opens starts dialing then.
func (x *Exchange) edgeLocked(local, remote int) *edge {
	key := edgeKey(local, remote)
	if e := x.edges[key]; e != nil {
		return e
	}
	e := &edge{
		local: local, remote: remote, rank: x.owner[remote], opener: local < remote,
		wake: make(chan struct{}, 1), expect: [2]int64{-1, -1},
		in: [2]inbox{{round: -1}, {round: -1}},
	}
	x.emu.Lock()
	x.edges[key] = e
	x.emu.Unlock()
	if e.opener && x.started && !x.closed {
		x.wg.Add(1)
		go x.dialLoop(e, x.conns[e.rank])
	}
	return e
}

func (e *edge) wakeWriter() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// attachLocked makes s the stream of e and starts its writer.
func (x *Exchange) attachLocked(e *edge, s stream, cancel context.CancelFunc) *attachment {
	a := &attachment{s: s, quit: make(chan struct{}), cancel: cancel}
	e.att = a
	x.wg.Add(1)
	go x.writeLoop(e, a)
	return a
}

// detach ends a's service of e after its reader returned.
func (x *Exchange) detach(e *edge, a *attachment) {
	x.mu.Lock()
	if e.att == a {
		e.att = nil
	}
	x.mu.Unlock()
	close(a.quit)
	if a.cancel != nil {
		a.cancel()
	}
}

// errDetached ends the reader of a stream that another replaced.
var errDetached = errors.New("stream replaced")

// readLoop delivers the frames of a's stream until it fails.
func (x *Exchange) readLoop(e *edge, a *attachment) error {
	var m inMsg
	for {
		if err := a.s.RecvMsg(&m); err != nil {
			return err
		}
		h, err := m.header()
		switch {
		case err != nil:
			err = fmt.Errorf("transport: rank %d: %s sent a bad frame to node %d: %w", x.cfg.Rank, x.who(e.remote), e.local, err)
			x.fail(err)
		case h.Kind == wire.Data || h.Kind == wire.Encoded:
			err = x.deliver(e, a, &h, &m)
		case h.Kind == wire.Error:
			f, _ := m.frame()
			err = fmt.Errorf("transport: rank %d: %s closed its stream to node %d: %s", x.cfg.Rank, x.who(e.remote), e.local, f.Payload)
			x.fail(err)
		case h.Kind == wire.Bye:
			err = x.bye(e, &m)
		default:
			err = fmt.Errorf("transport: rank %d: %s sent a %s frame to node %d on an open stream", x.cfg.Rank, x.who(e.remote), h.Kind, e.local)
			x.fail(err)
		}
		m.free()
		if err != nil {
			return err
		}
	}
}

// deliver stores a DATA or ENCODED frame of e's remote node in the inbox of
// its round, and decodes an encoded message once its last chunk is in. A
// frame of the next round is kept apart; one further ahead waits, unread,
// until this rank reaches the round before it (an encoded one also until
// the vectors' length is known, which the rank's first send tells).
func (x *Exchange) deliver(e *edge, a *attachment, h *wire.Header, m *inMsg) error {
	x.mu.Lock()
	fault := func(format string, args ...any) error {
		err := fmt.Errorf("transport: rank %d: %s sent "+format, append([]any{x.cfg.Rank, x.who(e.remote)}, args...)...)
		x.failLocked(err)
		x.mu.Unlock()
		return err
	}
	if int(h.From) != e.remote || int(h.To) != e.local {
		return fault("a frame from node %d to node %d on the stream of node %d", h.From, h.To, e.local)
	}
	if h.Round > math.MaxInt64/2 {
		return fault("a frame of round %d", h.Round)
	}
	enc, unit := h.Kind == wire.Encoded, 4
	if enc {
		unit = 1
	}
	r, k, n := int64(h.Round), int(h.K), (m.data.Len()-wire.HeaderSize)/unit
	off, total := int(h.Offset), int(h.Total)
	// The receive buffers of round r's parity are free once Recv reads
	// round r−1: frames further ahead wait.
	if x.begun && r > x.cur.Load()+1 {
		x.held.Add(1)
	}
	for !x.closed && !x.leaving && x.err == nil && e.att == a && (!x.begun || r > x.cur.Load()+1 || enc && x.veclen == 0) {
		x.cond.Wait()
	}
	switch {
	case x.leaving:
		x.mu.Unlock()
		return nil // no round takes it: read on, to the peer's end of the stream
	case x.err != nil:
		x.mu.Unlock()
		return x.err
	case x.closed:
		x.mu.Unlock()
		return context.Canceled
	case e.att != a:
		x.mu.Unlock()
		return errDetached
	case r < x.round:
		return fault("a frame of round %d to node %d during round %d: a past round", r, e.local, x.round)
	}
	switch {
	case enc && x.decode == nil:
		return fault("an encoded message of round %d to node %d, but this run's messages travel as vectors", r, e.local)
	case !enc && x.decode != nil:
		return fault("a vector of round %d to node %d, but this run's messages travel encoded", r, e.local)
	case enc && total > maxEncodedBytes(x.veclen):
		return fault("an encoded message of round %d to node %d of %d bytes, want at most %d", r, e.local, total, maxEncodedBytes(x.veclen))
	}
	in := &e.in[r&1]
	if in.round != r {
		in.reset(r)
	}
	if r == x.round && (e.expect[r&1] != r || k >= x.shares) {
		err := x.unexpectedLocked(e, r, k)
		x.mu.Unlock()
		return err
	}
	in.grow(k + 1)
	switch {
	case in.seen[k] && in.got[k] == total:
		return fault("vector %d of round %d to node %d twice", k, r, e.local)
	case !enc && x.veclen != 0 && total != x.veclen:
		return fault("vector %d of round %d to node %d with %d floats, want %d", k, r, e.local, total, x.veclen)
	case off != in.got[k]:
		return fault("vector %d of round %d to node %d out of order: a chunk at %s %d, want %d", k, r, e.local, [2]string{"float", "byte"}[unit&1], off, in.got[k])
	}
	in.seen[k] = true
	in.got[k] += n
	var err error
	if enc {
		err = x.deliverEncoded(e, in, h, m, n)
	} else {
		x.veclen = total
		v := slices.Grow(in.vecs[k][:off], n)[:off+n]
		in.vecs[k] = v
		x.mu.Unlock()
		err = m.floats(v[off:])
		if err == nil {
			err = wire.CheckFinite(v[off:], h.Offset)
		}
		if err != nil {
			err = fmt.Errorf("transport: rank %d: %s sent a bad frame to node %d: %w", x.cfg.Rank, x.who(e.remote), e.local, err)
		}
		x.bytesRecv.Add(4 * int64(n))
		x.mu.Lock()
	}
	defer x.mu.Unlock()
	if err != nil {
		x.failLocked(err)
		return err
	}
	in.filled[k] += n
	if in.filled[k] == total {
		in.done[k] = true
		if x.round == r && e.expect[r&1] == r && k < x.shares {
			x.pending--
		}
	}
	x.heardLocked(e.rank)
	return nil
}

// reset empties the inbox for round r, keeping its buffers.
func (in *inbox) reset(r int64) {
	in.round = r
	for k := range in.vecs {
		in.vecs[k], in.raw[k] = in.vecs[k][:0], in.raw[k][:0]
		in.got[k], in.filled[k], in.seen[k], in.done[k] = 0, 0, false, false
	}
}

// grow makes room for vectors 0..k-1.
func (in *inbox) grow(k int) {
	for len(in.vecs) < k {
		in.vecs = append(in.vecs, nil)
		in.raw = append(in.raw, nil)
		in.got = append(in.got, 0)
		in.filled = append(in.filled, 0)
		in.seen = append(in.seen, false)
		in.done = append(in.done, false)
	}
}

// writeLoop hands e's queued vectors to a's stream, one job at a time.
func (x *Exchange) writeLoop(e *edge, a *attachment) {
	defer x.wg.Done()
	msg := &outMsg{}
	for {
		x.mu.Lock()
		if e.att != a || x.closed {
			x.mu.Unlock()
			return
		}
		if len(e.queue) == 0 {
			if x.leaving {
				x.mu.Unlock()
				x.sendBye(e, a)
				return
			}
			x.mu.Unlock()
			select {
			case <-e.wake:
			case <-a.quit:
				return
			case <-a.s.Context().Done():
				return
			}
			continue
		}
		j := e.queue[0]
		e.sending = true
		x.mu.Unlock()
		err := x.sendJob(e, a, j, msg)
		x.mu.Lock()
		e.sending = false
		if err != nil && x.peers[e.rank].stopped > j.round {
			// The peer completed the job's round, so it had the vectors.
			e.queue = e.queue[:copy(e.queue, e.queue[1:])]
			x.outPending--
			x.notify()
			x.mu.Unlock()
			continue
		}
		if err != nil {
			// io.EOF: the stream broke, and its reader learns why.
			if err != io.EOF {
				x.peers[e.rank].lastErr = fmt.Errorf("sending node %d's vectors to node %d: %w", e.local, e.remote, err)
			}
			x.mu.Unlock()
			if a.cancel != nil && err != io.EOF {
				a.cancel()
			}
			return
		}
		e.queue = e.queue[:copy(e.queue, e.queue[1:])]
		x.outPending--
		x.heardLocked(e.rank)
		x.mu.Unlock()
	}
}

// sendJob sends one job's vectors, each in chunks of at most x.chunk
// floats, or its encoded message in chunks of at most 4·x.chunk bytes.
func (x *Exchange) sendJob(e *edge, a *attachment, j job, msg *outMsg) error {
	if j.encoded {
		return x.sendEncoded(e, a, j, msg)
	}
	for k, v := range j.vecs {
		for off := 0; off == 0 || off < len(v); off += x.chunk {
			n := min(x.chunk, len(v)-off)
			msg.h = wire.Header{
				Kind: wire.Data, K: uint8(k), Round: uint64(j.round),
				From: uint32(e.local), To: uint32(e.remote),
				Offset: uint32(off), Total: uint32(len(v)),
			}
			msg.payload = v[off : off+n]
			if err := a.s.SendMsg(msg); err != nil {
				return err
			}
			x.bytesSent.Add(4 * int64(n))
		}
	}
	msg.payload = nil
	return nil
}
