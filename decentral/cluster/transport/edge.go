package transport

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/gtstorm/gtstorm/decentral/cluster/wire"
)

// edge is the link between a node of this rank and a node of another: the
// vectors waiting to be sent on it, and the receive buffers of what the
// remote node sends the local one, by round parity. Its frames travel on
// the stream of the link between the two ranks. Its fields are guarded by
// rankConn.mu, except the floats of the receive buffers, which only the
// link's one reader writes and Recv reads once the round is done.
type edge struct {
	local, remote int
	rank          int         // the remote node's rank
	link          *link       // the link with that rank
	att           *attachment // the link's live stream, or nil
	queue         []job       // sends not yet handed to gRPC, oldest first
	sending       bool        // the link's writer is sending queue[0]
	part          [2]int      // the vector and offset up to which gRPC took the job of round partRound
	partRound     int64       // the round of the job part is of
	expect        [2]int64    // the round whose vectors in[p] must receive
	in            [2]inbox    // receive buffers by round parity
	multi         bool        // a multicast queue: local's jobs for several nodes of rank (see multicast.go)
	dests         []int       // a multicast queue's last destination list, shared by its jobs (never changed)
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
	// The slices' first inlineShares elements, inside the edge: the
	// reads of a round (Recv, reset) then miss the cache less. An edge is
	// never copied.
	vecs0   [inlineShares][]float32
	raw0    [inlineShares][]byte
	got0    [inlineShares]int
	filled0 [inlineShares]int
	seen0   [inlineShares]bool
	done0   [inlineShares]bool
}

// inlineShares is the number of vectors an inbox holds without a slice of
// its own: the two that most methods share.
const inlineShares = 2

// job is one Send's vectors, or one SendEncoded's message, for one edge.
type job struct {
	round   int64
	vecs    [][]float32
	msg     []byte
	encoded bool
	dests   []int // a multicast job's destinations, nil for an edge's job
}

func edgeKey(local, remote int) uint64 { return uint64(local)<<32 | uint64(remote) }

// edgeLocked returns the edge between local and remote, making it (and the
// link with remote's rank) the first time.
func (x *Exchange) edgeLocked(local, remote int) *edge {
	key := edgeKey(local, remote)
	if e := x.edges[key]; e != nil {
		return e
	}
	l := x.linkLocked(x.owner[remote])
	e := &edge{
		local: local, remote: remote, rank: l.rank, link: l, att: l.att,
		expect: [2]int64{-1, -1}, partRound: -1, in: [2]inbox{{round: -1}, {round: -1}},
	}
	l.edges = append(l.edges, e)
	x.emu.Lock()
	x.edges[key] = e
	x.emu.Unlock()
	if x.recvTab != nil {
		x.recvTab[x.localPos[local]*x.cfg.Nodes+remote].Store(e)
	}
	return e
}

// wakeWriter wakes the writer of e's link.
func (e *edge) wakeWriter() { e.link.wakeWriter() }

// deliver stores a DATA or ENCODED frame of e's remote node in the inbox of
// its round, and decodes an encoded message once its last chunk is in. A
// frame of the next round is kept apart; one further ahead waits, unread,
// until this rank reaches the round before it (an encoded one also until
// the vectors' length is known, which the rank's first send tells). A frame
// this rank holds already — sent again after a reconnect — is dropped, once
// checked to be the same.
//
// It runs in three steps: the frame is checked and room made for it under
// the lock (admitLocked), its data copied without the lock (copyIn), and
// what arrived counted under the lock again (accountLocked).
func (x *Exchange) deliver(l *link, e *edge, a *attachment, f *frameIn) error {
	var d delivery
	x.mu.Lock()
	take, err := x.admitLocked(l, e, a, f, &d)
	x.mu.Unlock()
	if !take {
		return err
	}
	err = x.copyIn(e, f, &d)
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.accountLocked(e, &d, err)
}

// delivery is a frame admitted into an inbox: which vector of which round
// it fills, and where its data goes.
type delivery struct {
	in               *inbox
	round            int64
	k, off, n, total int
	enc              bool
	vec              []float32 // the vector the frame fills (encoded: once complete, else nil)
	raw              []byte    // an encoded message's bytes
	decode           func(dst []float32, msg []byte) error
}

