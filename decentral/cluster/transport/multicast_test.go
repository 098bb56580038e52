package transport

import (
	"context"
	"math/rand/v2"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/gtstorm/gtstorm/decentral/cluster/wire"
)

// multiOwner runs node 1 of Path(4) (0–1–2–3) on rank 0, played by hand,
// and nodes 0, 2 and 3 on rank 1: node 1 sends to nodes 0 and 2, not 3.
func multiOwner(i int) int {
	if i == 1 {
		return 0
	}
	return 1
}

// multiFrame returns a MULTI frame of node 1's vector k of round 5, floats
// [off, off+n) of p, to dests.
func multiFrame(dests []int, k uint8, off, n, p int) []byte {
	v := vec(1, 5, int(k), p)
	h := wire.Header{Kind: wire.Multi, K: k, Round: 5, From: 1, Offset: uint32(off), Total: uint32(p)}
	return wire.AppendMulti(nil, h, dests, v[off:off+n], nil)
}

// multiPeer starts rank 1 of multiOwner on Path(4), begins its round 5 with
// two vectors a node and sends them, and returns it with the hand-played
// rank 0's stream.
func multiPeer(t *testing.T, ctx context.Context, p int) (*testRanks, *Exchange, func([]byte)) {
	t.Helper()
	w := static(graph.MetropolisHastings(must(graph.Path(4)))).Mixing(5)
	cl := newCluster(t, 2, 4, multiOwner, func(r int, c *Config) { c.VectorLen, c.PeerTimeout = p, 5*time.Second })
	x := cl.xs[1]
	cs := rawPeer(t, ctx, x.cfg.Addrs[1])
	if err := x.BeginRound(5, w, 2); err != nil {
		t.Fatal(err)
	}
	for _, i := range x.Local() {
		if _, err := x.Send(i, w.To(i), [][]float32{vec(i, 5, 0, p), vec(i, 5, 1, p)}); err != nil {
			t.Fatal(err)
		}
	}
	return cl, x, func(f []byte) {
		t.Helper()
		if err := sendRaw(cs, f); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMulticastFrame: a MULTI frame to nodes 0 and 2, in two chunks and
// one of them sent twice, delivers to each what per-edge DATA frames do,
// bit for bit; the repeat is dropped per destination, and the payload
// counts once.
func TestMulticastFrame(t *testing.T) {
	const p = 8
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, x, send := multiPeer(t, ctx, p)
	send(multiFrame([]int{2, 0}, 0, 0, 4, p))
	send(multiFrame([]int{2, 0}, 0, 0, 4, p)) // again, as after a reconnect
	send(multiFrame([]int{0, 2}, 0, 4, 4, p))
	for _, to := range []int{0, 2} {
		send(wire.AppendFloats(nil, wire.Header{Kind: wire.Data, K: 1, Round: 5, From: 1, To: uint32(to), Total: p}, vec(1, 5, 1, p)))
	}
	if err := x.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 2} {
		if err := sameVecs(x.Recv(i, 1), 1, 5, 2, p); err != nil {
			t.Errorf("Recv(%d, 1): %v", i, err)
		}
	}
	if d := x.dropped.Load(); d != 2 {
		t.Errorf("%d repeated frames dropped, want 2 (one per destination)", d)
	}
	if got, want := x.Stats().BytesRecv, int64(4*p+2*4*p); got != want {
		t.Errorf("%d payload bytes received, want %d: the multicast vector once, the DATA vector per edge", got, want)
	}
}

// TestMulticastRefused: a MULTI frame whose destination list names a node
// of another rank, a node out of range, a non-neighbour of the sender, a
// node twice, more nodes than the rank runs, or none fails the round,
// naming the sender and the fault, and the sender is told.
func TestMulticastRefused(t *testing.T) {
	const p = 8
	for _, tt := range []struct {
		name  string
		frame []byte
		want  string
	}{
		{"other rank's node", multiFrame([]int{0, 1}, 0, 0, p, p), "node 1 as a destination, which rank 1 does not run"},
		{"out of range", multiFrame([]int{0, 99}, 0, 0, p, p), "node 99 as a destination, which rank 1 does not run"},
		{"not a neighbour", multiFrame([]int{0, 3}, 0, 0, p, p), "vector 0 of round 5 to node 3, which that round does not expect"},
		{"duplicate", multiFrame([]int{2, 0, 2}, 0, 0, p, p), "node 2 twice as a destination"},
		{"too many", multiFrame([]int{0, 2, 3, 0}, 0, 0, p, p), "4 destinations, but rank 1 runs 3 nodes"},
		{"no destination", multiFrame(nil, 0, 0, p, p), "with 0 destinations"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			w := static(graph.MetropolisHastings(must(graph.Path(4)))).Mixing(5)
			cl := newCluster(t, 2, 4, multiOwner, func(r int, c *Config) { c.VectorLen, c.PeerTimeout = p, 5*time.Second })
			x := cl.xs[1]
			cs := rawPeer(t, ctx, x.cfg.Addrs[1])
			if err := x.BeginRound(5, w, 1); err != nil {
				t.Fatal(err)
			}
			if err := sendRaw(cs, tt.frame); err != nil {
				t.Fatal(err)
			}
			err := x.Wait(ctx)
			if err == nil {
				t.Fatal("Wait succeeded")
			}
			wantIn(t, "the error", err.Error(), "rank 0 at "+x.cfg.Addrs[0], tt.want)
			t.Log(err)
			var got []byte
			for err = nil; err == nil; err = cs.RecvMsg(&got) {
			}
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("the peer was told %v, want InvalidArgument with %q", err, tt.want)
			}
		})
	}
}

