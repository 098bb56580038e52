package transport

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

func checkErrs(t *testing.T, errs []error) {
	t.Helper()
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// TestExchangeVectors runs several rounds between 2 and 3 ranks over ring,
// Erdős–Rényi and directed one-peer graphs with vectors of 18,378 and
// 62,006 floats sent in chunks, and checks every Recv bit for bit.
func TestExchangeVectors(t *testing.T) {
	ring6, err := graph.Ring(6)
	if err != nil {
		t.Fatal(err)
	}
	er9, err := graph.ErdosRenyi(9, 0.5, 7)
	if err != nil {
		t.Fatal(err)
	}
	// A directed one-peer W on 6 nodes: node i mixes node i-1's vector.
	self, from, ws := make([]float64, 6), make([][]int, 6), make([][]float64, 6)
	for i := range 6 {
		self[i], from[i], ws[i] = 0.5, []int{(i + 5) % 6}, []float64{0.5}
	}
	onePeer, err := graph.NewMixingRows("one-peer", self, from, ws)
	ca := newCA(t, "test CA")
	tests := []struct {
		name          string
		ranks, nodes  int
		owner         func(int) int
		topo          graph.Topology
		shares, p     int
		chunk         int
		tls           bool
		first, rounds int
	}{
		{"2 ranks ring TLS", 2, 6, func(i int) int { return i % 2 }, static(graph.MetropolisHastings(ring6)), 2, 18378, 16 << 10, true, 0, 5},
		{"2 ranks ring big chunks", 2, 6, func(i int) int { return i / 3 }, static(graph.LaplacianMixing(ring6)), 1, 62006, 0, false, 0, 3},
		{"3 ranks ER", 3, 9, func(i int) int { return i / 3 }, static(graph.MetropolisHastings(er9)), 2, 62006, 64 << 10, false, 0, 4},
		{"3 ranks ER TLS resumed", 3, 9, func(i int) int { return i % 3 }, static(graph.MetropolisHastings(er9)), 1, 18378, 1 << 15, true, 41, 3},
		{"2 ranks directed one-peer", 2, 6, func(i int) int { return i / 3 }, static(onePeer, err), 2, 18378, 1 << 14, false, 0, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := newCluster(t, tt.ranks, tt.nodes, tt.owner, func(r int, c *Config) {
				c.ChunkBytes = tt.chunk
				if tt.tls {
					c.Insecure, c.TLS = false, ca.tls(t, r)
				}
			})
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			checkErrs(t, cl.runAll(ctx, tt.topo, tt.shares, tt.p, tt.first, tt.rounds, nil))
			var sent, recv int64
			for _, x := range cl.xs {
				s := x.Stats()
				sent, recv = sent+s.BytesSent, recv+s.BytesRecv
				if s.Waits != int64(tt.rounds) {
					t.Errorf("rank %d: %d Waits counted, want %d", x.cfg.Rank, s.Waits, tt.rounds)
				}
			}
			if sent == 0 || sent != recv {
				t.Errorf("%d payload bytes sent and %d received over the network, want the same, > 0", sent, recv)
			}
		})
	}
}

