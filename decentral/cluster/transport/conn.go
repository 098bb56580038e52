package transport

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
)

// rankConn is what a rank's two planes share: its configuration, its
// listener, server and connections to the other ranks, what it knows of
// each peer (when it last heard from it, its last failure, whether it
// said BYE), its own lifecycle (started, leaving, closed, the first fatal
// error, Abort) and its byte counts. The Exchange, the data plane, and
// the Control, the control plane, each embed the same rankConn.
//
// mu guards the rankConn's fields and, where the Exchange's fields say
// so, the Exchange's round state too: one lock, so that a peer's BYE, a
// Leave or a failure change both at once. The Control's gather lock is
// taken before mu, never while holding it.
type rankConn struct {
	cfg     Config
	owner   []int // owner[node] = its rank
	local   []int // the nodes of this rank, increasing
	timeout time.Duration
	logf    func(string, ...any)

	ctx    context.Context // canceled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // every goroutine either plane starts
	ln     net.Listener
	srv    *grpc.Server
	conns  []*grpc.ClientConn // by rank; nil for this rank

	// data is the Exchange, as the rankConn and the Control see it.
	data dataPlane
	// control is the Control, as the rankConn sees it.
	control controlPlane

	mu         sync.Mutex
	cond       *sync.Cond // signalled when the round advances, on failure, on Leave and on Close
	started    bool
	closed     bool
	leaving    bool   // Leave was called: no round begins, BYE frames go out
	why        string // the reason Leave gave
	err        error  // the first fatal error
	done       int64  // rounds completed: the first round begun, then one more per Wait that returned nil
	peers      []peerState
	anyStopped bool          // some peer said BYE
	progress   chan struct{} // capacity 1: wakes Wait

	abort aborter // ends every wait once Abort is called

	logMu  sync.Mutex
	logged map[string]bool // refusals reported, by reason

	bytesSent, bytesRecv atomic.Int64
}

// dataPlane is what a Leave and a peer's BYE ask of the Exchange: its
// methods run holding rankConn.mu.
type dataPlane interface {
	// leaveLocked drops the vectors queued of rounds this rank did not
	// complete, wakes each link's writer to say BYE and returns the links
	// to wait on.
	leaveLocked() []leaveWait
	// peerLeftLocked drops the vectors queued for rank of the rounds
	// before stopped, which rank took already.
	peerLeftLocked(rank int, stopped int64)
	// ackedLocked returns the rounds rank's link acknowledged.
	ackedLocked(rank int) int64
}

// controlPlane is what a peer's BYE and a new stream ask of the Control:
// its methods take the gather lock and run without rankConn.mu.
type controlPlane interface {
	// wake wakes the waits on the gather box.
	wake()
	// gatheredRounds returns the latest round of rank's node states that
	// arrived on rank 0, or 0.
	gatheredRounds(rank int) int64
}

// leaveWait is a peer that Leave waits for, until quit is closed.
type leaveWait struct {
	rank int
	quit <-chan struct{}
}

// peerState is what this rank knows of another.
type peerState struct {
	heard   time.Time // when it last sent or took a frame
	lastErr error     // its last connection or stream failure
	stopped int64     // the rounds it completed when it said BYE; -1 while it runs
	why     string    // the reason its BYE gave
}

// newRankConn checks cfg and returns the rankConn of cfg.Rank, to serve
// on ln (nil: Start listens).
func newRankConn(cfg Config, ln net.Listener) (*rankConn, error) {
	cfg.Addrs = append([]string(nil), cfg.Addrs...)
	owner, err := cfg.check()
	if err != nil {
		return nil, fmt.Errorf("transport: rank %d: %w", cfg.Rank, err)
	}
	rc := &rankConn{
		cfg: cfg, owner: owner, timeout: cfg.peerTimeout(), logf: cfg.logf(), ln: ln,
		conns:    make([]*grpc.ClientConn, len(cfg.Addrs)),
		peers:    make([]peerState, len(cfg.Addrs)),
		progress: make(chan struct{}, 1),
		logged:   make(map[string]bool),
	}
	rc.cond = sync.NewCond(&rc.mu)
	rc.ctx, rc.cancel = context.WithCancel(context.Background())
	for r := range rc.peers {
		rc.peers[r].stopped = -1
	}
	for i, r := range owner {
		if r == cfg.Rank {
			rc.local = append(rc.local, i)
		}
	}
	return rc, nil
}