// admitLocked checks frame f of edge e, which arrived on attachment a of
// link l, waits until a round can take it, and makes room for its data,
// which it describes in d. It reports whether the frame is taken: not,
// without an error, for a frame that nothing takes (a repeat, a frame of a
// completed round, one that arrives while this rank leaves); not, failing
// the exchange, for a frame that breaks the protocol.
func (x *Exchange) admitLocked(l *link, e *edge, a *attachment, f *frameIn, d *delivery) (bool, error) {
	h := &f.h
	if h.Round > math.MaxInt64/2 {
		return false, x.faultLocked(e, "a frame of round %d", h.Round)
	}
	enc, unit := h.Kind == wire.Encoded, 4
	if enc {
		unit = 1
	}
	r, k, n := int64(h.Round), int(h.K), f.n/unit
	off, total := int(h.Offset), int(h.Total)
	if take, err := x.awaitRoundLocked(l, e, a, r, enc); !take {
		return false, err
	}
	if err := x.checkEncodingLocked(e, r, enc, total); err != nil {
		return false, err
	}
	in := &e.in[r&1]
	if in.round != r {
		in.reset(r)
	}
	if r == x.round && (e.expect[r&1] != r || k >= x.shares) {
		return false, x.unexpectedLocked(e, r, k)
	}
	in.grow(k + 1)
	*d = delivery{in: in, round: r, k: k, off: off, n: n, total: total, enc: enc}
	if take, err := x.checkChunkLocked(e, f, d); !take {
		return false, err
	}
	x.makeRoomLocked(d)
	return true, nil
}

// faultLocked fails the exchange on a frame of e's remote node that breaks
// the protocol, with an error that names the sender and says what it sent
// (format and args), and returns the error.
func (x *Exchange) faultLocked(e *edge, format string, args ...any) error {
	err := fmt.Errorf("transport: rank %d: %s sent "+format, append([]any{x.cfg.Rank, x.who(e.remote)}, args...)...)
	x.failLocked(err)
	return err
}

// awaitRoundLocked notes that link l's peer began round r, and waits until
// this rank can take a frame of round r of edge e that arrived on
// attachment a: until the receive buffers of r's parity are free (and, for
// an encoded frame, enc, until the vectors' length is known). It reports
// whether the frame is to be taken; where it is not, err says why, or is
// nil for a frame that nothing takes (one that arrives while this rank
// leaves, or one of a round this rank completed).
func (x *Exchange) awaitRoundLocked(l *link, e *edge, a *attachment, r int64, enc bool) (take bool, err error) {
	// The peer began round r: it completed, and holds, the rounds before.
	x.ackLocked(l, r)
	// The receive buffers of round r's parity are free once Recv reads
	// round r−1: frames further ahead wait.
	if x.begun && r > x.cur.Load()+1 {
		x.held.Add(1)
	}
	for !x.closed && !x.leaving && x.err == nil && l.att == a && (!x.begun || r > x.cur.Load()+1 || enc && x.veclen == 0) {
		x.cond.Wait()
	}
	switch {
	case x.leaving:
		return false, nil // no round takes it: read on, to the peer's end of the stream
	case x.err != nil:
		return false, x.err
	case x.closed:
		return false, context.Canceled
	case l.att != a:
		return false, errDetached
	case r < x.first:
		return false, x.faultLocked(e, "a frame of round %d to node %d during round %d: a past round", r, e.local, x.round)
	case r < x.round:
		x.dropped.Add(1)
		return false, nil // sent again after a reconnect: this rank completed its round
	}
	return true, nil
}

// checkEncodingLocked fails the exchange on a frame of round r of edge e
// that does not travel as this run's messages do: encoded (enc) or as
// vectors, and an encoded message of total bytes no longer than its
// vector's encoding can be.
func (x *Exchange) checkEncodingLocked(e *edge, r int64, enc bool, total int) error {
	switch {
	case enc && x.decode == nil:
		return x.faultLocked(e, "an encoded message of round %d to node %d, but this run's messages travel as vectors", r, e.local)
	case !enc && x.decode != nil:
		return x.faultLocked(e, "a vector of round %d to node %d, but this run's messages travel encoded", r, e.local)
	case enc && total > maxEncodedBytes(x.veclen):
		return x.faultLocked(e, "an encoded message of round %d to node %d of %d bytes, want at most %d", r, e.local, total, maxEncodedBytes(x.veclen))
	}
	return nil
}

