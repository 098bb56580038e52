package decentral

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"gonum.org/v1/gonum/mat"
)

// lsProblem is distributed least squares: node i holds rows A_i (n × d) and
// targets b_i, f_i(x) = (1/2n)‖A_i x − b_i‖², and the global minimiser
// xStar of f = (1/m) Σ f_i is known from the normal equations.
type lsProblem struct {
	m, d, n int
	a       [][]float64 // a[i]: n × d row-major
	b       [][]float64
	xStar   []float64
}

// newLS draws a problem whose nodes have different local minimisers (spread
// hetero around a common point) and targets with noise 0.1.
func newLS(m, d, n int, hetero float64, seed uint64) *lsProblem {
	rng := rand.New(rand.NewPCG(seed, 1))
	pr := &lsProblem{m: m, d: d, n: n, a: make([][]float64, m), b: make([][]float64, m)}
	common := make([]float64, d)
	for k := range common {
		common[k] = rng.NormFloat64()
	}
	h := mat.NewSymDense(d, nil)
	c := mat.NewVecDense(d, nil)
	for i := 0; i < m; i++ {
		local := make([]float64, d)
		for k := range local {
			local[k] = common[k] + hetero*rng.NormFloat64()
		}
		pr.a[i] = make([]float64, n*d)
		pr.b[i] = make([]float64, n)
		for r := 0; r < n; r++ {
			row := pr.a[i][r*d : (r+1)*d]
			dot := 0.0
			for k := range row {
				row[k] = rng.NormFloat64()
				dot += row[k] * local[k]
			}
			pr.b[i][r] = dot + 0.1*rng.NormFloat64()
			for k := 0; k < d; k++ {
				c.SetVec(k, c.AtVec(k)+row[k]*pr.b[i][r]/float64(n*m))
				for l := k; l < d; l++ {
					h.SetSym(k, l, h.At(k, l)+row[k]*row[l]/float64(n*m))
				}
			}
		}
	}
	var chol mat.Cholesky
	if !chol.Factorize(h) {
		panic("least squares: normal matrix not positive definite")
	}
	var xs mat.VecDense
	if err := chol.SolveVecTo(&xs, c); err != nil {
		panic(err)
	}
	pr.xStar = xs.RawVector().Data
	return pr
}

// lsBatch is a minibatch of one node's rows.
type lsBatch struct {
	node  int
	rows  []int
	noise []float64 // added to the gradient: f_i(x; ζ) gains noiseᵀx
}

func (b *lsBatch) Len() int { return len(b.rows) }

// lsSampler draws batchSize rows with replacement from each node's own
// stream.
type lsSampler struct {
	pr    *lsProblem
	sigma float64 // standard deviation of the additive gradient noise
	exact bool    // every batch is all of the node's rows, in order
	rngs  []*rand.Rand
	bufs  []*lsBatch
	fulls [][]Batch // FullBatch's, per node: all its rows, no noise
	calls []int
}

func newLSSampler(pr *lsProblem, batch int, seed uint64) *lsSampler {
	s := &lsSampler{pr: pr, calls: make([]int, pr.m)}
	for i := 0; i < pr.m; i++ {
		s.rngs = append(s.rngs, rand.New(rand.NewPCG(seed, uint64(i)+100)))
		s.bufs = append(s.bufs, &lsBatch{node: i, rows: make([]int, batch), noise: make([]float64, pr.d)})
		full := &lsBatch{node: i, rows: make([]int, pr.n), noise: make([]float64, pr.d)}
		for r := range full.rows {
			full.rows[r] = r
		}
		s.fulls = append(s.fulls, []Batch{full})
	}
	return s
}

// FullBatch returns all of node's rows as one piece, whatever n: the exact
// ∇f_i, which makes lsSampler a FullBatcher for D-GET.
func (s *lsSampler) FullBatch(node, n int) []Batch { return s.fulls[node] }

func (s *lsSampler) Sample(node int) Batch {
	b := s.bufs[node]
	rng := s.rngs[node]
	if s.exact {
		b.rows = b.rows[:0]
		for r := 0; r < s.pr.n; r++ {
			b.rows = append(b.rows, r)
		}
	} else {
		for k := range b.rows {
			b.rows[k] = rng.IntN(s.pr.n)
		}
	}
	for k := range b.noise {
		b.noise[k] = s.sigma * rng.NormFloat64()
	}
	s.calls[node]++
	return b
}

// full returns one batch per node holding all its rows: the exact ∇f_i.
func (pr *lsProblem) full() []Batch {
	out := make([]Batch, pr.m)
	for i := range out {
		b := &lsBatch{node: i, rows: make([]int, pr.n)}
		for r := range b.rows {
			b.rows[r] = r
		}
		out[i] = b
	}
	return out
}

// lsOracle evaluates the least-squares gradient; it computes in float64.
type lsOracle struct{ pr *lsProblem }