// start listens, unless given a listener, serves the other ranks' streams
// with svc and prepares a connection to each of them.
func (rc *rankConn) start(ctx context.Context, svc edgeService) error {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	switch {
	case rc.closed:
		return fmt.Errorf("transport: rank %d: Start after Close", rc.cfg.Rank)
	case rc.started:
		return fmt.Errorf("transport: rank %d: started twice", rc.cfg.Rank)
	}
	if rc.ln == nil {
		var lc net.ListenConfig
		ln, err := lc.Listen(ctx, "tcp", rc.cfg.Addrs[rc.cfg.Rank])
		if err != nil {
			return fmt.Errorf("transport: rank %d: %w", rc.cfg.Rank, err)
		}
		rc.ln = ln
	}
	for r, addr := range rc.cfg.Addrs {
		if r == rc.cfg.Rank {
			continue
		}
		cc, err := grpc.NewClient("passthrough:///"+addr, rc.dialOptions(r)...)
		if err != nil {
			rc.closeConns()
			clear(rc.conns)
			return fmt.Errorf("transport: rank %d: client for rank %d at %s: %w", rc.cfg.Rank, r, addr, err)
		}
		rc.conns[r] = cc
	}
	rc.srv = grpc.NewServer(rc.serverOptions()...)
	rc.srv.RegisterService(&serviceDesc, svc)
	rc.started = true
	rc.wg.Add(1)
	go func() {
		defer rc.wg.Done()
		if err := rc.srv.Serve(rc.ln); err != nil && !rc.isClosed() {
			rc.fail(fmt.Errorf("transport: rank %d: serving on %s: %w", rc.cfg.Rank, rc.ln.Addr(), err))
		}
	}()
	return nil
}

// addr returns the address the rank listens on, or "" before it listens.
func (rc *rankConn) addr() string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.ln == nil {
		return ""
	}
	return rc.ln.Addr().String()
}

// close stops serving, closes every stream and connection, wakes every
// wait and returns once every goroutine either plane started has ended.
func (rc *rankConn) close() error {
	rc.mu.Lock()
	if rc.closed {
		rc.mu.Unlock()
		return nil
	}
	rc.closed = true
	rc.cond.Broadcast()
	rc.notify()
	srv, ln := rc.srv, rc.ln
	rc.mu.Unlock()
	rc.cancel()
	if srv != nil {
		srv.Stop()
	} else if ln != nil {
		ln.Close()
	}
	rc.closeConns()
	rc.wg.Wait()
	return nil
}

func (rc *rankConn) closeConns() {
	for _, cc := range rc.conns {
		if cc != nil {
			cc.Close()
		}
	}
}

func (rc *rankConn) isClosed() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.closed
}

// fail records the first fatal error and wakes everything waiting.
func (rc *rankConn) fail(err error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.failLocked(err)
}

func (rc *rankConn) failLocked(err error) {
	if rc.err == nil && !rc.closed {
		rc.err = err
	}
	rc.cond.Broadcast()
	rc.notify()
}

// notify wakes Wait; rc.mu is held or the channel alone is touched.
func (rc *rankConn) notify() {
	select {
	case rc.progress <- struct{}{}:
	default:
	}
}

// peerError records rank r's last failure, for the error of a Wait that
// times out waiting for it.
func (rc *rankConn) peerError(r int, err error) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if r >= 0 && r < len(rc.peers) {
		rc.peers[r].lastErr = err
	}
}

// heardLocked notes that rank r sent or took a frame now.
func (rc *rankConn) heardLocked(r int) {
	rc.peers[r].heard = time.Now()
	rc.notify()
}

// maxLogged bounds the distinct refusals Logf reports.
const maxLogged = 64

// refusal reports a refusal through Logf, once per reason: a peer retrying
// with the same fault is not reported again.
func (rc *rankConn) refusal(reason, format string, args ...any) {
	rc.logMu.Lock()
	seen := rc.logged[reason] || len(rc.logged) >= maxLogged
	if !seen {
		rc.logged[reason] = true
	}
	rc.logMu.Unlock()
	if !seen {
		rc.logf(format, args...)
	}
}

// who names a remote node for errors: "node 3 (rank 1 at host:port)".
func (rc *rankConn) who(node int) string {
	r := rc.owner[node]
	return fmt.Sprintf("node %d (rank %d at %s)", node, r, rc.cfg.Addrs[r])
}

// service is what the gRPC server serves: the links of the data plane and
// the gather streams of the control plane.
type service struct {
	x *Exchange
	c *Control
}

func (s service) serveEdge(ss grpc.ServerStream) error   { return s.x.serveEdge(ss) }
func (s service) serveLink(ss grpc.ServerStream) error   { return s.x.serveLink(ss) }
func (s service) serveGather(ss grpc.ServerStream) error { return s.c.serveGather(ss) }
