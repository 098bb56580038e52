package decentral

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// FullBatch makes unitSampler a FullBatcher for BenchmarkStep's D-GET.
func (s unitSampler) FullBatch(int, int) []Batch { return []Batch{s.b} }

// pieceSampler gives a node's whole share as S1 in pieces of uneven sizes,
// so that fullGrad's size-weighted mean of the pieces is exercised.
type pieceSampler struct {
	*lsSampler
	pieces [][]Batch
}

func newPieceSampler(pr *lsProblem, batch int, seed uint64, sizes ...int) *pieceSampler {
	s := &pieceSampler{lsSampler: newLSSampler(pr, batch, seed)}
	for i := range pr.m {
		var ps []Batch
		for r := 0; r < pr.n; {
			b := &lsBatch{node: i}
			for range sizes[len(ps)%len(sizes)] {
				if r < pr.n {
					b.rows = append(b.rows, r)
					r++
				}
			}
			ps = append(ps, b)
		}
		s.pieces = append(s.pieces, ps)
	}
	return s
}

func (s *pieceSampler) FullBatch(node, _ int) []Batch { return s.pieces[node] }

// sampleOnly hides every method of a BatchSource but Sample.
type sampleOnly struct{ BatchSource }

// TestSamplesMatchCounters: the samples the optimizer counts after Init and
// each round equal SamplesAfter for every algorithm, D-GET's S1 (q = 3)
// coming in four pieces; and D-GET's full gradient, weighted over the
// pieces, equals one evaluation on the whole share.
func TestSamplesMatchCounters(t *testing.T) {
	pr := newLS(5, 10, 30, 1, 3)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Ring(5)))
	const q = 3
	cost := Cost{Batch: 3, Full: pr.n}
	x0 := make([]float32, pr.d)
	for k := range x0 {
		x0[k] = 0.1 * float32(k)
	}
	whole := pr.full()
	g := make([]float32, pr.d)
	// checkFull compares vec(i), meant to be ∇f_i(x_i; S1), with one Grad.
	checkFull := func(what string, x, vec func(i int) []float32) {
		for i := range pr.m {
			lsOracle{pr}.Grad(0, x(i), whole[i], g)
			for k, v := range vec(i) {
				if math.Abs(float64(v-g[k])) > 1e-5*(1+math.Abs(float64(g[k]))) {
					t.Fatalf("%s of node %d: [%d] = %v, one evaluation on the whole share gives %v", what, i, k, v, g[k])
				}
			}
		}
	}
	for _, algo := range Algorithms() {
		s := newPieceSampler(pr, cost.Batch, 7, 4, 11, 7)
		s.sigma = 0.2
		meth := knobbed(t, algo, Knobs{"period": q})
		o, err := New(Config{Method: meth, Workers: 2, StepSizes: StepSizes{Eta0: 0.05}}, mx, s, lsOracle{pr}, x0)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		if err := o.Init(ctx); err != nil {
			t.Fatal(err)
		}
		if algo == DGET {
			checkFull("v_0", func(int) []float32 { return x0 }, o.Direction)
		}
		for r := 0; r <= 10; r++ {
			if r > 0 {
				if err := o.Step(ctx); err != nil {
					t.Fatal(err)
				}
			}
			want := SamplesAfter(meth, r, cost)
			if got := o.Counters().Samples; got != int64(pr.m)*want {
				t.Fatalf("%s after %d rounds: %d samples counted, SamplesAfter gives %d per node × %d", algo, r, got, want, pr.m)
			}
			if algo == DGET && r%q == 0 && r > 0 {
				st, _ := o.State()
				v := st.Slab("v")
				checkFull(fmt.Sprintf("v_%d", r), o.Node, func(i int) []float32 { return v[i*pr.d : (i+1)*pr.d] })
			}
		}
	}
	// Without a FullBatcher D-GET stops at Init, naming the batch source.
	o, err := New(Config{Algorithm: DGET, StepSizes: StepSizes{Eta0: 0.05}}, mx, sampleOnly{newLSSampler(pr, 3, 1)}, lsOracle{pr}, x0)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if err := o.Init(ctx); err == nil || !strings.Contains(err.Error(), "needs large batches") {
		t.Errorf("D-GET on a batch source without large batches: %v", err)
	}
}

