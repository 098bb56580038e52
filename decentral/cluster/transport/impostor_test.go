package transport

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/decentral"
)

// TestImpostorRefused: a second process claiming rank 1, with a ranks file
// of its own, that connects while the real rank 1 runs is refused — its
// node states of an earlier round and its BYE alike — and the run goes on:
// rank 0 still gathers the real rank 1's states, and sees no rank stop.
func TestImpostorRefused(t *testing.T) {
	owner := func(i int) int { return i / 2 }
	cl := newCluster(t, 2, 4, owner, nil)
	ctx := testCtx(t, 30*time.Second)
	gather := func(round int) {
		t.Helper()
		var wg sync.WaitGroup
		var err1 error
		wg.Go(func() {
			_, err1 = cl.xs[1].Control().Gather(ctx, round, []decentral.NodeState{{Node: 2, X: []float32{1}}, {Node: 3, X: []float32{2}}})
		})
		got, err := cl.xs[0].Control().Gather(ctx, round, []decentral.NodeState{{Node: 0, X: []float32{3}}, {Node: 1, X: []float32{4}}})
		wg.Wait()
		if err != nil || err1 != nil || len(got) != 2 {
			t.Fatalf("gather round %d: rank 0 %v (%d states), rank 1 %v", round, err, len(got), err1)
		}
	}
	for round := range 3 {
		gather(round * 10)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lb := &logBuf{}
	imp, err := NewWithListener(Config{
		Rank: 1, Addrs: []string{cl.xs[0].cfg.Addrs[0], ln.Addr().String()}, Owner: owner, Nodes: 4, Insecure: true,
		PeerTimeout: 2 * time.Second, ConfigHash: "sha256:test", Logf: lb.logf,
	}, ln)
	if err != nil {
		t.Fatal(err)
	}
	if err := imp.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := imp.Control().Gather(ctx, 0, []decentral.NodeState{{Node: 2, X: []float32{9}}, {Node: 3, X: []float32{9}}}); err == nil {
		t.Error("the impostor's gather of round 0 was taken, after the real rank 1's round 20")
	} else {
		wantIn(t, "the impostor's error", err.Error(), "rank 1 is live and completed 20 rounds")
	}
	lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	imp.Control().Leave(lctx, "interrupted") // its BYE claims 0 rounds: refused too
	cancel()
	imp.Close()

	gather(30)
	x := cl.xs[0]
	x.mu.Lock()
	stopped := x.peers[1].stopped
	x.mu.Unlock()
	if stopped >= 0 {
		t.Errorf("rank 0 took the impostor's BYE: rank 1 stopped after %d rounds", stopped)
	}
	wantIn(t, "rank 0's log", cl.logs[0].String(), "a process claiming rank 1 after 0 rounds")
}

// TestImpostorLinkRefused: a link stream claiming rank 0 after fewer
// rounds than the real rank 0 completed is refused, and the ranks run on.
func TestImpostorLinkRefused(t *testing.T) {
	const m, p = 4, 16
	topo := static(graph.MetropolisHastings(must(graph.Ring(m))))
	cl := newCluster(t, 2, m, func(i int) int { return i % 2 }, nil)
	ctx := testCtx(t, 30*time.Second)
	checkErrs(t, cl.runAll(ctx, topo, 1, p, 0, 5, nil))
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := rawLink(t, sctx, cl.xs[1].cfg.Addrs[1], rawHello(0, 1)); err == nil {
		t.Error("a link claiming rank 0 after 0 rounds was taken, after the real rank 0's 5")
	} else {
		wantIn(t, "the refusal", err.Error(), "rank 0 is live and completed")
	}
	checkErrs(t, cl.runAll(ctx, topo, 1, p, 5, 5, nil))
	checkExactlyOnce(t, cl)
}
