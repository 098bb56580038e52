package transport

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/decentral"
)

// leaveTimeout is the peer timeout of the tests below: long, so that a rank
// that stops waiting within seconds did so because it heard a BYE.
const leaveTimeout = 60 * time.Second

// wantStopped fails unless err wraps a *PeerStoppedError naming rank and
// rounds.
func wantStopped(t *testing.T, who string, err error, rank, rounds int, why string) {
	t.Helper()
	var ps *PeerStoppedError
	if !errors.As(err, &ps) || ps.Rank != rank || ps.Round != rounds || ps.Why != why {
		t.Fatalf("%s: error %v, want rank %d stopped after round %d (%s)", who, err, rank, rounds, why)
	}
}

// TestLeaveStopsPeersAtOnce: three ranks on a ring; rank 1 stops after
// round 3 and says BYE. Its neighbours, waiting for its round-4 vectors,
// fail at once naming it — not after the peer timeout — and rank 1's Leave
// returns once they took the BYE. Rank 0 then gathers the round-3 states
// that ranks 1 and 2 sent before their BYE, and a gathering of a later
// round fails at once.
func TestLeaveStopsPeersAtOnce(t *testing.T) {
	const m, p = 6, 5000
	topo := static(graph.MetropolisHastings(must(graph.Ring(m))))
	cl := newCluster(t, 3, m, func(i int) int { return i * 3 / m }, func(r int, c *Config) { c.PeerTimeout = leaveTimeout })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	checkErrs(t, cl.runAll(ctx, topo, 2, p, 0, 3, nil))
	states := func(x *Exchange) []decentral.NodeState {
		var s []decentral.NodeState
		for _, i := range x.Local() {
			s = append(s, decentral.NodeState{Node: i, X: vec(i, 3, 0, p)})
		}
		return s
	}
	for _, r := range []int{1, 2} {
		if _, err := cl.xs[r].Control().Gather(ctx, 3, states(cl.xs[r])); err != nil {
			t.Fatal(err)
		}
	}

	start := time.Now()
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for _, r := range []int{0, 2} {
		wg.Go(func() { errs[r] = runRank(ctx, cl.xs[r], topo, 2, p, 3, 1, nil) })
	}
	lctx, lcancel := context.WithTimeout(ctx, 5*time.Second)
	defer lcancel()
	errs[1] = cl.xs[1].Control().Leave(lctx, "interrupted")
	wg.Wait()
	elapsed := time.Since(start)
	if errs[1] != nil {
		t.Errorf("rank 1's Leave: %v", errs[1])
	}
	for _, r := range []int{0, 2} {
		wantStopped(t, fmt.Sprint("rank ", r), errs[r], 1, 3, "interrupted")
		wantIn(t, "the error", errs[r].Error(), "rank 1 at "+cl.xs[r].cfg.Addrs[1]+" stopped after round 3 (interrupted)")
	}
	if elapsed > 5*time.Second {
		t.Errorf("the ranks stopped %v after rank 1 left, want at once", elapsed)
	}

	got, err := cl.xs[0].Control().Gather(ctx, 3, states(cl.xs[0]))
	if err != nil || len(got) != m-len(cl.xs[0].Local()) {
		t.Fatalf("gather of round 3, sent before the BYEs: %d states, %v", len(got), err)
	}
	// Rank 2 leaves too (cut short by the round it did not complete).
	if err := cl.xs[2].Control().Leave(lctx, "since rank 1 stopped"); err != nil {
		t.Errorf("rank 2's Leave: %v", err)
	}
	start = time.Now()
	_, err = cl.xs[0].Control().Gather(ctx, 4, states(cl.xs[0]))
	wantStopped(t, "rank 0's gather of round 4", err, 1, 3, "interrupted")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("rank 0's gather failed after %v, want at once", d)
	}
	if _, err := cl.xs[1].Control().Gather(ctx, 4, states(cl.xs[1])); err == nil {
		t.Error("a rank gathered after Leave")
	}
	if err := cl.xs[1].BeginRound(4, topo.Mixing(4), 2); err == nil {
		t.Error("a round began after Leave")
	}
}

// TestLeaveAtEnd: every rank leaves as soon as it finished its rounds,
// while its neighbours may still wait for its last vectors (large, in
// several chunks): they all arrive, no rank fails, and every Leave returns
// once its peers took the BYE.
func TestLeaveAtEnd(t *testing.T) {
	const m, p, rounds = 6, 62006, 4
	topo := static(graph.MetropolisHastings(must(graph.Ring(m))))
	cl := newCluster(t, 3, m, func(i int) int { return i % 3 }, func(r int, c *Config) { c.PeerTimeout = leaveTimeout; c.ChunkBytes = 64 << 10 })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	errs := make([]error, 3)
	leaves := make([]error, 3)
	var wg sync.WaitGroup
	start := time.Now()
	for r, x := range cl.xs {
		wg.Go(func() {
			// Rank r lags r × 50 ms behind each round, so that the first to
			// finish leaves while the others still wait.
			errs[r] = runRank(ctx, x, topo, 2, p, 0, rounds, func(int) { time.Sleep(time.Duration(r) * 50 * time.Millisecond) })
			lctx, lcancel := context.WithTimeout(ctx, 5*time.Second)
			defer lcancel()
			leaves[r] = x.Control().Leave(lctx, "finished")
		})
	}
	wg.Wait()
	checkErrs(t, errs)
	checkErrs(t, leaves)
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the ranks took %v to finish and leave", d)
	}
}
