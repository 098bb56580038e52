// Package transport carries a decentralized run's vectors between the
// processes ("ranks") it is spread over. A rank talks on two planes over
// the same connections: the data plane, Exchange, implements
// decentral.RoundExchange over gRPC and carries a round's vectors (begin,
// send, wait, receive); the control plane, Control (Exchange.Control),
// gathers the nodes' states on rank 0, agrees on a resume round and on
// the inputs, and leaves or aborts the run.
//
// Every pair of ranks whose nodes share a graph edge gets one
// bidirectional gRPC stream, its link, opened by the lower rank when a
// round first needs it and kept open; the frames of all the edges between
// the two ranks go both ways on it, as decentral/cluster/wire frames through a codec
// of raw bytes (no protobuf), a round's frames for a rank batched into few
// messages (see batch.go); a node's vectors for several nodes of the peer
// rank travel once, naming them (see multicast.go). A link opens with a
// HELLO each way that carries the link protocol's version and the run's
// config hash: a peer of another version or hash is refused. With TLS, both sides present certificates of
// the run's CA that name their rank ("gtstorm-rank-R", URI
// "gtstorm://rank/R"), and a peer must be the rank it says it is.
//
// A link that breaks is opened again, and what was sent on it and not yet
// acknowledged is sent again and dropped by the receiver if it arrived: a
// round's vectors are delivered exactly once across reconnects (see link).
// A second stream for a link replaces the first.
//
// Each round the optimizer calls BeginRound, Send for each local node, Wait
// and then Recv. Pipelined (decentral.PipelinedExchange), it calls
// BeginNextRound after a round's Wait instead of BeginRound before the next
// round's Sends, and each node's Send of the next round comes as soon as the
// node's update is done, while the other nodes still call Recv for the
// round: Recv reads the round until the next Wait returns, and a rank's own
// nodes' vectors are kept by round parity as the received ones are.
//
// A compressing method's messages (CHOCO-SGD's) travel encoded instead: SendEncoded sends the compressor's bytes as ENCODED
// frames, and the receiving rank decodes them with the decoder the
// optimizer gave SetDecoder, so that the bytes on the wire are those the
// optimizer counts. Vectors travel labelled with their round; a peer running
// ahead may send the next round's vectors early and they are kept, by round
// parity, apart from the current round's. Two or more rounds ahead — legal
// when a time-varying directed W lets a rank run ahead of ranks it does not
// hear from — the stream is simply not read until this rank catches up, so
// gRPC's flow control holds the sender back.
//
// A rank that stops — interrupted, failed or done — calls Control.Leave
// before Close: it says BYE on each stream, naming the rounds it completed, and
// waits for its peers to take it. A peer whose round (or gathering) then
// waits for something of a later round from it stops at once with a
// *PeerStoppedError, instead of after the peer timeout, which remains for
// a peer that goes silent.
package transport

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/decentral/graph"
)

var _ decentral.PipelinedExchange = (*Exchange)(nil)

// Exchange is one rank's decentral.RoundExchange over gRPC: the data plane,
// which carries the round's vectors. Build it with New or NewWithListener,
// Start it, and Close it when the run ends; Start and Close start and
// close the connections its Control shares.
type Exchange struct {
	*rankConn
	ctl   *Control // the control plane over the same connections
	chunk int      // floats per DATA frame

	// The round's state, guarded by rankConn.mu.
	begun      bool                                  // BeginRound was called
	round      int64                                 // the round in progress
	shares     int                                   // vectors each in-neighbour sends this round
	veclen     int                                   // floats per vector, 0 until known
	pending    int                                   // vectors of the round still to arrive
	outPending int                                   // sends of the round not yet handed to gRPC
	waitStart  time.Time                             // when the round's Wait began
	sent       [2][][][]float32                      // by the parity of the round sent: each local node's vectors
	each       [2][]scattered                        // by parity: a local node's SendEach, each neighbour its own
	decode     func(dst []float32, msg []byte) error // SetDecoder's; nil when vectors travel

	first      int64   // the first round begun
	batchBytes int     // the size a batch of frames grows to before it is sent
	links      []*link // by rank; nil for this rank and until needed
	byRank     [][]int // queueSameLocked's room: a Send's destinations by rank

	cur   atomic.Int64 // the round Recv reads: the round in progress, or the one before after BeginNextRound
	emu   sync.RWMutex // guards edges; taken inside mu
	edges map[uint64]*edge

	localPos []int                  // by node: its index in local, or -1
	recvTab  []atomic.Pointer[edge] // Recv's edges by local index × Nodes + remote node, where not too many; else nil
	inW      *graph.Mixing          // the mixing matrix of in's edges
	in       []*edge                // the edges from which inW's rounds expect vectors

	waitNanos, waits atomic.Int64
	held             atomic.Int64 // frames that came two or more rounds early
	dropped          atomic.Int64 // frames that came again after a reconnect, dropped
	overlaps         atomic.Int64 // times a link had two readers or two writers: never
}

