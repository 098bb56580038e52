package transport

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"google.golang.org/grpc"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/decentral/cluster"
	"github.com/gtstorm/gtstorm/decentral/cluster/wire"
)

// Gathering: at evaluation rounds every rank but 0 sends its nodes' states
// (parameters and counters) to rank 0, one GATHER frame per node on one
// stream per rank, so that rank 0 measures the whole run. A GATHER frame's
// header names the round and, in From, the sending rank; its payload is a
// chunk, at Offset of Total 4-byte words, of one node state (a state longer
// than a gRPC message travels in several frames, in order, and rank 0
// acknowledges it once whole):
//
//	0  node     uint32
//	4  samples  int64
//	12 evals    int64
//	20 bytes    int64
//	28 loss     float64 (NaN for none)
//	36 x        p float32, little-endian
const (
	gatherMethod    = "/" + serviceName + "/Gather"
	stateHeaderSize = 36
	// maxGatherWords bounds the 4-byte words of one GATHER frame's chunk,
	// under gRPC's message limit.
	maxGatherWords = (maxMessage - wire.HeaderSize) / 4
)

// gatherBox holds, on rank 0, the states that arrived per round.
type gatherBox struct {
	mu     sync.Mutex
	cond   *sync.Cond
	rounds map[int][]decentral.NodeState
	err    error // a peer's fault, reported by the next Gather
	heard  time.Time
	agree  agreeBox
	last   map[int]int                   // by node: the latest round whose state arrived
	inputs map[int][]cluster.Fingerprint // by rank: its input files (see AgreeInputs)
	told   map[int]context.Context       // by rank: the gather stream rank 0 told a difference of input files on
	ksets  map[int]string                // by rank: its kernel set (see AgreeInputsKernels)
	abort  aborter
}

// gatherClient is a rank's stream to rank 0.
type gatherClient struct {
	mu     sync.Mutex
	cs     grpc.ClientStream
	cancel context.CancelFunc // cs's
	buf    []byte             // one frame
	state  []byte             // one node state, sent in frames of at most maxGatherWords
}

// AppendState appends node state s as a GATHER payload.
func AppendState(b []byte, s decentral.NodeState) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(s.Node))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.Samples))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.Evals))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.Bytes))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.Loss))
	for _, v := range s.X {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return b
}

// DecodeState decodes a GATHER payload of a node with p parameters. It
// refuses a payload of another length, negative counters and a NaN or
// Inf parameter, naming the fault.
func DecodeState(b []byte, p int) (decentral.NodeState, error) {
	var s decentral.NodeState
	if len(b) < stateHeaderSize || (len(b)-stateHeaderSize)%4 != 0 {
		return s, fmt.Errorf("node state of %d bytes, want %d + 4 per parameter", len(b), stateHeaderSize)
	}
	if n := (len(b) - stateHeaderSize) / 4; p > 0 && n != p {
		return s, fmt.Errorf("node state with %d parameters, want %d", n, p)
	}
	s.Node = int(binary.LittleEndian.Uint32(b))
	s.Samples = int64(binary.LittleEndian.Uint64(b[4:]))
	s.Evals = int64(binary.LittleEndian.Uint64(b[12:]))
	s.Bytes = int64(binary.LittleEndian.Uint64(b[20:]))
	s.Loss = math.Float64frombits(binary.LittleEndian.Uint64(b[28:]))
	if s.Samples < 0 || s.Evals < 0 || s.Bytes < 0 || math.IsInf(s.Loss, 0) {
		return s, fmt.Errorf("node %d's state: counters %d samples, %d evaluations, %d bytes, loss %v", s.Node, s.Samples, s.Evals, s.Bytes, s.Loss)
	}
	s.X = make([]float32, (len(b)-stateHeaderSize)/4)
	for k := range s.X {
		v := math.Float32frombits(binary.LittleEndian.Uint32(b[stateHeaderSize+4*k:]))
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return s, fmt.Errorf("node %d's state: parameter %d is %v", s.Node, k, v)
		}
		s.X[k] = v
	}
	return s, nil
}

