package decentral

import (
	"math"
	"sync"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// recorder wraps an oracle and records every call.
type recorder struct {
	inner Oracle
	mu    sync.Mutex
	calls []call
}

type call struct {
	worker int
	node   int
	x      []float32
	rows   []int
	noise  []float64
	batch  *lsBatch
	grad   []float32
}

func (r *recorder) Grad(worker int, x []float32, b Batch, grad []float32) (float32, error) {
	loss, err := r.inner.Grad(worker, x, b, grad)
	lb := b.(*lsBatch)
	r.mu.Lock()
	r.calls = append(r.calls, call{worker, lb.node, append([]float32(nil), x...), append([]int(nil), lb.rows...),
		append([]float64(nil), lb.noise...), lb, append([]float32(nil), grad...)})
	r.mu.Unlock()
	return loss, err
}

func (r *recorder) take() map[int][]call {
	r.mu.Lock()
	defer r.mu.Unlock()
	by := map[int][]call{}
	for _, c := range r.calls {
		by[c.node] = append(by[c.node], c)
	}
	r.calls = nil
	return by
}

func equal32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// TestGradientCalls proves with a recording oracle where each algorithm
// evaluates its gradients: GT-STORM twice per node and round, on the SAME
// minibatch, at x_t and x_{t−1}; GNSD once, at x_{t+1}; DSGD and CHOCO
// once, at x_t; DSGDm (one local step) and QG-DSGDm once, at x_t.
// With β_1 = 0 (default ρ) GT-STORM's v_1 is exactly the fresh gradient.
func TestGradientCalls(t *testing.T) {
	pr := newLS(5, 10, 30, 1, 3)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Ring(5)))
	for _, algo := range Algorithms() {
		for _, workers := range []int{1, 3} {
			rec := &recorder{inner: lsOracle{pr}}
			s := newLSSampler(pr, 3, 4)
			s.sigma = 0.3
			o, err := New(Config{Algorithm: algo, Workers: workers, StepSizes: StepSizes{Eta0: 0.05}}, mx, s, rec, make([]float32, pr.d))
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if err := o.Init(ctx); err != nil {
				t.Fatal(err)
			}
			init := rec.take()
			for i := 0; i < pr.m; i++ {
				want := 1
				if algo == DSGD || algo == CHOCO || algo == DSGDM || algo == QGDSGDM {
					want = 0
				}
				if len(init[i]) != want {
					t.Fatalf("%s: init evaluated node %d %d times, want %d", algo, i, len(init[i]), want)
				}
			}
			for r := 1; r <= 4; r++ {
				before := make([][]float32, pr.m)
				for i := range before {
					before[i] = append([]float32(nil), o.Node(i)...)
				}
				if err := o.Step(ctx); err != nil {
					t.Fatal(err)
				}
				got := rec.take()
				for i := 0; i < pr.m; i++ {
					cs := got[i]
					initBatches := 1
					if algo == DSGD || algo == CHOCO || algo == DSGDM || algo == QGDSGDM {
						initBatches = 0
					}
					if s.calls[i] != r+initBatches {
						t.Fatalf("%s: node %d sampled %d batches after round %d", algo, i, s.calls[i], r)
					}
					for _, c := range cs {
						if c.worker < 0 || c.worker >= workers {
							t.Fatalf("%s: worker id %d with %d workers", algo, c.worker, workers)
						}
					}
					switch algo {
					case DSGD, CHOCO, DSGDM, QGDSGDM: // DSGDm: one local step by default
						if len(cs) != 1 || !equal32(cs[0].x, before[i]) {
							t.Fatalf("dsgd round %d node %d: %d calls, want one at x_t", r, i, len(cs))
						}
					case GNSD:
						if len(cs) != 1 || !equal32(cs[0].x, o.Node(i)) {
							t.Fatalf("gnsd round %d node %d: %d calls, want one at x_{t+1}", r, i, len(cs))
						}
					case GTSTORM:
						if len(cs) != 2 {
							t.Fatalf("gt-storm round %d node %d: %d calls, want 2", r, i, len(cs))
						}
						a, b := cs[0], cs[1]
						if !equal32(a.x, o.Node(i)) || !equal32(b.x, before[i]) {
							t.Fatalf("gt-storm round %d node %d: gradients not at x_t then x_{t−1}", r, i)
						}
						if a.batch != b.batch || len(a.rows) != len(b.rows) {
							t.Fatalf("gt-storm round %d node %d: two different batches", r, i)
						}
						for k := range a.rows {
							if a.rows[k] != b.rows[k] {
								t.Fatalf("gt-storm round %d node %d: batch rows differ: %v vs %v", r, i, a.rows, b.rows)
							}
						}
						for k := range a.noise {
							if a.noise[k] != b.noise[k] {
								t.Fatalf("gt-storm round %d node %d: batch noise differs", r, i)
							}
						}
						if r == 1 && !equal32(o.Direction(i), a.grad) {
							t.Fatalf("β_1 = 0 but v_1 of node %d is not the fresh gradient", i)
						}
					}
				}
			}
		}
	}
}

