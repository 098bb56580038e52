package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/decentral"
)

// testCtx returns a context that ends before the test's deadline, and at
// most after limit.
func testCtx(t *testing.T, limit time.Duration) context.Context {
	t.Helper()
	if d, ok := t.Deadline(); ok && time.Until(d)-time.Second < limit {
		limit = time.Until(d) - time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	t.Cleanup(cancel)
	return ctx
}

// TestGatherWaitBounded: a rank whose rank 0 never started, never answers,
// refuses its TLS or runs in plaintext against its TLS stops gathering
// within the peer timeout with an error naming rank 0 and its address, and
// says meanwhile, on its log, what it waits for.
func TestGatherWaitBounded(t *testing.T) {
	const timeout = 2 * time.Second
	ca, stranger := newCA(t, "run CA"), newCA(t, "stranger CA")
	sc, sk := stranger.issue(t, 1)
	strangerTLS, err := NewTLS(ca.pem, sc, sk)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		rank0 func(t *testing.T, ln net.Listener) // serves rank 0's listener
		tls1  *tls1                               // rank 1's security
	}{
		{"never started", func(t *testing.T, ln net.Listener) { ln.Close() }, nil},
		{"never answers", func(t *testing.T, ln net.Listener) {
			// Accepts connections and holds them, silent.
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					t.Cleanup(func() { c.Close() })
				}
			}()
			t.Cleanup(func() { ln.Close() })
		}, nil},
		{"refuses its TLS", serveRank0(t, func(c *Config) { c.Insecure, c.TLS = false, ca.tls(t, 0) }), &tls1{strangerTLS}},
		{"plaintext against TLS", serveRank0(t, func(c *Config) { c.Insecure, c.TLS = false, ca.tls(t, 0) }), nil},
		{"TLS against plaintext", serveRank0(t, nil), &tls1{ca.tls(t, 1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case waits out its own peer timeout
			lns := listeners(t, 2)
			addr0 := lns[0].Addr().String()
			tc.rank0(t, lns[0])
			lb := &logBuf{}
			cfg := Config{Rank: 1, Addrs: []string{addr0, lns[1].Addr().String()}, Owner: func(i int) int { return i % 2 },
				Nodes: 2, Insecure: true, PeerTimeout: timeout, ConfigHash: "sha256:test", Logf: lb.logf}
			if tc.tls1 != nil {
				cfg.Insecure, cfg.TLS = false, tc.tls1.c
			}
			x, err := NewWithListener(cfg, lns[1])
			if err != nil {
				t.Fatal(err)
			}
			if err := x.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			start := time.Now()
			_, err = x.Control().Gather(testCtx(t, 20*time.Second), 0, []decentral.NodeState{{Node: 1, X: []float32{1}}})
			elapsed := time.Since(start)
			if err == nil {
				t.Fatal("Gather without rank 0 succeeded")
			}
			wantIn(t, "the error", err.Error(), "rank 0 at "+addr0, "within 2s")
			var lost *PeerTimeoutError
			if !errors.As(err, &lost) || lost.Rank != 0 {
				t.Errorf("error %v: want a *PeerTimeoutError naming rank 0", err)
			}
			if elapsed > timeout+timeout/2 {
				t.Errorf("Gather failed after %v, want the peer timeout, %v", elapsed, timeout)
			}
			wantIn(t, "rank 1's log", lb.String(), "rank 1: waiting for rank 0 at "+addr0)
			t.Logf("%v\nlog:\n%s", err, lb)
		})
	}
}

// tls1 is rank 1's TLS configuration in TestGatherWaitBounded.
type tls1 struct{ c *tls.Config }

// serveRank0 returns a function that runs, on a listener, rank 0 of a run
// of two ranks tuned by tune (nil: plaintext), until the test ends.
func serveRank0(t *testing.T, tune func(c *Config)) func(t *testing.T, ln net.Listener) {
	return func(t *testing.T, ln net.Listener) {
		t.Helper()
		cfg := Config{Rank: 0, Addrs: []string{ln.Addr().String(), "127.0.0.1:1"}, Owner: func(i int) int { return i % 2 },
			Nodes: 2, Insecure: true, PeerTimeout: 10 * time.Second, ConfigHash: "sha256:test", Logf: (&logBuf{}).logf}
		if tune != nil {
			tune(&cfg)
		}
		x, err := NewWithListener(cfg, ln)
		if err != nil {
			t.Fatal(err)
		}
		if err := x.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { x.Close() })
	}
}