// TestRoundsWithin: at an equal budget of samples, each algorithm gets the
// rounds its per-round cost allows — GT-STORM about half DSGD's, D-GET
// fewer still when its large batch is costly.
func TestRoundsWithin(t *testing.T) {
	cost := Cost{Batch: 4, Full: 100}
	knobs := Knobs{"period": 10}
	budget := SamplesAfter(knobbed(t, DSGD, knobs), 1000, cost)
	if budget != 4000 {
		t.Fatalf("DSGD: %d samples in 1000 rounds, want 4000", budget)
	}
	for algo, want := range map[string]int{
		DSGD: 1000, D2: 999, GNSD: 999, GTSTORM: 499,
		DGET: 229, // init 100, then 172 per 10 rounds: 22·10 + 9 rounds
	} {
		meth := knobbed(t, algo, knobs)
		got, err := RoundsWithin(meth, budget, cost)
		if err != nil || got != want {
			t.Errorf("%s: %d rounds within %d samples (%v), want %d", algo, got, budget, err, want)
		}
		in := SamplesAfter(meth, got, cost)
		over := SamplesAfter(meth, got+1, cost)
		if in > budget || over <= budget {
			t.Errorf("%s: %d rounds spend %d, one more %d, budget %d", algo, got, in, over, budget)
		}
	}
	if got, err := RoundsWithin(DGETMethod{Period: 10}, 50, cost); got != 0 || err != nil {
		t.Errorf("D-GET within 50 samples, below its initial 100: %d rounds (%v)", got, err)
	}
	// Period 0 is DefaultPeriod: S1 at Init and round 100 only.
	if got := SamplesAfter(DGETMethod{}, DefaultPeriod, Cost{Batch: 1, Full: 10}); got != 10+2*(DefaultPeriod-1)+10 {
		t.Errorf("D-GET with the default period: %d samples in %d rounds", got, DefaultPeriod)
	}
}

// TestDGETTracking: y tracks v's average, ȳ_t = v̄_t, and
// x̄_{t+1} = x̄_t − η_0 ȳ_t, under static and time-varying directed W_t,
// across the rounds that restart v from S1 (q = 3).
func TestDGETTracking(t *testing.T) {
	pr := newLS(6, 10, 30, 1, 5)
	er := mustMixing(t, graph.MixMetropolis, mustGraph(graph.ErdosRenyi(6, 0.4, 2)))
	for name, topo := range map[string]perRound{
		"static":       {er},
		"time-varying": {er, onePeer(t, 6), mustMixing(t, graph.MixLaplacian, mustGraph(graph.Star(6)))},
	} {
		s := newPieceSampler(pr, 3, 9, 8, 5)
		s.sigma = 0.3
		o, _ := lsRunWith(t, Config{Method: DGETMethod{Period: 3}, Workers: 2, Topology: topo, StepSizes: StepSizes{Eta0: 0.05}}, topo[0], pr, s)
		worstY, worstX := 0.0, 0.0
		for r := range 40 {
			st, _ := o.State()
			v := st.Slab("v")
			vbar := meanOf(o.Nodes(), o.Dim(), func(i int) []float32 { return v[i*o.Dim() : (i+1)*o.Dim()] })
			ybar, xbar := meanOf(o.Nodes(), o.Dim(), o.Direction), meanOf(o.Nodes(), o.Dim(), o.Node)
			if o.Eta() != 0.05 {
				t.Fatalf("round %d: η = %v, want the constant 0.05", r, o.Eta())
			}
			for k := range ybar {
				worstY = max(worstY, math.Abs(ybar[k]-vbar[k])/(1+math.Abs(vbar[k])))
			}
			if err := o.Step(ctx); err != nil {
				t.Fatal(err)
			}
			next := meanOf(o.Nodes(), o.Dim(), o.Node)
			for k := range next {
				want := xbar[k] - 0.05*ybar[k]
				worstX = max(worstX, math.Abs(next[k]-want)/(1+math.Abs(want)))
			}
		}
		if worstY > 1e-5 || worstX > 1e-5 {
			t.Errorf("%s: |ȳ_t − v̄_t| up to %.2e, |x̄_{t+1} − (x̄_t − η_0 ȳ_t)| up to %.2e", name, worstY, worstX)
		}
	}
}