// TestGTStormBetaExtremes: with β ≡ 0 (huge ρ) v is the plain local
// stochastic gradient every round; with β ≡ 1 and exact gradients, v̄_t is
// the average of the current local gradients (gradient tracking).
func TestGTStormBetaExtremes(t *testing.T) {
	pr := newLS(5, 10, 30, 1, 8)
	mx := mustMixing(t, graph.MixMetropolis, mustGraph(graph.Star(5)))

	rec := &recorder{inner: lsOracle{pr}}
	s := newLSSampler(pr, 2, 1)
	s.sigma = 0.2
	o, err := New(Config{Algorithm: GTSTORM, Workers: 2, StepSizes: StepSizes{Eta0: 0.05, Rho: 1e9}}, mx, s, rec, make([]float32, pr.d))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	o.Init(ctx)
	for r := 1; r <= 5; r++ {
		rec.take()
		if err := o.Step(ctx); err != nil {
			t.Fatal(err)
		}
		if o.Beta() != 0 {
			t.Fatalf("β_%d = %v, want 0", r, o.Beta())
		}
		for i, cs := range rec.take() {
			if !equal32(o.Direction(i), cs[0].grad) {
				t.Fatalf("round %d node %d: β = 0 but v ≠ ∇f_i(x_t; ζ)", r, i)
			}
		}
	}

	s = newLSSampler(pr, 0, 1)
	s.exact = true
	o2, _ := lsRunWith(t, Config{Algorithm: GTSTORM, Workers: 2, StepSizes: StepSizes{Eta0: 0.05, Rho: 1e-300}}, mx, pr, s)
	g := make([]float32, pr.d)
	for r := 1; r <= 20; r++ {
		if err := o2.Step(ctx); err != nil {
			t.Fatal(err)
		}
		if o2.Beta() != 1 {
			t.Fatalf("β_%d = %v, want 1", r, o2.Beta())
		}
		vbar := meanOf(pr.m, pr.d, o2.Direction)
		gbar := make([]float64, pr.d)
		for i, b := range pr.full() {
			lsOracle{pr}.Grad(0, o2.Node(i), b, g)
			for k, v := range g {
				gbar[k] += float64(v) / float64(pr.m)
			}
		}
		for k := range vbar {
			if math.Abs(vbar[k]-gbar[k]) > 1e-4*(1+math.Abs(gbar[k])) {
				t.Fatalf("round %d: v̄[%d] = %v, mean local gradient %v", r, k, vbar[k], gbar[k])
			}
		}
	}
}

// lsRunWith builds and initialises an optimizer with the given sampler.
func lsRunWith(t *testing.T, cfg Config, mx *graph.Mixing, pr *lsProblem, s BatchSource) (*Optimizer, error) {
	t.Helper()
	o, err := New(cfg, mx, s, lsOracle{pr}, make([]float32, pr.d))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	if err := o.Init(ctx); err != nil {
		t.Fatal(err)
	}
	return o, nil
}