// checkChunkLocked checks the chunk of frame f of edge e that delivery d
// describes against what its inbox holds, and reports whether it is to be
// taken: a vector of the run's length, the next chunk of its vector. A
// chunk the inbox holds already, sent again after a reconnect, is dropped
// once checked to be the same; any other fails the exchange.
func (x *Exchange) checkChunkLocked(e *edge, f *frameIn, d *delivery) (take bool, err error) {
	in, r, k, off, n := d.in, d.round, d.k, d.off, d.n
	unit := "float"
	if d.enc {
		unit = "byte"
	}
	switch {
	case !d.enc && x.veclen != 0 && d.total != x.veclen:
		return false, x.faultLocked(e, "vector %d of round %d to node %d with %d floats, want %d", k, r, e.local, d.total, x.veclen)
	case in.seen[k] && off+n <= in.got[k]:
		// A chunk this rank holds, sent again after a reconnect.
		same := d.enc && f.r.same(in.raw[k][off:off+n]) || !d.enc && f.sameFloats(in.vecs[k][off:off+n])
		if !same {
			return false, x.faultLocked(e, "vector %d of round %d to node %d twice, the second time with other values at %s %d", k, r, e.local, unit, off)
		}
		x.dropped.Add(1)
		return false, nil
	case off != in.got[k]:
		return false, x.faultLocked(e, "vector %d of round %d to node %d out of order: a chunk at %s %d, want %d", k, r, e.local, unit, off, in.got[k])
	}
	return true, nil
}

// makeRoomLocked counts delivery d's chunk as taken and makes room for its
// data in its inbox: a vector's floats, or an encoded message's bytes and,
// with its last chunk, the vector they decode to.
func (x *Exchange) makeRoomLocked(d *delivery) {
	in, k, off, n := d.in, d.k, d.off, d.n
	in.seen[k] = true
	in.got[k] += n
	if d.enc {
		d.raw = slices.Grow(in.raw[k][:off], n)[:off+n]
		in.raw[k] = d.raw
		if off+n == d.total {
			d.vec = slices.Grow(in.vecs[k][:0], x.veclen)[:x.veclen]
			in.vecs[k] = d.vec
		}
		d.decode = x.decode
		return
	}
	x.veclen = d.total
	d.vec = slices.Grow(in.vecs[k][:off], n)[:off+n]
	in.vecs[k] = d.vec
}

// copyIn reads frame f's data into the room admitLocked made, without the
// lock: a vector's floats, checked finite, or an encoded message's bytes,
// decoded once its last chunk is in.
func (x *Exchange) copyIn(e *edge, f *frameIn, d *delivery) error {
	if !d.enc {
		f.floats(d.vec[d.off:])
		x.bytesRecv.Add(4 * int64(d.n))
		if err := wire.CheckFinite(d.vec[d.off:], f.h.Offset); err != nil {
			return fmt.Errorf("transport: rank %d: %s sent a bad frame to node %d: %w", x.cfg.Rank, x.who(e.remote), e.local, err)
		}
		return nil
	}
	f.r.read(d.raw[d.off:])
	x.bytesRecv.Add(int64(d.n))
	return x.decodeIn(e, d)
}

// decodeIn decodes the encoded message of delivery d of edge e into its
// vector, once its last chunk is in, and checks the result finite.
func (x *Exchange) decodeIn(e *edge, d *delivery) error {
	if d.vec == nil {
		return nil // more chunks to come
	}
	err := d.decode(d.vec, d.raw)
	if err == nil {
		err = wire.CheckFinite(d.vec, 0)
	}
	if err != nil {
		return fmt.Errorf("transport: rank %d: %s sent node %d a message of round %d that does not decode: %w", x.cfg.Rank, x.who(e.remote), e.local, d.round, err)
	}
	return nil
}

// accountLocked counts delivery d's data as arrived, completing its vector
// and the round's wait for it when it is whole, or fails the exchange with
// copyIn's error.
func (x *Exchange) accountLocked(e *edge, d *delivery, err error) error {
	if err != nil {
		x.failLocked(err)
		return err
	}
	x.filledLocked(e, d)
	x.heardLocked(e.rank)
	return nil
}

// filledLocked counts delivery d's data as arrived, completing its vector
// and the round's wait for it when it is whole.
func (x *Exchange) filledLocked(e *edge, d *delivery) {
	in, k, r := d.in, d.k, d.round
	in.filled[k] += d.n
	if in.filled[k] == d.total {
		in.done[k] = true
		if x.round == r && e.expect[r&1] == r && k < x.shares {
			x.pending--
		}
	}
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
	if in.vecs == nil {
		in.vecs, in.raw, in.got, in.filled = in.vecs0[:0], in.raw0[:0], in.got0[:0], in.filled0[:0]
		in.seen, in.done = in.seen0[:0], in.done0[:0]
	}
	for len(in.vecs) < k {
		in.vecs = append(in.vecs, nil)
		in.raw = append(in.raw, nil)
		in.got = append(in.got, 0)
		in.filled = append(in.filled, 0)
		in.seen = append(in.seen, false)
		in.done = append(in.done, false)
	}
}