func (o lsOracle) Grad(worker int, x []float32, bb Batch, grad []float32) (float32, error) {
	b, ok := bb.(*lsBatch)
	if !ok {
		return 0, fmt.Errorf("batch of type %T", bb)
	}
	d := o.pr.d
	if len(x) != d || len(grad) != d {
		return 0, fmt.Errorf("x has %d values, grad %d, want %d", len(x), len(grad), d)
	}
	var g [64]float64
	loss := 0.0
	a := o.pr.a[b.node]
	for _, r := range b.rows {
		row := a[r*d : (r+1)*d]
		res := -o.pr.b[b.node][r]
		for k, v := range row {
			res += v * float64(x[k])
		}
		loss += res * res / 2
		for k, v := range row {
			g[k] += res * v
		}
	}
	inv := 1 / float64(len(b.rows))
	for k := range grad {
		grad[k] = float32(g[k] * inv)
	}
	loss *= inv
	for k, v := range b.noise {
		grad[k] += float32(v)
		loss += v * float64(x[k])
	}
	return float32(loss), nil
}

// stationarity returns S(x) = ‖∇f(x̄)‖² + consensus error (SPEC §1).
func stationarity(t *testing.T, o *Optimizer, full []Batch) float64 {
	t.Helper()
	gn, _, err := o.GradNormSq(context.Background(), full)
	if err != nil {
		t.Fatal(err)
	}
	return gn + o.ConsensusError()
}

// mustGraph returns g, panicking on a generator error: for fixed inputs
// that cannot fail unless the generator is broken.
func mustGraph(g *graph.Graph, err error) *graph.Graph {
	if err != nil {
		panic(err)
	}
	return g
}

// mustMixing builds a mixing matrix or fails the test.
func mustMixing(t testing.TB, kind string, g *graph.Graph) *graph.Mixing {
	t.Helper()
	mx, err := graph.NewMixing(kind, g)
	if err != nil {
		t.Fatal(err)
	}
	return mx
}

// lsRun builds and initialises an optimizer on pr.
func lsRun(t testing.TB, cfg Config, mx *graph.Mixing, pr *lsProblem, batch int, seed uint64) (*Optimizer, *lsSampler) {
	t.Helper()
	s := newLSSampler(pr, batch, seed)
	o, err := New(cfg, mx, s, lsOracle{pr}, make([]float32, pr.d))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.Close() })
	if err := o.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	return o, s
}

// distance returns ‖x̄ − xStar‖.
func distance(o *Optimizer, xStar []float64) float64 {
	xbar := make([]float32, o.Dim())
	o.Mean(xbar)
	s := 0.0
	for k, v := range xbar {
		s += (float64(v) - xStar[k]) * (float64(v) - xStar[k])
	}
	return math.Sqrt(s)
}

// sameSlabs reports whether a and b hold the same slabs, bit for bit.
func sameSlabs(a, b *Snapshot) bool {
	if len(a.Slabs) != len(b.Slabs) {
		return false
	}
	for k := range a.Slabs {
		if a.Slabs[k].Name != b.Slabs[k].Name || !equal32(a.Slabs[k].Data, b.Slabs[k].Data) {
			return false
		}
	}
	return true
}

// staticOnly reports whether algo needs the same W every round (CHOCO), so
// that tests over time-varying topologies leave it out.
func staticOnly(algo string) bool {
	d, err := describe(algo)
	if err != nil {
		panic(err)
	}
	return d.StaticGraph
}

// knobbed returns the registered method algo with knobs k, as a run's
// settings make it (D-GET's period, CHOCO's compressor); the other methods
// ignore the knobs that are not theirs.
func knobbed(t testing.TB, algo string, k Knobs) Method {
	t.Helper()
	m, err := NewMethod(algo, k)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// resumedAt runs cfg for total rounds from the start, taking a snapshot
// after cut rounds, then restores the snapshot into a fresh optimizer whose
// sampler is replayed to where the snapshot was taken and runs it to total:
// it returns both optimizers and the snapshot, for a test to compare.
func resumedAt(t *testing.T, cfg Config, mx *graph.Mixing, pr *lsProblem, newSampler func() *lsSampler, cut, total int) (straight, resumed *Optimizer, snap *Snapshot) {
	t.Helper()
	first := newSampler()
	straight, _ = lsRunWith(t, cfg, mx, pr, first)
	for r := 0; r < total; r++ {
		if r == cut {
			snap, _ = straight.State()
		}
		if err := straight.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	second := newSampler()
	for i := 0; i < pr.m; i++ { // one batch a round after the snapshot
		for range first.calls[i] - (total - cut) {
			second.Sample(i)
		}
	}
	resumed, err := New(cfg, mx, second, lsOracle{pr}, make([]float32, pr.d))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resumed.Close() })
	if err := resumed.Restore(snap); err != nil {
		t.Fatal(err)
	}
	for resumed.Round() < total {
		if err := resumed.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return straight, resumed, snap
}