// TestExchangeRunsAhead runs the one-peer exponential graph on 16 nodes over
// 4 ranks with rank 0 slow: ranks that do not hear from rank 0 run two or
// more rounds ahead of it, and their vectors wait, unread, until it catches
// up.
func TestExchangeRunsAhead(t *testing.T) {
	topo, err := graph.OnePeerExponential(16)
	if err != nil {
		t.Fatal(err)
	}
	cl := newCluster(t, 4, 16, func(i int) int { return i / 4 }, func(r int, c *Config) { c.ChunkBytes = 1 << 12 })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	slow := func(r, t int) {
		if r == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	checkErrs(t, cl.runAll(ctx, topo, 2, 3000, 0, 12, slow))
	var held int64
	for _, x := range cl.xs {
		held += x.held.Load()
	}
	if held == 0 {
		t.Error("no frame came two or more rounds early: the test does not exercise holding them")
	}
}

// TestRecvNoAlloc: Recv allocates nothing, for local and remote senders.
func TestRecvNoAlloc(t *testing.T) {
	ring, _ := graph.Ring(4)
	topo := static(graph.MetropolisHastings(ring))
	cl := newCluster(t, 2, 4, func(i int) int { return i / 2 }, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	checkErrs(t, cl.runAll(ctx, topo, 2, 100, 0, 2, nil))
	x := cl.xs[0] // nodes 0 and 1; node 0 hears from 1 (local) and 3 (remote)
	allocs := testing.AllocsPerRun(100, func() {
		if x.Recv(0, 1) == nil || x.Recv(0, 3) == nil {
			t.Fatal("Recv returned nil")
		}
	})
	if allocs != 0 {
		t.Errorf("Recv: %v allocations, want 0", allocs)
	}
}

// TestCloseNoLeak: after Close every goroutine of the Exchanges has ended.
func TestCloseNoLeak(t *testing.T) {
	ring, _ := graph.Ring(6)
	topo := static(graph.MetropolisHastings(ring))
	ca := newCA(t, "leak CA")
	run := func() {
		cl := newCluster(t, 3, 6, func(i int) int { return i % 3 }, func(r int, c *Config) {
			c.Insecure, c.TLS = false, ca.tls(t, r)
		})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		checkErrs(t, cl.runAll(ctx, topo, 2, 1000, 0, 3, nil))
		for _, x := range cl.xs {
			x.Close()
		}
	}
	run() // warm up gRPC's process-wide goroutines
	// Every goroutine that exists now, the first run's on their way out
	// included, is not the second run's: each one the second run starts
	// must have ended once its Exchanges are closed.
	before := goroutines()
	run()
	var left map[int64]string
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		left = goroutines()
		for id := range left {
			if before[id] != "" {
				delete(left, id)
			}
		}
		if len(left) == 0 || time.Now().After(end) {
			break
		}
	}
	if len(left) > 0 {
		var b strings.Builder
		for _, stack := range left {
			b.WriteString(stack + "\n\n")
		}
		t.Errorf("%d goroutines started by the second run still run 5 s after Close:\n%s", len(left), b.String())
	}
}

// goroutines returns the stack of every goroutine, by its id.
func goroutines() map[int64]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	all := make(map[int64]string)
	for _, stack := range strings.Split(string(buf), "\n\n") {
		var id int64
		if _, err := fmt.Sscanf(stack, "goroutine %d ", &id); err == nil {
			all[id] = stack
		}
	}
	return all
}

// TestUsageErrors: calls out of order or with bad arguments are refused.
func TestUsageErrors(t *testing.T) {
	ring, _ := graph.Ring(4)
	w, _ := graph.MetropolisHastings(ring)
	cl := newCluster(t, 2, 4, func(i int) int { return i / 2 }, nil)
	x := cl.xs[0]
	if _, err := x.Send(0, []int{1}, [][]float32{{1}}); err == nil {
		t.Error("Send before BeginRound accepted")
	}
	if err := x.BeginRound(0, w, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Send(2, []int{1}, [][]float32{{1}}); err == nil {
		t.Error("Send from another rank's node accepted")
	}
	if _, err := x.Send(0, []int{1}, [][]float32{{1}, {2}}); err == nil {
		t.Error("Send of 2 vectors in a round sharing 1 accepted")
	}
	if err := x.BeginRound(1, w, 1); err == nil {
		t.Error("BeginRound before the previous round's Wait accepted")
	}
	other, _ := graph.Ring(5)
	w5, _ := graph.MetropolisHastings(other)
	if err := cl.xs[1].BeginRound(0, w5, 1); err == nil {
		t.Error("BeginRound with a W over 5 nodes in a 4-node run accepted")
	}
	x.Close()
	if err := x.Wait(context.Background()); err == nil {
		t.Error("Wait after Close returned nil")
	}
}
