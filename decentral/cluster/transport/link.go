package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtstorm/gtstorm/decentral/cluster/wire"
)

// link is this rank's connection with another rank: one gRPC stream at a
// time, opened by the lower rank, carries the frames of every edge between
// their nodes, both ways (each frame names its nodes), a round's frames for
// the rank batched into few messages. Its fields are guarded by
// rankConn.mu.
//
// Delivery is exactly once across reconnects. A batch handed to gRPC stays
// in out until the peer's progress shows that it arrived — an ACK or a
// HELLO naming the rounds the peer completed, or a frame of a later round,
// which the peer sends only once it completed the rounds before — and a new
// stream starts by sending out again, before anything new. The receiver
// drops a frame it already holds (see deliver), so that a vector is
// delivered once however often it travels.
type link struct {
	rank    int           // the remote rank
	opener  bool          // this rank opens the stream: it has the lower rank
	att     *attachment   // the live stream, or nil
	edges   []*edge       // the edges between the nodes of the two ranks
	wake    chan struct{} // capacity 1: wakes the writer
	out     []sentBatch   // batches handed to gRPC, not yet acknowledged, oldest first
	acked   int64         // rounds the peer completed, as far as this rank knows
	ackSent int64         // rounds completed that this rank last told the peer
	fan     fanIn         // the reader's room for multicast frames

	readers, writers atomic.Int32 // running, for the check that there is one of each at most
}

// enter counts a reader or writer of a link starting (n = 1) or ending
// (n = −1); two at once is a fault of the Exchange, which Exchange.overlaps
// counts for the tests.
func (x *Exchange) enter(running *atomic.Int32, n int32) {
	if running.Add(n) > 1 {
		x.overlaps.Add(1)
	}
}

// sentBatch is a batch handed to gRPC and kept until acknowledged.
type sentBatch struct {
	round int64 // the latest round of its frames
	buf   []byte
}

// stream is what a client and a server stream share.
type stream interface {
	SendMsg(m any) error
	RecvMsg(m any) error
	Context() context.Context
}

// attachment is a stream serving a link, with its reader and writer. A
// stream that replaces another — a reconnect, or a second stream for the
// same rank pair — starts reading and writing only once the reader and
// writer of the one it replaced have ended: a link has one writer and one
// reader at any time.
type attachment struct {
	s         stream
	quit      chan struct{}      // closed when the stream's service ends
	stop      chan struct{}      // closed when another stream replaces this one
	cancel    context.CancelFunc // ends a client stream; nil on the server
	readDone  chan struct{}      // closed when the reader ended
	writeDone chan struct{}      // closed when the writer ended
	prevRead  <-chan struct{}    // the replaced stream's readDone, or nil
	prevWrite <-chan struct{}    // the replaced stream's writeDone, or nil
}

// errDetached ends the reader of a stream that another replaced.
var errDetached = errors.New("stream replaced")

// linkLocked returns the link with rank, making it the first time; a link
// this rank opens starts dialing then.
func (x *Exchange) linkLocked(rank int) *link {
	if l := x.links[rank]; l != nil {
		return l
	}
	l := &link{rank: rank, opener: x.cfg.Rank < rank, wake: make(chan struct{}, 1)}
	x.links[rank] = l
	if l.opener && x.started && !x.closed {
		x.wg.Add(1)
		go x.dialLoop(l, x.conns[rank])
	}
	return l
}

// ackedLocked returns the rounds the link with rank acknowledged, or 0
// before there is one.
func (x *Exchange) ackedLocked(rank int) int64 {
	if l := x.links[rank]; l != nil {
		return l.acked
	}
	return 0
}

func (l *link) wakeWriter() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// attachLocked makes s the stream of l and starts its writer; the caller
// calls serve next, which starts its reader. A stream l had is replaced:
// its service stops, and the new stream's reader and writer wait for the
// old ones to end.
func (x *Exchange) attachLocked(l *link, s stream, cancel context.CancelFunc) *attachment {
	a := &attachment{
		s: s, cancel: cancel, quit: make(chan struct{}), stop: make(chan struct{}),
		readDone: make(chan struct{}), writeDone: make(chan struct{}),
	}
	if old := l.att; old != nil {
		a.prevRead, a.prevWrite = old.readDone, old.writeDone
		close(old.stop)
		if old.cancel != nil {
			old.cancel()
		}
	}
	l.att = a
	for _, e := range l.edges {
		e.att = a
	}
	x.cond.Broadcast() // the old reader, holding an early frame, ends
	x.wg.Add(2)        // the writer, and the reader serve starts
	go x.writeLoop(l, a)
	return a
}

// serve reads a's stream until it fails or another replaces it, and then
// ends a's service of l. The reader runs apart, so that a server stream's
// handler can return, which ends the stream, as soon as it is replaced.
func (x *Exchange) serve(l *link, a *attachment) error {
	errc := make(chan error, 1)
	go func() { // counted in x.wg by attachLocked
		defer x.wg.Done()
		defer close(a.readDone)
		if a.prevRead != nil {
			<-a.prevRead
		}
		x.enter(&l.readers, 1)
		defer x.enter(&l.readers, -1)
		errc <- x.readLoop(l, a)
	}()
	var err error
	select {
	case err = <-errc:
	case <-a.stop:
		err = errDetached
	}
	x.detach(l, a)
	return err
}