// TestGatherDuplicateRefused: rank 0 takes each node's state once per
// round, in increasing rounds: a rank, holding its own certificate, that
// sends a state twice, or one of an earlier round, makes rank 0's Gather
// fail naming the rank, the node and the round.
func TestGatherDuplicateRefused(t *testing.T) {
	ca := newCA(t, "run CA")
	for _, tc := range []struct {
		name   string
		rounds []int // the rounds of node 4's states rank 1 sends
		gather int   // the round rank 0 gathers
		want   string
	}{
		{"eight copies", []int{40000, 40000, 40000, 40000, 40000, 40000, 40000, 40000}, 40000, "node 4's state of round 40000 twice"},
		{"an earlier round", []int{12, 8}, 12, "node 4's state of round 8 after its state of round 12"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Rank 0 waits out its peer timeout for the state it refused.
			cl := newCluster(t, 2, 8, func(i int) int { return i / 4 }, func(r int, c *Config) {
				c.Insecure, c.TLS, c.PeerTimeout = false, ca.tls(t, r), 3*time.Second
			})
			ctx := testCtx(t, 20*time.Second)
			for _, round := range tc.rounds {
				states := []decentral.NodeState{{Node: 4, X: []float32{1, 2}}}
				if _, err := cl.xs[1].Control().Gather(ctx, round, states); err != nil {
					t.Logf("rank 1's Gather of round %d: %v", round, err)
				}
			}
			own := make([]decentral.NodeState, 4)
			for i := range own {
				own[i] = decentral.NodeState{Node: i, X: []float32{1, 2}}
			}
			got, err := cl.xs[0].Control().Gather(ctx, tc.gather, own)
			if err == nil {
				t.Fatalf("rank 0 gathered %d states of round %d, some of them copies", len(got), tc.gather)
			}
			wantIn(t, "rank 0's error", err.Error(), "rank 1 at "+cl.xs[0].cfg.Addrs[1], tc.want)
		})
	}
}

// TestAbortEndsWaits: Abort ends at once a round's Wait, rank 0's Gather
// and AgreeRound waiting on a peer that is silent, well within the peer
// timeout, with the abort's error.
func TestAbortEndsWaits(t *testing.T) {
	topo := static(graph.MetropolisHastings(must(graph.Ring(4))))
	stop := errors.New("stop signal")
	for _, wait := range []string{"Wait", "Gather", "AgreeRound"} {
		t.Run(wait, func(t *testing.T) {
			cl := newCluster(t, 2, 4, func(i int) int { return i % 2 }, func(r int, c *Config) { c.PeerTimeout = 30 * time.Second })
			ctx := testCtx(t, 20*time.Second)
			x := cl.xs[0]
			time.AfterFunc(200*time.Millisecond, func() { x.Control().Abort(stop) })
			start := time.Now()
			var err error
			switch wait {
			case "Wait":
				err = runRank(ctx, x, topo, 1, 10, 0, 1, nil)
			case "Gather":
				_, err = x.Control().Gather(ctx, 0, []decentral.NodeState{{Node: 0, X: []float32{1}}, {Node: 2, X: []float32{1}}})
			case "AgreeRound":
				_, err = x.Control().AgreeRound(ctx, []int{4})
			}
			if !errors.Is(err, stop) {
				t.Fatalf("%s: %v, want the abort's error", wait, err)
			}
			if elapsed := time.Since(start); elapsed > 5*time.Second {
				t.Errorf("%s ended %v after it began, want at once after Abort", wait, elapsed)
			}
		})
	}
}

// TestBlame: Blame finds the rank an error says this rank waited for.
func TestBlame(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{fmt.Errorf("gather: %w", &PeerTimeoutError{Rank: 2, Addr: "a:1"}), 2},
		{fmt.Errorf("round: %w", &PeerStoppedError{Rank: 1, Why: "since rank 3 at a:1 stopped"}), 3},
		{&PeerStoppedError{Rank: 1, Why: "interrupted"}, 1},
		{errors.New("transport: rank 0: round 5: peer not answering within 1s: rank 2 at 127.0.0.1:5 silent for 1s (waiting for x)"), 2},
		{errors.New("disk full"), -1},
	} {
		r, ok := Blame(tc.err)
		if !ok {
			r = -1
		}
		if r != tc.want {
			t.Errorf("Blame(%v) = %d, want %d", tc.err, r, tc.want)
		}
	}
	if !strings.Contains((&PeerTimeoutError{Rank: 0, Addr: "h:1", What: "w", Timeout: time.Second}).Error(), "rank 0 at h:1") {
		t.Error("a PeerTimeoutError does not name its rank and address")
	}
}
