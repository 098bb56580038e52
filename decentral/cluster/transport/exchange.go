// Package transport carries a decentralized run's vectors between the
// processes ("ranks") it is spread over: Exchange implements
// decentral.RoundExchange over gRPC for one rank.
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
// A rank that stops — interrupted, failed or done — calls Leave before
// Close: it says BYE on each stream, naming the rounds it completed, and
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

	"github.com/gtstorm/gtstorm/decentral/graph"

	"google.golang.org/grpc"

	"github.com/gtstorm/gtstorm/decentral"
)

var _ decentral.PipelinedExchange = (*Exchange)(nil)

// Exchange is one rank's decentral.RoundExchange over gRPC. Build it with
// New or NewWithListener, Start it, and Close it when the run ends.
type Exchange struct {
	cfg     Config
	owner   []int // owner[node] = its rank
	local   []int // the nodes of this rank, increasing
	chunk   int   // floats per DATA frame
	timeout time.Duration
	logf    func(string, ...any)

	ctx    context.Context // canceled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine the Exchange starts
	ln     net.Listener
	srv    *grpc.Server
	conns  []*grpc.ClientConn // by rank; nil for this rank

	mu         sync.Mutex
	cond       *sync.Cond // signalled when the round advances, on failure, on Leave and on Close
	started    bool
	closed     bool
	leaving    bool   // Leave was called: no round begins, BYE frames go out
	why        string // the reason Leave gave
	err        error  // the first fatal error
	begun      bool   // BeginRound was called
	round      int64  // the round in progress
	done       int64  // rounds completed: the first round begun, then one more per Wait that returned nil
	shares     int    // vectors each in-neighbour sends this round
	veclen     int    // floats per vector, 0 until known
	pending    int    // vectors of the round still to arrive
	outPending int    // sends of the round not yet handed to gRPC
	waitStart  time.Time
	peers      []peerState                           // by rank
	anyStopped bool                                  // some peer said BYE
	sent       [2][][][]float32                      // by the parity of the round sent: each local node's vectors
	each       [2][]scattered                        // by parity: a local node's SendEach, each neighbour its own
	decode     func(dst []float32, msg []byte) error // SetDecoder's; nil when vectors travel
	progress   chan struct{}                         // capacity 1: wakes Wait

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

	logMu  sync.Mutex
	logged map[string]bool // refusals reported, by reason

	gather   gatherBox    // rank 0: the node states gathered, by round
	gatherTo gatherClient // other ranks: the stream to rank 0

	bytesSent, bytesRecv, waitNanos, waits atomic.Int64
	held                                   atomic.Int64 // frames that came two or more rounds early
	dropped                                atomic.Int64 // frames that came again after a reconnect, dropped
	overlaps                               atomic.Int64 // times a link had two readers or two writers: never
}

// peerState is what this rank knows of another.
type peerState struct {
	heard   time.Time // when it last sent or took a frame
	lastErr error     // its last connection or stream failure
	stopped int64     // the rounds it completed when it said BYE; -1 while it runs
	why     string    // the reason its BYE gave
}