// detach ends a's service of l.
func (x *Exchange) detach(l *link, a *attachment) {
	x.mu.Lock()
	if l.att == a {
		l.att = nil
		for _, e := range l.edges {
			e.att = nil
		}
	}
	x.mu.Unlock()
	close(a.quit)
	if a.cancel != nil {
		a.cancel()
	}
}

// ackLocked records that l's peer completed done rounds, and drops the
// batches it therefore holds.
func (x *Exchange) ackLocked(l *link, done int64) {
	l.acked = max(l.acked, done)
	if x.peers[l.rank].stopped >= 0 {
		l.out = nil // the peer left: nothing is sent to it again
		return
	}
	n := 0
	for n < len(l.out) && l.out[n].round < l.acked {
		n++
	}
	if n > 0 {
		l.out = l.out[:copy(l.out, l.out[n:])]
		clear(l.out[len(l.out):cap(l.out)])
	}
}

// readLoop takes the messages of a's stream until it fails.
func (x *Exchange) readLoop(l *link, a *attachment) error {
	var m inMsg
	var r msgReader
	for {
		if err := a.s.RecvMsg(&m); err != nil {
			return x.linkError(l, err)
		}
		err := x.take(l, a, &m, &r)
		m.free()
		if err != nil {
			return err
		}
	}
}

// linkError returns err, the error a stream of l ended with, unless it
// says that a message passed the size limit: then it fails the Exchange,
// and logs, with an error naming the message's size and the limit.
func (x *Exchange) linkError(l *link, err error) error {
	if status.Code(err) != codes.ResourceExhausted {
		return err
	}
	err = fmt.Errorf("transport: rank %d: a message on the link with rank %d at %s exceeds the limit of %d bytes: %s",
		x.cfg.Rank, l.rank, x.cfg.Addrs[l.rank], maxMessage, status.Convert(err).Message())
	x.logf("%v", err)
	x.fail(err)
	return err
}

// take handles one message of l's stream: a batch, or a text frame alone.
func (x *Exchange) take(l *link, a *attachment, m *inMsg, r *msgReader) error {
	r.reset(m.data)
	if r.left >= 2 {
		var magic [2]byte
		peek := *r
		peek.read(magic[:])
		if magic == [2]byte{batchMagic0, batchMagic1} {
			err := r.records(func(f *frameIn) error { return x.dispatch(l, a, f) })
			if errors.Is(err, wire.ErrMalformed) {
				err = x.badLink(l, "a bad batch: %w", err)
			}
			return err
		}
	}
	h, err := m.header()
	switch {
	case err != nil:
		return x.badLink(l, "a bad frame: %w", err)
	case h.Kind == wire.Error:
		f, _ := m.frame()
		err = fmt.Errorf("transport: rank %d: rank %d at %s closed its link: %s", x.cfg.Rank, l.rank, x.cfg.Addrs[l.rank], f.Payload)
		x.fail(err)
		return err
	case h.Kind == wire.Bye:
		e, err := x.edgeOf(l, h)
		if err != nil {
			return err
		}
		return x.bye(e, m)
	}
	return x.badLink(l, "a %s frame alone on the open link to rank %d", h.Kind, x.cfg.Rank)
}

// dispatch hands a frame of a batch to its edge.
func (x *Exchange) dispatch(l *link, a *attachment, f *frameIn) error {
	switch {
	case f.h.Kind == wire.Data || f.h.Kind == wire.Encoded:
		e, err := x.edgeOf(l, f.h)
		if err != nil {
			return err
		}
		return x.deliver(l, e, a, f)
	case f.h.Kind == wire.Multi || f.h.Kind == wire.MultiEncoded:
		return x.fanOut(l, a, f)
	case f.h.Kind == wire.Hello && f.h.K == ackK && f.h.Round <= math.MaxInt64/2:
		x.mu.Lock()
		x.ackLocked(l, int64(f.h.Round))
		x.heardLocked(l.rank)
		x.mu.Unlock()
		return nil
	}
	return x.badLink(l, "a %s frame (k %d, round %d) in a batch", f.h.Kind, f.h.K, f.h.Round)
}

// edgeOf returns the edge a frame of l's peer names, which must join a
// node of the peer's to one of this rank's.
func (x *Exchange) edgeOf(l *link, h wire.Header) (*edge, error) {
	from, to := int(h.From), int(h.To)
	if from < x.cfg.Nodes && x.owner[from] == l.rank {
		if to >= x.cfg.Nodes || x.owner[to] != x.cfg.Rank {
			err := fmt.Errorf("transport: rank %d: %s sent a frame from node %d to node %d, which rank %d does not run", x.cfg.Rank, x.who(from), from, to, x.cfg.Rank)
			x.fail(err)
			return nil, err
		}
		x.mu.Lock()
		defer x.mu.Unlock()
		return x.edgeLocked(to, from), nil
	}
	return nil, x.badLink(l, "a frame from node %d to node %d: node %d is not rank %d's", from, to, from, l.rank)
}