// Gather sends the states of this rank's nodes after round t to rank 0. On
// rank 0 it waits for every other rank's nodes' states of round t and
// returns them; a rank that sends nothing for the peer timeout is lost, and
// one that said BYE before round (see Leave) at once. It makes Control a
// train.Control.
func (c *Control) Gather(ctx context.Context, round int, states []decentral.NodeState) ([]decentral.NodeState, error) {
	if c.gone(c.cfg.Rank) {
		return nil, fmt.Errorf("transport: rank %d: Gather after Leave", c.cfg.Rank)
	}
	if c.cfg.Rank != 0 {
		return nil, c.sendStates(ctx, round, states)
	}
	want := c.cfg.Nodes - len(c.local)
	g := &c.gather
	g.mu.Lock()
	defer g.mu.Unlock()
	g.heard = time.Now()
	err := c.waitGatherLocked(ctx, func() bool { return len(g.rounds[round]) >= want }, func() error {
		if g.err != nil {
			return g.err
		}
		if err := c.stoppedOwingLocked(round); err != nil {
			return fmt.Errorf("transport: rank 0: gather round %d: %w", round, err)
		}
		if time.Since(g.heard) > c.timeout {
			return fmt.Errorf("transport: rank 0 gathered %d of %d node states of round %d: %w", len(g.rounds[round]), want, round, c.missing(round))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	got := g.rounds[round]
	delete(g.rounds, round)
	return got, nil
}

// waitGatherLocked waits on the gather box, holding its lock, until done
// reports true. It stops with ctx's error, when the transport closes, or
// with the error failed returns, and wakes at least every tenth of the peer
// timeout so that failed can look at the clock.
func (c *Control) waitGatherLocked(ctx context.Context, done func() bool, failed func() error) error {
	g := &c.gather
	wake := func() { g.mu.Lock(); g.cond.Broadcast(); g.mu.Unlock() }
	stop := context.AfterFunc(ctx, wake)
	defer stop()
	quit := make(chan struct{})
	defer close(quit)
	go func() {
		t := time.NewTicker(c.timeout / 10)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				wake()
			}
		}
	}()
	for !done() {
		if err := failed(); err != nil {
			return err
		}
		if err := c.abort.cause(); err != nil {
			return fmt.Errorf("transport: rank %d: %w", c.cfg.Rank, err)
		}
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case c.isClosed():
			return errors.New("transport closed")
		}
		g.cond.Wait()
	}
	return nil
}

// missing names the first rank whose states of round have not all arrived.
func (c *Control) missing(round int) error {
	have := map[int]int{}
	for _, s := range c.gather.rounds[round] {
		have[c.owner[s.Node]]++
	}
	count := map[int]int{}
	for _, r := range c.owner {
		count[r]++
	}
	for r := range c.cfg.Addrs {
		if r != 0 && have[r] < count[r] {
			what := fmt.Sprintf("its nodes' states: it sent %d of %d", have[r], count[r])
			return &PeerTimeoutError{Rank: r, Addr: c.cfg.Addrs[r], What: what, Timeout: c.timeout, Last: c.lastOf(r)}
		}
	}
	return errors.New("no rank is missing")
}

// sendStates sends this rank's node states of round to rank 0, opening the
// gather stream on first use, and waits for rank 0's acknowledgement that
// it filed them all. A stream that breaks on the way (a reset connection)
// is opened again and the round's states sent again, for up to the peer
// timeout: rank 0 drops the states it already holds.
func (c *Control) sendStates(ctx context.Context, round int, states []decentral.NodeState) error {
	for _, s := range states {
		if words := uint64(stateHeaderSize/4 + len(s.X)); words > math.MaxUint32 {
			return fmt.Errorf("transport: node %d's state of %d parameters exceeds a GATHER state's %d words", s.Node, len(s.X), uint32(math.MaxUint32))
		}
	}
	to := &c.gatherTo
	to.mu.Lock()
	defer to.mu.Unlock()
	deadline := time.Now().Add(c.timeout)
	for {
		err := c.trySendStatesLocked(ctx, round, states)
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		c.logf("transport: rank %d: %v; opening the gather stream again", c.cfg.Rank, err)
		c.dropGatherLocked()
	}
}

// trySendStatesLocked sends round's states on the gather stream and waits,
// at most the peer timeout, for rank 0's acknowledgement. It holds
// c.gatherTo.mu.
func (c *Control) trySendStatesLocked(ctx context.Context, round int, states []decentral.NodeState) error {
	to := &c.gatherTo
	cs, err := c.gatherStreamLocked(ctx, true)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		return fmt.Errorf("transport: rank %d: gather to rank 0 at %s: %w", c.cfg.Rank, c.cfg.Addrs[0], err)
	}
	for _, s := range states {
		// Offset and Total count the state in 4-byte words, as a float
		// frame's; each frame carries at most maxGatherWords of it.
		to.state = AppendState(to.state[:0], s)
		words := len(to.state) / 4
		for off := 0; off < words; off += maxGatherWords {
			n := min(maxGatherWords, words-off)
			h := wire.Header{Kind: wire.Gather, Round: uint64(round), From: uint32(c.cfg.Rank), Offset: uint32(off), Total: uint32(words)}
			to.buf = append(wire.AppendHeader(to.buf[:0], h), to.state[4*off:4*(off+n)]...)
			if err := cs.SendMsg(&to.buf); err != nil {
				return fail(sendStatus(cs, err))
			}
			c.bytesSent.Add(int64(len(to.buf)))
		}
	}
	// One acknowledgement per state, bounded: a silent rank 0 cancels the
	// stream.
	timer := time.AfterFunc(c.timeout, to.cancel)
	defer timer.Stop()
	for range states {
		var m inMsg
		if err := cs.RecvMsg(&m); err != nil {
			return fail(err)
		}
		f, err := m.frame()
		m.free()
		if err == nil && (f.Kind != wire.Hello || f.K != gatherAckK || int(f.Round) != round) {
			err = fmt.Errorf("rank 0 answered a state of round %d with a %s frame (K %d, round %d)", round, f.Kind, f.K, f.Round)
		}
		if err != nil {
			return fail(err)
		}
	}
	return nil
}