// Stats are an Exchange's totals since it was built.
type Stats struct {
	// BytesSent and BytesRecv count the payload bytes of the round's
	// messages that crossed the network — 4 a float of a vector, or an
	// encoded message's length. A node's Send or SendEncoded to several
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

func newExchange(cfg Config, ln net.Listener) (*Exchange, error) {
	cfg.Addrs = append([]string(nil), cfg.Addrs...)
	owner, err := cfg.check()
	if err != nil {
		return nil, fmt.Errorf("transport: rank %d: %w", cfg.Rank, err)
	}
	x := &Exchange{
		cfg: cfg, owner: owner, chunk: cfg.chunkFloats(), timeout: cfg.peerTimeout(),
		logf: cfg.logf(), ln: ln, veclen: cfg.VectorLen,
		conns:    make([]*grpc.ClientConn, len(cfg.Addrs)),
		peers:    make([]peerState, len(cfg.Addrs)),
		sent:     [2][][][]float32{make([][][]float32, cfg.Nodes), make([][][]float32, cfg.Nodes)},
		each:     [2][]scattered{make([]scattered, cfg.Nodes), make([]scattered, cfg.Nodes)},
		progress: make(chan struct{}, 1),
		links:    make([]*link, len(cfg.Addrs)),
		edges:    make(map[uint64]*edge),
		logged:   make(map[string]bool),
	}
	x.batchBytes = min(max(4*x.chunk, minBatchBytes), maxChunkBytes)
	x.cond = sync.NewCond(&x.mu)
	x.gather.cond = sync.NewCond(&x.gather.mu)
	x.gather.rounds = make(map[int][]decentral.NodeState)
	x.gather.agree.rounds = make(map[int][]int)
	x.ctx, x.cancel = context.WithCancel(context.Background())
	for r := range x.peers {
		x.peers[r].stopped = -1
	}
	x.localPos = make([]int, cfg.Nodes)
	for i, r := range owner {
		x.localPos[i] = -1
		if r == cfg.Rank {
			x.localPos[i] = len(x.local)
			x.local = append(x.local, i)
		}
	}
	if len(x.local)*cfg.Nodes <= maxRecvTab {
		x.recvTab = make([]atomic.Pointer[edge], len(x.local)*cfg.Nodes)
	}
	return x, nil
}

// Start listens, unless given a listener, serves the other ranks' streams
// and prepares a connection to each of them; connections are dialed when a
// round first needs them. ctx bounds the listen only: Close stops the rest.
func (x *Exchange) Start(ctx context.Context) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case x.closed:
		return fmt.Errorf("transport: rank %d: Start after Close", x.cfg.Rank)
	case x.started:
		return fmt.Errorf("transport: rank %d: started twice", x.cfg.Rank)
	}
	if x.ln == nil {
		var lc net.ListenConfig
		ln, err := lc.Listen(ctx, "tcp", x.cfg.Addrs[x.cfg.Rank])
		if err != nil {
			return fmt.Errorf("transport: rank %d: %w", x.cfg.Rank, err)
		}
		x.ln = ln
	}
	for r, addr := range x.cfg.Addrs {
		if r == x.cfg.Rank {
			continue
		}
		cc, err := grpc.NewClient("passthrough:///"+addr, x.dialOptions(r)...)
		if err != nil {
			x.closeConns()
			clear(x.conns)
			return fmt.Errorf("transport: rank %d: client for rank %d at %s: %w", x.cfg.Rank, r, addr, err)
		}
		x.conns[r] = cc
	}
	x.srv = grpc.NewServer(x.serverOptions()...)
	x.srv.RegisterService(&serviceDesc, x)
	x.started = true
	x.wg.Add(1)
	go func() {
		defer x.wg.Done()
		if err := x.srv.Serve(x.ln); err != nil && !x.isClosed() {
			x.fail(fmt.Errorf("transport: rank %d: serving on %s: %w", x.cfg.Rank, x.ln.Addr(), err))
		}
	}()
	return nil
}

// Addr returns the address the Exchange listens on, or "" before it listens.
func (x *Exchange) Addr() string {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ln == nil {
		return ""
	}
	return x.ln.Addr().String()
}

// Close stops serving, closes every stream and connection, wakes a blocked
// Wait and returns once every goroutine the Exchange started has ended.
// Vectors handed to gRPC but not yet on the wire may be lost: a rank that
// stops deliberately calls Leave first.
func (x *Exchange) Close() error {
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return nil
	}
	x.closed = true
	x.cond.Broadcast()
	x.notify()
	srv, ln := x.srv, x.ln
	x.mu.Unlock()
	x.cancel()
	if srv != nil {
		srv.Stop()
	} else if ln != nil {
		ln.Close()
	}
	x.closeConns()
	x.wg.Wait()
	return nil
}

func (x *Exchange) closeConns() {
	for _, cc := range x.conns {
		if cc != nil {
			cc.Close()
		}
	}
}

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

func (x *Exchange) isClosed() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.closed
}

// fail records the first fatal error and wakes everything waiting.
func (x *Exchange) fail(err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.failLocked(err)
}

func (x *Exchange) failLocked(err error) {
	if x.err == nil && !x.closed {
		x.err = err
	}
	x.cond.Broadcast()
	x.notify()
}

// notify wakes Wait; x.mu is held or the channel alone is touched.
func (x *Exchange) notify() {
	select {
	case x.progress <- struct{}{}:
	default:
	}
}

// peerError records rank r's last failure, for the error of a Wait that
// times out waiting for it.
func (x *Exchange) peerError(r int, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if r >= 0 && r < len(x.peers) {
		x.peers[r].lastErr = err
	}
}

// heardLocked notes that rank r sent or took a frame now.
func (x *Exchange) heardLocked(r int) {
	x.peers[r].heard = time.Now()
	x.notify()
}

// maxLogged bounds the distinct refusals Logf reports.
const maxLogged = 64

// refusal reports a refusal through Logf, once per reason: a peer retrying
// with the same fault is not reported again.
func (x *Exchange) refusal(reason, format string, args ...any) {
	x.logMu.Lock()
	seen := x.logged[reason] || len(x.logged) >= maxLogged
	if !seen {
		x.logged[reason] = true
	}
	x.logMu.Unlock()
	if !seen {
		x.logf(format, args...)
	}
}

// who names a remote node for errors: "node 3 (rank 1 at host:port)".
func (x *Exchange) who(node int) string {
	r := x.owner[node]
	return fmt.Sprintf("node %d (rank %d at %s)", node, r, x.cfg.Addrs[r])
}
