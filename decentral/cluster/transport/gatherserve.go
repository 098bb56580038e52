package transport

import (
	"fmt"
	"math"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/decentral/cluster/wire"
)

// Rank 0's side of gathering: the stream each other rank opens, and the
// filing of the node states that arrive on it.

// serveGather serves the gather stream of another rank: it checks the
// HELLO (the rank, its certificate, the config hash) and files every node
// state that arrives by round.
func (c *Control) serveGather(ss grpc.ServerStream) error {
	rank, err := c.acceptGatherer(ss)
	if err != nil {
		return err
	}
	filed := map[int]int{} // by node: the latest round this stream filed
	var part stateChunks
	for {
		var m inMsg
		if err := ss.RecvMsg(&m); err != nil {
			return err
		}
		f, err := m.frame()
		m.free()
		if err == nil && f.Kind == wire.Bye && int(f.From) == rank && f.Round <= math.MaxInt64/2 {
			if why := c.impostor(rank, int64(f.Round)); why != "" {
				_, refuse := c.refuser(ss, "a BYE")
				return refuse(codes.AlreadyExists, "%s", why)
			}
			c.peerLeft(rank, int64(f.Round), string(f.Payload))
			return nil // the BYE is the stream's last frame
		}
		if err == nil && f.Kind == wire.Hello && (f.K == agreeK || f.K == inputsK) && int(f.From) == rank {
			if err := c.answerQuery(ss, rank, f); err != nil {
				return status.Error(codes.InvalidArgument, err.Error())
			}
			continue
		}
		var s decentral.NodeState
		whole := false
		if err == nil {
			whole, err = part.add(&f)
		}
		if err == nil && !whole {
			continue // the state's next chunk follows
		}
		if err == nil {
			s, err = c.gatheredState(rank, f)
		}
		if err != nil {
			return c.gatherFailed(rank, err)
		}
		round := int(f.Round)
		if _, sent := filed[s.Node]; !sent {
			// A new stream whose first state goes back is not rank's (a
			// reset resends the latest round at most): refused, and no
			// fault of the run's.
			if why := c.staleState(rank, s.Node, int64(round)); why != "" {
				_, refuse := c.refuser(ss, "a gather stream")
				return refuse(codes.AlreadyExists, "%s", why)
			}
		}
		if err := c.fileGathered(rank, round, s, part.frames*wire.HeaderSize+len(f.Payload), filed); err != nil {
			return err
		}
		filed[s.Node] = round
		ack := wire.AppendHeader(nil, wire.Header{Kind: wire.Hello, K: gatherAckK, Round: uint64(round)})
		if err := ss.SendMsg(&ack); err != nil {
			return err
		}
	}
}

// acceptGatherer reads the HELLO of a gather stream another rank opened
// and answers it, returning the rank; it refuses the stream where this is
// not rank 0, or the rank, its certificate or its config hash does not fit.
func (c *Control) acceptGatherer(ss grpc.ServerStream) (rank int, err error) {
	auth, refuse := c.refuser(ss, "a gather stream")
	var m inMsg
	if err := ss.RecvMsg(&m); err != nil {
		return 0, err
	}
	f, err := m.frame()
	m.free()
	rank = int(f.From)
	switch {
	case err != nil:
		return 0, refuse(codes.InvalidArgument, "HELLO: %v", err)
	case f.Kind != wire.Hello:
		return 0, refuse(codes.InvalidArgument, "a %s frame before HELLO", f.Kind)
	case c.cfg.Rank != 0:
		return 0, refuse(codes.InvalidArgument, "rank %d gathers nothing: rank 0 does", c.cfg.Rank)
	case rank <= 0 || rank >= len(c.cfg.Addrs):
		return 0, refuse(codes.InvalidArgument, "HELLO from rank %d, want a rank of [1, %d)", rank, len(c.cfg.Addrs))
	case string(f.Payload) != c.cfg.ConfigHash:
		return 0, refuse(codes.FailedPrecondition, "config hash mismatch: rank %d has %q, rank 0 has %q", rank, f.Payload, c.cfg.ConfigHash)
	}
	if r, err := certRank(auth); err != nil {
		return 0, refuse(codes.PermissionDenied, "%v", err)
	} else if r >= 0 && r != rank {
		return 0, refuse(codes.PermissionDenied, "certificate of rank %d gathering as rank %d", r, rank)
	}
	hello := wire.AppendText(nil, wire.Header{Kind: wire.Hello}, c.cfg.ConfigHash)
	if err := ss.SendMsg(&hello); err != nil {
		return 0, err
	}
	return rank, nil
}

// answerQuery answers the query HELLO f that rank sent on its gather
// stream: the agreement on a round (agreeK) or on the inputs (inputsK).
func (c *Control) answerQuery(ss grpc.ServerStream, rank int, f wire.Frame) error {
	answer := c.answerRound
	if f.K == inputsK {
		c.fileKernels(rank, f.Round)
		answer = c.answerInputs
	}
	return answer(ss, rank, string(f.Payload))
}

// gatheredState decodes the node state in frame f of rank's gather stream,
// checking that it is a GATHER frame of rank's and that rank runs the node.
func (c *Control) gatheredState(rank int, f wire.Frame) (decentral.NodeState, error) {
	if f.Kind != wire.Gather || int(f.From) != rank {
		return decentral.NodeState{}, fmt.Errorf("a %s frame from rank %d on rank %d's gather stream", f.Kind, f.From, rank)
	}
	s, err := DecodeState(f.Payload, c.cfg.VectorLen)
	if err != nil {
		return s, err
	}
	if s.Node < 0 || s.Node >= c.cfg.Nodes || c.owner[s.Node] != rank {
		return s, fmt.Errorf("a state of node %d, which rank %d does not run", s.Node, rank)
	}
	return s, nil
}