// sendStatus returns err, of a SendMsg on cs, or where it is io.EOF (rank 0
// ended the stream, refusing it) the status rank 0 ended it with, which
// gRPC gives to the next RecvMsg.
func sendStatus(cs grpc.ClientStream, err error) error {
	if !errors.Is(err, io.EOF) {
		return err
	}
	var m inMsg
	rerr := cs.RecvMsg(&m)
	m.free()
	if rerr == nil || errors.Is(rerr, io.EOF) {
		return err
	}
	return rerr
}

// gatherAckK marks, in a HELLO frame's K, rank 0's acknowledgement that it
// filed (or already held) a state of the frame's round.
const gatherAckK = 3

// askRank0 sends rank 0 the question text, in a HELLO frame whose K says
// what it is (agreeK, inputsK), on the gather stream, and returns rank 0's
// answer. It waits at most twice the peer timeout, saying meanwhile that it
// waits for what: rank 0 itself waits up to the peer timeout for the other
// ranks' questions before it answers.
func (c *Control) askRank0(ctx context.Context, k uint8, what, text string) (string, error) {
	return c.askRank0As(ctx, wire.Header{Kind: wire.Hello, K: k}, what, text)
}

// askRank0As is askRank0 with the question's HELLO header h (its kind and
// K, and what else the question carries there); From is this rank.
func (c *Control) askRank0As(ctx context.Context, h wire.Header, what, text string) (string, error) {
	k := h.K
	to := &c.gatherTo
	to.mu.Lock()
	defer to.mu.Unlock()
	cs, err := c.gatherStreamLocked(ctx, true)
	if err != nil {
		return "", err
	}
	h.From = uint32(c.cfg.Rank)
	msg := wire.AppendText(nil, h, text)
	var m inMsg
	err = c.bounded(ctx, 2*c.timeout, 0, what, true, to.cancel, func() error {
		err := cs.SendMsg(&msg)
		if err == nil {
			err = cs.RecvMsg(&m)
		}
		return err
	})
	if err != nil {
		c.dropGatherLocked()
		return "", fmt.Errorf("transport: rank %d: %s: rank 0 at %s: %w", c.cfg.Rank, what, c.cfg.Addrs[0], err)
	}
	f, err := m.frame()
	answer := string(f.Payload) // a copy: m's buffer is freed next
	m.free()
	if err != nil || f.Kind != wire.Hello || f.K != k {
		return "", fmt.Errorf("transport: rank %d: rank 0 answered %s with %v %v", c.cfg.Rank, what, f.Kind, err)
	}
	return answer, nil
}

// gatherStreamLocked returns this rank's gather stream to rank 0, opening
// it on first use (cut short by Abort if abortable); it holds
// c.gatherTo.mu.
func (c *Control) gatherStreamLocked(ctx context.Context, abortable bool) (grpc.ClientStream, error) {
	to := &c.gatherTo
	if to.cs == nil {
		cs, cancel, err := c.openGather(ctx, abortable)
		if err != nil {
			return nil, fmt.Errorf("transport: rank %d: gather stream to rank 0 at %s: %w", c.cfg.Rank, c.cfg.Addrs[0], err)
		}
		to.cs, to.cancel = cs, cancel
	}
	return to.cs, nil
}

// dropGatherLocked cancels this rank's gather stream to rank 0, whose
// state is unknown after a wait on it was cut short; the next use opens
// another. It holds c.gatherTo.mu.
func (c *Control) dropGatherLocked() {
	to := &c.gatherTo
	if to.cancel != nil {
		to.cancel()
	}
	to.cs, to.cancel = nil, nil
}

// openGather opens this rank's gather stream to rank 0 and trades HELLOs,
// waiting for rank 0 at most the peer timeout (and until ctx is done or,
// if abortable, Abort) and saying meanwhile what it waits for. It returns
// the stream and the function that cancels it.
func (c *Control) openGather(ctx context.Context, abortable bool) (grpc.ClientStream, context.CancelFunc, error) {
	sctx, cancel := context.WithCancel(c.ctx)
	var cs grpc.ClientStream
	err := c.bounded(ctx, c.timeout, 0, "the gather stream", abortable, cancel, func() error {
		var err error
		cs, err = c.conns[0].NewStream(sctx, &serviceDesc.Streams[1], gatherMethod, grpc.WaitForReady(true))
		if err != nil {
			return err
		}
		hello := wire.AppendText(nil, wire.Header{Kind: wire.Hello, From: uint32(c.cfg.Rank)}, c.cfg.ConfigHash)
		var m inMsg
		if err = cs.SendMsg(&hello); err == nil {
			err = cs.RecvMsg(&m)
		}
		if err != nil {
			return err
		}
		f, err := m.frame()
		m.free()
		if err == nil && (f.Kind != wire.Hello || string(f.Payload) != c.cfg.ConfigHash) {
			err = fmt.Errorf("rank 0 answered with a %s frame (config hash %q, this rank's %q)", f.Kind, f.Payload, c.cfg.ConfigHash)
		}
		return err
	})
	if err != nil {
		cancel()
		return nil, nil, err
	}
	return cs, cancel, nil
}
