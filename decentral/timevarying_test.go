package decentral

import (
	"math"
	"slices"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// TestTimeVaryingTracking: gradient tracking stays exact under link drops
// and on the exponential graph, x̄_{t+1} = x̄_t − η_t ȳ_t (GNSD) and
// x̄_t − η_t v̄_t (GT-STORM), each round mixing with the topology's W_t and
// sending to W_t's receivers.
func TestTimeVaryingTracking(t *testing.T) {
	drop, err := graph.NewLinkDrop(mustGraph(graph.ErdosRenyi(8, 0.5, 3)), graph.MixMetropolis, 0.3, 21)
	if err != nil {
		t.Fatal(err)
	}
	exp8, _ := graph.OnePeerExponential(8)
	exp5, _ := graph.OnePeerExponential(5)
	for _, tc := range []struct {
		name string
		topo graph.TimeVarying
		m    int
	}{{"link-drop", drop, 8}, {"exp8", exp8, 8}, {"exp5", exp5, 5}} {
		pr := newLS(tc.m, 10, 30, 1, 5)
		for _, algo := range []string{GNSD, GTSTORM} {
			cfg := Config{Algorithm: algo, Workers: 2, Topology: tc.topo, StepSizes: StepSizes{Eta0: 0.05, Rho: 3}}
			o, _ := lsRun(t, cfg, tc.topo.Mixing(0), pr, 3, 9)
			shares := o.desc.Shares()
			bytes := make([]int64, o.Nodes())
			worst := 0.0
			for r := range 40 {
				xbar := meanOf(o.Nodes(), o.Dim(), o.Node)
				dbar := meanOf(o.Nodes(), o.Dim(), o.Direction)
				eta := o.Eta()
				if err := o.Step(ctx); err != nil {
					t.Fatal(err)
				}
				w := tc.topo.Mixing(r)
				if o.Mixing() != w {
					t.Fatalf("%s %s round %d mixed with another matrix than W_t", tc.name, algo, r+1)
				}
				for i := range bytes {
					bytes[i] += int64(shares*o.Dim()*4) * int64(len(w.To(i)))
				}
				next := meanOf(o.Nodes(), o.Dim(), o.Node)
				for k := range next {
					want := xbar[k] - eta*dbar[k]
					worst = max(worst, math.Abs(next[k]-want)/(1+math.Abs(want)))
				}
			}
			if worst > 1e-5 {
				t.Errorf("%s %s: |x̄_{t+1} − (x̄_t − η_t d̄_t)| up to %.2e, want float32 rounding", tc.name, algo, worst)
			}
			for i, b := range o.Counters().BytesSent {
				if b != bytes[i] {
					t.Errorf("%s %s: node %d sent %d bytes, want %d", tc.name, algo, i, b, bytes[i])
				}
				if _, isExp := tc.topo.(*graph.OnePeerExp); isExp && b != int64(40*shares*o.Dim()*4) {
					t.Errorf("%s %s: node %d sent %d bytes, want one message per round", tc.name, algo, i, b)
				}
			}
		}
	}
}

// TestLinkDropRunResumes: a run under link drops is a function of the seeds
// alone, and resuming from a snapshot with a fresh LinkDrop of the same seed
// continues exactly as the uninterrupted run.
func TestLinkDropRunResumes(t *testing.T) {
	pr := newLS(8, 10, 30, 1, 6)
	base := mustGraph(graph.ErdosRenyi(8, 0.5, 3))
	newDrop := func() *graph.LinkDrop {
		l, err := graph.NewLinkDrop(base, graph.MixMetropolis, 0.3, 77)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	newSampler := func() *lsSampler { s := newLSSampler(pr, 3, 5); s.sigma = 0.3; return s }
	const total, at = 20, 7
	for _, algo := range []string{DSGD, GNSD, GTSTORM} {
		run := func() (*Optimizer, *lsSampler, *Snapshot) {
			drop := newDrop()
			s := newSampler()
			o, _ := lsRunWith(t, Config{Algorithm: algo, Workers: 2, Topology: drop, StepSizes: StepSizes{Eta0: 0.05, Rho: 7}}, drop.Mixing(0), pr, s)
			var snap *Snapshot
			for o.Round() < total {
				if o.Round() == at {
					snap, _ = o.State()
				}
				if err := o.Step(ctx); err != nil {
					t.Fatal(err)
				}
			}
			return o, s, snap
		}
		o, straight, snap := run()
		o2, _, _ := run()
		want, _ := o.State()
		again, _ := o2.State()
		if !sameSlabs(want, again) {
			t.Errorf("%s: two runs with the same seeds differ", algo)
		}

		resumed := newSampler()
		for i := 0; i < pr.m; i++ { // replay the sampler to the checkpoint: one batch per round
			for k := 0; k < straight.calls[i]-(total-at); k++ {
				resumed.Sample(i)
			}
		}
		drop := newDrop()
		o3, err := New(Config{Algorithm: algo, Workers: 2, Topology: drop, StepSizes: StepSizes{Eta0: 0.05, Rho: 7}}, drop.Mixing(0), resumed, lsOracle{pr}, make([]float32, pr.d))
		if err != nil {
			t.Fatal(err)
		}
		defer o3.Close()
		if err := o3.Restore(snap); err != nil {
			t.Fatal(err)
		}
		for o3.Round() < total {
			if err := o3.Step(ctx); err != nil {
				t.Fatal(err)
			}
		}
		got, _ := o3.State()
		if !sameSlabs(got, want) {
			t.Errorf("%s: resumed at round %d, the state differs from the uninterrupted run", algo, at)
		}
		if gc, wc := o3.Counters(), o.Counters(); !slices.Equal(gc.BytesSent, wc.BytesSent) {
			t.Errorf("%s: resumed bytes %v, want %v", algo, gc.BytesSent, wc.BytesSent)
		}
	}
}