// Stats are an Exchange's totals since it was built.
type Stats struct {
	// BytesSent and BytesRecv count the payload bytes of the round's
	// messages that crossed the network — 4 a float of a vector, or an
	// encoded message's length — and those of the node states gathered.
	// A node's Send or SendEncoded to several
	// nodes of one rank crosses once (multicast.go), and counts once here,
	// though Send's and SendEncoded's results count it per destination, as
	// a network of point-to-point links would carry it. Messages delivered
	// in memory to nodes of this rank are not counted here.
	BytesSent, BytesRecv int64
	// Wait is the wall time spent blocked in Wait, and Waits the number of
	// Waits that returned: Wait/Waits is the time waiting on the network
	// per round.
	Wait  time.Duration
	Waits int64
}

// New returns the Exchange of cfg.Rank; Start listens on cfg.Addrs[cfg.Rank].
func New(cfg Config) (*Exchange, error) {
	return newExchange(cfg, nil)
}

// NewWithListener is New with the rank's listener already open, as when
// Addrs is only known after every rank listened on port 0. cfg.Addrs[Rank]
// is what the other ranks dial; ln is what this one serves on.
func NewWithListener(cfg Config, ln net.Listener) (*Exchange, error) {
	if ln == nil {
		return nil, fmt.Errorf("transport: rank %d: nil listener", cfg.Rank)
	}
	if cfg.Insecure && !Loopback(ln.Addr().String()) {
		return nil, fmt.Errorf("transport: rank %d: insecure transport refused on the non-loopback listener %s", cfg.Rank, ln.Addr())
	}
	return newExchange(cfg, ln)
}

// newExchange builds the rank's connections and both planes over them.
func newExchange(cfg Config, ln net.Listener) (*Exchange, error) {
	rc, err := newRankConn(cfg, ln)
	if err != nil {
		return nil, err
	}
	x := &Exchange{
		rankConn: rc, chunk: rc.cfg.chunkFloats(), veclen: cfg.VectorLen,
		sent:  [2][][][]float32{make([][][]float32, cfg.Nodes), make([][][]float32, cfg.Nodes)},
		each:  [2][]scattered{make([]scattered, cfg.Nodes), make([]scattered, cfg.Nodes)},
		links: make([]*link, len(cfg.Addrs)),
		edges: make(map[uint64]*edge),
	}
	x.batchBytes = min(max(4*x.chunk, minBatchBytes), maxChunkBytes)
	x.localPos = make([]int, cfg.Nodes)
	for i := range x.localPos {
		x.localPos[i] = -1
	}
	for k, i := range x.local {
		x.localPos[i] = k
	}
	if len(x.local)*cfg.Nodes <= maxRecvTab {
		x.recvTab = make([]atomic.Pointer[edge], len(x.local)*cfg.Nodes)
	}
	x.ctl = newControl(rc)
	rc.data, rc.control = x, x.ctl
	return x, nil
}

// Control returns the rank's control plane, over the same connections:
// gathering, the agreements on a resume round and on the inputs, Leave
// and Abort.
func (x *Exchange) Control() *Control { return x.ctl }

// Start listens, unless given a listener, serves the other ranks' streams
// (the links and, on rank 0, the gather streams) and prepares a connection
// to each of them; connections are dialed when a round, or the Control,
// first needs them. ctx bounds the listen only: Close stops the rest.
func (x *Exchange) Start(ctx context.Context) error {
	return x.start(ctx, service{x, x.ctl})
}

// Addr returns the address the Exchange listens on, or "" before it listens.
func (x *Exchange) Addr() string { return x.addr() }

// Close stops serving, closes every stream and connection, wakes a blocked
// Wait (and any wait of the Control) and returns once every goroutine the
// Exchange and its Control started has ended. Vectors handed to gRPC but
// not yet on the wire may be lost: a rank that stops deliberately calls
// Control.Leave first.
func (x *Exchange) Close() error { return x.close() }

// Stats returns the Exchange's totals so far.
func (x *Exchange) Stats() Stats {
	return Stats{
		BytesSent: x.bytesSent.Load(), BytesRecv: x.bytesRecv.Load(),
		Wait: time.Duration(x.waitNanos.Load()), Waits: x.waits.Load(),
	}
}

// Local returns the nodes this rank runs, in increasing order: the
// decentral.Config.Local of its optimizer. The slice belongs to the Exchange.
func (x *Exchange) Local() []int { return x.local }

// WaitTime returns the wall time spent blocked in Wait so far.
func (x *Exchange) WaitTime() time.Duration { return time.Duration(x.waitNanos.Load()) }
