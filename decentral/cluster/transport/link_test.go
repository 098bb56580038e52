package transport

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/decentral/cluster/wire"
)

// killListener is a listener whose accepted connections kill closes,
// as a reset of the network would.
type killListener struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (l *killListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

// kill closes every connection accepted so far and returns how many.
func (l *killListener) kill() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		c.Close()
	}
	n := len(l.conns)
	l.conns = nil
	return n
}

// testDeadline returns a context ending before the test's deadline, and at
// most after d.
func testDeadline(t *testing.T, d time.Duration) (context.Context, context.CancelFunc) {
	end := time.Now().Add(d)
	if dl, ok := t.Deadline(); ok && dl.Add(-2*time.Second).Before(end) {
		end = dl.Add(-2 * time.Second)
	}
	return context.WithDeadline(context.Background(), end)
}

// checkExactlyOnce fails unless every payload byte sent over the network
// was received once: duplicates dropped, nothing lost.
func checkExactlyOnce(t *testing.T, cl *testRanks) {
	t.Helper()
	var sent, recv, dropped int64
	for _, x := range cl.xs {
		s := x.Stats()
		sent, recv, dropped = sent+s.BytesSent, recv+s.BytesRecv, dropped+x.dropped.Load()
	}
	if sent == 0 || sent != recv {
		t.Errorf("%d payload bytes sent and %d received, want the same, > 0", sent, recv)
	}
	t.Logf("%d bytes each way in all; %d frames that came again dropped", sent, dropped)
}

// TestReconnectExactlyOnce: the connections between three ranks are reset
// at random points of a run; every round's vectors still arrive, exactly
// once and bit for bit (runRank checks every Recv), and no rank waits out
// its peer timeout.
func TestReconnectExactlyOnce(t *testing.T) {
	for _, chunk := range []int{0, 4 << 10} {
		t.Run(map[int]string{0: "one chunk", 4 << 10: "many chunks"}[chunk], func(t *testing.T) {
			const m, p, rounds = 9, 3000, 40
			topo := static(graph.MetropolisHastings(must(graph.ErdosRenyi(m, 0.5, 3))))
			base := listeners(t, 3)
			lns := make([]net.Listener, len(base))
			kls := make([]*killListener, len(base))
			for r, ln := range base {
				kls[r] = &killListener{Listener: ln}
				lns[r] = kls[r]
			}
			cl := newClusterOn(t, lns, m, func(i int) int { return i % 3 }, func(r int, c *Config) {
				c.PeerTimeout, c.ChunkBytes = 8*time.Second, chunk
			})
			ctx, cancel := testDeadline(t, 25*time.Second)
			defer cancel()
			done := make(chan struct{})
			var kills atomic.Int64
			go func() {
				rng := rand.New(rand.NewPCG(1, uint64(chunk)))
				for {
					select {
					case <-done:
						return
					case <-time.After(time.Duration(20+rng.IntN(120)) * time.Millisecond):
					}
					kills.Add(int64(kls[1+rng.IntN(2)].kill()))
				}
			}()
			start := time.Now()
			errs := cl.runAll(ctx, topo, 2, p, 0, rounds, func(r, t int) { time.Sleep(5 * time.Millisecond) })
			close(done)
			checkErrs(t, errs)
			if kills.Load() == 0 {
				t.Fatal("no connection was reset: the test does not exercise reconnects")
			}
			checkExactlyOnce(t, cl)
			t.Logf("%d rounds in %v with %d connections reset", rounds, time.Since(start).Round(time.Millisecond), kills.Load())
		})
	}
}

// TestDuplicateLink: while two ranks run, a third party holding a valid
// identity opens a second stream for their link again and again, claiming
// the rounds rank 0 completed, as rank 0's own reconnect does (one claiming
// fewer is refused: TestImpostorLinkRefused). Each replaces the stream in
// use; the ranks never run two writers or readers on the link at once,
// reconnect, and every round's vectors arrive, once and bit for bit.
func TestDuplicateLink(t *testing.T) {
	const m, p, rounds = 6, 2000, 30
	topo := static(graph.MetropolisHastings(must(graph.Ring(m))))
	cl := newCluster(t, 2, m, func(i int) int { return i % 2 }, func(r int, c *Config) { c.PeerTimeout = 8 * time.Second })
	ctx, cancel := testDeadline(t, 25*time.Second)
	defer cancel()
	done := make(chan struct{})
	var dups atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for n := 0; ; n++ {
			select {
			case <-done:
				return
			case <-time.After(time.Duration(10+n%5*10) * time.Millisecond):
			}
			sctx, scancel := context.WithTimeout(ctx, 2*time.Second)
			x0 := cl.xs[0]
			x0.mu.Lock()
			hello := wire.AppendText(nil, wire.Header{Kind: wire.Hello, K: linkVersion, Round: uint64(x0.done), To: 1}, "sha256:test")
			x0.mu.Unlock()
			if cs, err := rawLink(t, sctx, cl.xs[1].cfg.Addrs[1], hello); err == nil {
				dups.Add(1)
				if n%2 == 0 {
					var b []byte
					cs.RecvMsg(&b) // take a message, or hold the stream until replaced
				}
			}
			scancel()
		}
	})
	errs := cl.runAll(ctx, topo, 2, p, 0, rounds, func(r, t int) { time.Sleep(3 * time.Millisecond) })
	close(done)
	wg.Wait()
	checkErrs(t, errs)
	if dups.Load() == 0 {
		t.Fatal("no second stream was opened")
	}
	for r, x := range cl.xs {
		if n := x.overlaps.Load(); n > 0 {
			t.Errorf("rank %d ran two readers or two writers on a link at once %d times", r, n)
		}
	}
	checkExactlyOnce(t, cl)
	t.Logf("%d second streams opened", dups.Load())
}

// TestOversizedMessage: a message over the 4 MiB limit fails the rank that
// receives it with an error, also logged, that names its size and the
// limit, rather than a reset and a silent peer.
func TestOversizedMessage(t *testing.T) {
	const p = 8
	topo := static(graph.MetropolisHastings(must(graph.Path(2))))
	cl := newCluster(t, 2, 2, func(i int) int { return i }, func(r int, c *Config) { c.VectorLen, c.PeerTimeout = p, 20*time.Second })
	x := cl.xs[1]
	ctx, cancel := testDeadline(t, 15*time.Second)
	defer cancel()
	cs := rawPeer(t, ctx, x.cfg.Addrs[1])
	if err := x.BeginRound(5, topo.Mixing(5), 1); err != nil {
		t.Fatal(err)
	}
	const floats = 6 << 20 / 4
	frame := wire.AppendFloats(nil, wire.Header{Kind: wire.Data, Round: 5, From: 0, To: 1, Total: floats}, make([]float32, floats))
	b := binary.LittleEndian.AppendUint32(newBatch(len(frame)+4), uint32(len(frame)))
	if err := cs.SendMsg(&batchMsg{append(b, frame...)}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := x.Wait(ctx)
	if err == nil {
		t.Fatal("Wait succeeded")
	}
	wantIn(t, "the error", err.Error(), "rank 0 at "+x.cfg.Addrs[0], "exceeds the limit of 4194304 bytes", "6291")
	wantIn(t, "rank 1's log", cl.logs[1].String(), "exceeds the limit of 4194304 bytes")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Wait failed after %v, want at once", d)
	}
	if strings.Contains(err.Error(), "silent") {
		t.Errorf("the error blames a silent peer: %v", err)
	}
	t.Log(err)
}
