package decentral

import (
	"math"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// TestNetworkClockPath: the simulated clock on a path 0 – 1 – 2 whose
// node 2 computes 5 times slower, against times worked out by hand.
// DSGD sends 10 floats (40 bytes) per neighbour: a link takes
// 0.01 s + 40 B / 1000 B/s = 0.05 s, a gradient 0.1 s (0.5 s on node 2).
//
//	round 1: ready (0.1, 0.1, 0.5)   T = (0.15, 0.55, 0.5)
//	round 2: ready (0.25, 0.65, 1.0) T = (0.70, 1.05, 1.0)
//	round 3: ready (0.8, 1.15, 1.5)  T = (1.2, 1.55, 1.5)
//
// GT-STORM draws one batch at Init (T_0 = compute) and two per round.
func TestNetworkClockPath(t *testing.T) {
	pr := newLS(3, 10, 20, 1, 1)
	mx := mustMixing(t, graph.MixMetropolis, mustGraph(graph.Path(3)))
	net := &Network{Latency: 0.01, Bandwidth: 1000, Compute: 0.1, Batch: 3, Slowdown: []float64{1, 1, 5}}
	cases := []struct {
		algo string
		want [][]float64 // T after Init, then after each round
	}{
		{DSGD, [][]float64{{0, 0, 0}, {0.15, 0.55, 0.5}, {0.70, 1.05, 1.0}, {1.2, 1.55, 1.5}}},
		// Init: (0.1, 0.1, 0.5). Rounds: compute 0.2 (1.0 on node 2), two
		// 40-byte vectors, so a link takes 0.01 + 0.08 = 0.09 s.
		// round 1: ready (0.3, 0.3, 1.5) T = (0.39, 1.59, 1.5)
		// round 2: ready (0.59, 1.79, 2.5) T = (1.88, 2.59, 2.5)
		{GTSTORM, [][]float64{{0.1, 0.1, 0.5}, {0.39, 1.59, 1.5}, {1.88, 2.59, 2.5}}},
	}
	for _, c := range cases {
		o, _ := lsRun(t, Config{Algorithm: c.algo, Network: net, StepSizes: StepSizes{Eta0: 0.05}}, mx, pr, 3, 1)
		for r, want := range c.want {
			if r > 0 {
				if err := o.Step(ctx); err != nil {
					t.Fatal(err)
				}
			}
			for i, w := range want {
				if math.Abs(o.simT[i]-w) > 1e-12 {
					t.Errorf("%s after %d rounds: T_%d = %.6g, want %.6g", c.algo, r, i, o.simT[i], w)
				}
			}
			if got, w := o.SimSeconds(), max(want[0], want[1], want[2]); math.Abs(got-w) > 1e-12 {
				t.Errorf("%s after %d rounds: SimSeconds %.6g, want %.6g", c.algo, r, got, w)
			}
		}
	}
}

// TestNetworkClockResume: the clock is part of the state; a run restored
// from round 5 ends at the same simulated time as the uninterrupted one,
// with compression on (CHOCO's message sizes drive the links).
func TestNetworkClockResume(t *testing.T) {
	pr := newLS(5, 10, 30, 1, 6)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Torus(5)))
	net := &Network{Latency: 0.001, Bandwidth: 1e4, Compute: 0.01, Batch: 3, Slowdown: []float64{1, 3, 1, 1, 1}}
	cfg := Config{Method: CHOCOMethod{Compress: "qsgd:7"}, Seed: 9, Network: net, StepSizes: StepSizes{Eta0: 0.05}}
	o, o2, snap := resumedAt(t, cfg, mx, pr, func() *lsSampler { return newLSSampler(pr, 3, 5) }, 5, 12)
	want, _ := o.State()
	got, _ := o2.State()
	if !sameSlabs(got, want) {
		t.Error("resumed CHOCO state differs from the uninterrupted run")
	}
	if o2.SimSeconds() != o.SimSeconds() || o.SimSeconds() <= 0 {
		t.Errorf("resumed simulated time %v, uninterrupted %v", o2.SimSeconds(), o.SimSeconds())
	}
	noClock := cfg
	noClock.Network = nil
	o3, _ := New(noClock, mx, newLSSampler(pr, 3, 5), lsOracle{pr}, make([]float32, pr.d))
	defer o3.Close()
	if err := o3.Restore(snap); err == nil {
		t.Error("a snapshot with a clock restored into an optimizer without a network")
	}
}