// badLink fails the Exchange with the fault of l's peer that format names.
func (x *Exchange) badLink(l *link, format string, args ...any) error {
	err := fmt.Errorf("transport: rank %d: rank %d at %s sent "+format, append([]any{x.cfg.Rank, l.rank, x.cfg.Addrs[l.rank]}, args...)...)
	x.fail(err)
	return err
}

// writeLoop sends l's frames on a's stream: first the batches the peer may
// lack, then, batch by batch, the head job of every edge of l and an ACK
// when this rank completed a round; when the rank leaves, a BYE last.
func (x *Exchange) writeLoop(l *link, a *attachment) {
	defer x.wg.Done()
	defer close(a.writeDone)
	if a.prevWrite != nil {
		<-a.prevWrite
	}
	x.enter(&l.writers, 1)
	defer x.enter(&l.writers, -1)
	if err := x.resend(l, a); err != nil {
		x.sendFailed(l, a, err)
		return
	}
	w := &batcher{x: x, l: l, a: a}
	for {
		x.mu.Lock()
		if l.att != a || x.closed {
			x.mu.Unlock()
			return
		}
		ack := int64(-1)
		if x.done > l.ackSent {
			ack = x.done
		}
		jobs := x.takeJobsLocked(l, w.jobs[:0])
		w.jobs = jobs
		if len(jobs) == 0 && ack < 0 {
			if i := slices.IndexFunc(l.edges, func(e *edge) bool { return !e.multi }); x.leaving && i >= 0 {
				e := l.edges[i]
				x.mu.Unlock()
				x.sendBye(e, a)
				return
			}
			x.mu.Unlock()
			if !waitForWork(l, a) {
				return
			}
			continue
		}
		x.mu.Unlock()
		err := w.send(jobs, ack)
		x.mu.Lock()
		x.finishJobsLocked(l, jobs, ack, err)
		x.mu.Unlock()
		if err != nil {
			x.sendFailed(l, a, err)
			return
		}
	}
}

// resend acknowledges the rounds l's peer completed and sends again, on
// a's new stream, the batches handed to gRPC that the peer may lack.
func (x *Exchange) resend(l *link, a *attachment) error {
	x.mu.Lock()
	x.ackLocked(l, l.acked)
	resend := append([]sentBatch(nil), l.out...)
	x.mu.Unlock()
	for _, b := range resend {
		if err := a.s.SendMsg(&batchMsg{b.buf}); err != nil {
			return err
		}
	}
	return nil
}

// takeJobsLocked appends to jobs the head job of every edge of l that has
// one and is not sending it, marking the edge as sending, and returns the
// result.
func (x *Exchange) takeJobsLocked(l *link, jobs []edgeJob) []edgeJob {
	for _, e := range l.edges {
		if len(e.queue) > 0 && !e.sending {
			e.sending = true
			t := edgeJob{e: e, j: e.queue[0]}
			if e.partRound == t.j.round {
				t.part = e.part // a stream that failed took this much
			}
			jobs = append(jobs, t)
		}
	}
	return jobs
}

// waitForWork waits until l's writer is woken, and reports false instead
// where a's stream ends first.
func waitForWork(l *link, a *attachment) bool {
	select {
	case <-l.wake:
		return true
	case <-a.quit:
		return false
	case <-a.stop:
		return false
	case <-a.s.Context().Done():
		return false
	}
}

// finishJobsLocked ends the sending of jobs, and of an ACK of ack rounds
// unless ack < 0, which the send returned err for: it drops each job that
// is done from its edge's queue, notes the ACK and the peer's progress if
// the send succeeded, and wakes Wait. It clears jobs.
func (x *Exchange) finishJobsLocked(l *link, jobs []edgeJob, ack int64, err error) {
	for _, t := range jobs {
		e := t.e
		e.sending = false
		// The job is done once handed to gRPC, or once the peer left
		// after completing its round, having had the vectors.
		if len(e.queue) > 0 && (err == nil || x.peers[l.rank].stopped > e.queue[0].round) {
			e.queue = e.queue[:copy(e.queue, e.queue[1:])]
			x.outPending--
		}
	}
	clear(jobs)
	if err == nil {
		l.ackSent = max(l.ackSent, ack)
		x.heardLocked(l.rank)
	}
	x.notify()
}

// sendFailed ends a's writer after a send failed with err.
func (x *Exchange) sendFailed(l *link, a *attachment, err error) {
	if err == io.EOF {
		return // the stream broke, and its reader learns why
	}
	x.mu.Lock()
	x.peers[l.rank].lastErr = fmt.Errorf("sending to rank %d: %w", l.rank, err)
	x.mu.Unlock()
	if a.cancel != nil {
		a.cancel()
	}
}