// fileGathered files node state s of round, which rank's gather stream
// sent in a frame of size bytes; filed holds, by node, the latest round
// this stream filed. A state this stream sent already is refused; one of
// the node's latest round, sent again after a reset, is filed as
// fileAgainLocked says. On a refusal it fails the gathering (see
// gatherFailLocked) and returns the stream's error.
func (c *Control) fileGathered(rank, round int, s decentral.NodeState, size int, filed map[int]int) error {
	g := &c.gather
	g.mu.Lock()
	var err error
	if last, ok := filed[s.Node]; ok && round <= last {
		err = g.fileLocked(round, s) // refused: this stream sent it already
	} else {
		err = g.fileAgainLocked(round, s)
	}
	if err != nil {
		c.gatherFailLocked(rank, err)
		g.mu.Unlock()
		return status.Error(codes.InvalidArgument, err.Error())
	}
	c.bytesRecv.Add(int64(size))
	g.heard = time.Now()
	g.cond.Broadcast()
	g.mu.Unlock()
	return nil
}

// gatherFailed fails the gathering for rank's bad node state (see
// gatherFailLocked) and returns the stream's error.
func (c *Control) gatherFailed(rank int, err error) error {
	g := &c.gather
	g.mu.Lock()
	c.gatherFailLocked(rank, err)
	g.mu.Unlock()
	return status.Error(codes.InvalidArgument, err.Error())
}

// gatherFailLocked records that rank sent a bad node state, err, as the
// gathering's error and wakes those waiting on it. It holds c.gather.mu.
func (c *Control) gatherFailLocked(rank int, err error) {
	g := &c.gather
	g.err = fmt.Errorf("transport: rank %d at %s sent a bad node state: %w", rank, c.cfg.Addrs[rank], err)
	g.cond.Broadcast()
}

// fileAgainLocked files node state s of round as fileLocked does, except
// that the state of the node's latest round, sent again on a new stream
// after a reset, is dropped when it is the same as the one filed (or when
// that one was taken by Gather already) and refused when it differs. It
// holds g.mu.
func (g *gatherBox) fileAgainLocked(round int, s decentral.NodeState) error {
	if last, ok := g.last[s.Node]; !ok || round != last {
		return g.fileLocked(round, s)
	}
	for _, had := range g.rounds[round] {
		if had.Node == s.Node && !sameState(had, s) {
			return fmt.Errorf("node %d's state of round %d again, with other values", s.Node, round)
		}
	}
	return nil
}

// sameState reports whether two node states hold the same bits.
func sameState(a, b decentral.NodeState) bool {
	if a.Node != b.Node || a.Samples != b.Samples || a.Evals != b.Evals || a.Bytes != b.Bytes ||
		math.Float64bits(a.Loss) != math.Float64bits(b.Loss) || len(a.X) != len(b.X) {
		return false
	}
	for k := range a.X {
		if math.Float32bits(a.X[k]) != math.Float32bits(b.X[k]) {
			return false
		}
	}
	return true
}

// fileLocked files node state s of round, holding g.mu: each node's state
// arrives once per round, in increasing rounds; a second one of a round, or
// one of an earlier round, is refused naming the node and both rounds.
func (g *gatherBox) fileLocked(round int, s decentral.NodeState) error {
	if round < 0 || round > math.MaxInt32 {
		return fmt.Errorf("node %d's state of round %d, want a round of [0, 2^31)", s.Node, round)
	}
	if last, ok := g.last[s.Node]; ok && round <= last {
		if round == last {
			return fmt.Errorf("node %d's state of round %d twice", s.Node, round)
		}
		return fmt.Errorf("node %d's state of round %d after its state of round %d", s.Node, round, last)
	}
	if g.last == nil {
		g.last = make(map[int]int)
	}
	g.last[s.Node] = round
	g.rounds[round] = append(g.rounds[round], s)
	return nil
}

// stateChunks reassembles a node state that arrives in several GATHER
// frames: chunks in order, of one round and one length.
type stateChunks struct {
	buf    []byte
	round  uint64
	total  uint32 // the state's 4-byte words
	frames int    // the frames it took
}

// add takes frame f, the next on a gather stream, and reports whether it
// completes a state; then f's payload is the whole state. A frame that
// starts a state (Offset 0) drops any state left unfinished; a chunk out of
// order, or of another round or length, is refused. Frames of other kinds
// pass through whole.
func (p *stateChunks) add(f *wire.Frame) (whole bool, err error) {
	if f.Kind != wire.Gather {
		return true, nil
	}
	if f.Offset == 0 {
		p.buf, p.round, p.total, p.frames = p.buf[:0], f.Round, f.Total, 0
	}
	if f.Round != p.round || f.Total != p.total || int(f.Offset) != len(p.buf)/4 {
		return false, fmt.Errorf("a GATHER chunk at word %d of %d of round %d, want word %d of %d of round %d", f.Offset, f.Total, f.Round, len(p.buf)/4, p.total, p.round)
	}
	p.frames++
	if f.Offset == 0 && len(f.Payload) == 4*int(f.Total) {
		return true, nil // a state in one frame: f is it
	}
	p.buf = append(p.buf, f.Payload...)
	if len(p.buf) < 4*int(p.total) {
		return false, nil
	}
	f.Offset, f.Payload = 0, p.buf
	return true, nil
}