// TestMulticastExactlyOnce: on a complete graph every node's vectors go to
// the other ranks as multicast frames, once per rank, and the connections
// are reset at random points: every round's vectors still arrive, exactly
// once and bit for bit, and each rank's payload bytes are its nodes'
// vectors once per other rank.
func TestMulticastExactlyOnce(t *testing.T) {
	const m, ranks, shares, p, rounds = 9, 3, 2, 2000, 30
	topo := static(graph.MetropolisHastings(must(graph.Complete(m))))
	base := listeners(t, ranks)
	lns := make([]net.Listener, ranks)
	kls := make([]*killListener, ranks)
	for r, ln := range base {
		kls[r] = &killListener{Listener: ln}
		lns[r] = kls[r]
	}
	cl := newClusterOn(t, lns, m, func(i int) int { return i % ranks }, func(r int, c *Config) {
		c.PeerTimeout, c.ChunkBytes = 8*time.Second, 1<<12
	})
	ctx, cancel := testDeadline(t, 25*time.Second)
	defer cancel()
	done := make(chan struct{})
	var kills atomic.Int64
	go func() {
		rng := rand.New(rand.NewPCG(2, 9))
		for {
			select {
			case <-done:
				return
			case <-time.After(time.Duration(20+rng.IntN(100)) * time.Millisecond):
			}
			kills.Add(int64(kls[1+rng.IntN(ranks-1)].kill()))
		}
	}()
	errs := cl.runAll(ctx, topo, shares, p, 0, rounds, func(r, t int) { time.Sleep(5 * time.Millisecond) })
	close(done)
	checkErrs(t, errs)
	if kills.Load() == 0 {
		t.Fatal("no connection was reset: the test does not exercise reconnects")
	}
	checkExactlyOnce(t, cl)
	for _, x := range cl.xs {
		want := int64(rounds * len(x.Local()) * shares * p * 4 * (ranks - 1))
		if got := x.Stats().BytesSent; got != want {
			t.Errorf("rank %d sent %d payload bytes, want %d: each node's vectors once per other rank", x.cfg.Rank, got, want)
		}
	}
	t.Logf("%d rounds with %d connections reset", rounds, kills.Load())
}
