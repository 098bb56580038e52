package decentral

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

var ctx = context.Background()

// varSampler gives node i batches of 1 + i%3 rows.
type varSampler struct{ *lsSampler }

func (s varSampler) Sample(node int) Batch {
	b := s.lsSampler.Sample(node).(*lsBatch)
	b.rows = b.rows[:1+node%3]
	return b
}

func TestCounters(t *testing.T) {
	pr := newLS(6, 10, 20, 1, 2)
	g := mustGraph(graph.Star(6)) // degrees 5, 1, 1, 1, 1, 1
	mx := mustMixing(t, graph.MixLaplacian, g)
	const rounds = 7
	batchSum := int64(0)
	for i := 0; i < pr.m; i++ {
		batchSum += int64(1 + i%3)
	}
	p := int64(pr.d)
	for _, tc := range []struct {
		algo         string
		evalsPerNode int64 // as a function of T below
		initEvals    int64
		floatsSent   int64 // per neighbour per round
		state        int
	}{
		{DSGD, 1, 0, p, 0},
		{GNSD, 1, 1, 2 * p, 2 * pr.d},
		{GTSTORM, 2, 1, 2 * p, 2 * pr.d},
	} {
		s := varSampler{newLSSampler(pr, 3, 1)}
		o, _ := lsRunWith(t, Config{Algorithm: tc.algo, Workers: 2, StepSizes: StepSizes{Eta0: 0.05}}, mx, pr, s)
		for r := 0; r < rounds; r++ {
			if err := o.Step(ctx); err != nil {
				t.Fatal(err)
			}
		}
		c := o.Counters()
		evals := tc.initEvals + tc.evalsPerNode*rounds // per node
		if c.Samples != batchSum*evals {
			t.Errorf("%s: %d samples, want Σ_i B_i × %d = %d", tc.algo, c.Samples, evals, batchSum*evals)
		}
		if c.GradEvals != int64(pr.m)*evals {
			t.Errorf("%s: %d gradient evaluations, want %d", tc.algo, c.GradEvals, int64(pr.m)*evals)
		}
		if c.Rounds != rounds || c.StateFloats != tc.state {
			t.Errorf("%s: %d rounds, %d state floats; want %d, %d", tc.algo, c.Rounds, c.StateFloats, rounds, tc.state)
		}
		for i, b := range c.BytesSent {
			if want := rounds * tc.floatsSent * 4 * int64(g.Degree(i)); b != want {
				t.Errorf("%s: node %d sent %d bytes, want %d", tc.algo, i, b, want)
			}
		}
		var total int64
		for _, b := range c.BytesSent {
			total += b
		}
		if c.MaxBytesSent() != rounds*tc.floatsSent*4*5 || total != rounds*tc.floatsSent*4*10 {
			t.Errorf("%s: max %d, total %d bytes", tc.algo, c.MaxBytesSent(), total)
		}
	}

	// Uniform batches: GT-STORM samples = m·B·(1 + 2T).
	o, _ := lsRun(t, Config{Algorithm: GTSTORM, StepSizes: StepSizes{Eta0: 0.05}}, mx, pr, 4, 1)
	for r := 0; r < rounds; r++ {
		o.Step(ctx)
	}
	if got, want := o.Counters().Samples, int64(pr.m*4*(1+2*rounds)); got != want {
		t.Errorf("gt-storm: %d samples, want m·B·(1+2T) = %d", got, want)
	}
}

// nilSampler hands node nil a nil Batch from its draw number after on, and
// lsSampler's batches before.
type nilSampler struct {
	*lsSampler
	node, after int
}

func (s nilSampler) Sample(node int) Batch {
	if node == s.node && s.calls[node] >= s.after {
		return nil
	}
	return s.lsSampler.Sample(node)
}

// TestNilBatch: a batch source that returns a nil Batch fails Init or the
// round with an error naming the node — through Grad and through GradPair —
// instead of panicking.
func TestNilBatch(t *testing.T) {
	pr := newLS(3, 10, 20, 1, 2)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Ring(3)))
	for _, tc := range []struct {
		algo  string
		or    Oracle
		after int // draws before the nil batch: 0 fails GNSD's and GT-STORM's Init
	}{
		{GNSD, lsOracle{pr}, 0},
		{GTSTORM, lsOracle{pr}, 0},
		{DSGD, lsOracle{pr}, 1},
		{GNSD, lsOracle{pr}, 1},
		{GTSTORM, lsOracle{pr}, 1},
		{GTSTORM, pairGrader{lsOracle{pr}, new(atomic.Int64)}, 1},
	} {
		o, err := New(Config{Algorithm: tc.algo, Workers: 2, StepSizes: StepSizes{Eta0: 0.05}}, mx, nilSampler{newLSSampler(pr, 5, 1), 1, tc.after}, tc.or, make([]float32, pr.d))
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		err = o.Init(ctx)
		for r := 0; r < 2 && err == nil; r++ {
			err = o.Step(ctx)
		}
		if err == nil || !strings.Contains(err.Error(), "node 1: ") || !strings.Contains(err.Error(), "nil Batch") || strings.Contains(err.Error(), "panic") {
			t.Errorf("%s (%T, nil from draw %d): error %v, want one naming node 1 and the nil Batch", tc.algo, tc.or, tc.after, err)
		}
	}
}

// TestWorkerCountInvariance: the same seeds give bit-identical states with
// 1, 3 and 4 workers.
func TestWorkerCountInvariance(t *testing.T) {
	pr := newLS(7, 10, 30, 1, 4)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.ErdosRenyi(7, 0.5, 4)))
	for _, algo := range Algorithms() {
		var ref *Snapshot
		for _, workers := range []int{1, 4, 3} {
			s := newLSSampler(pr, 3, 77)
			s.sigma = 0.4
			o, _ := lsRunWith(t, Config{Algorithm: algo, Workers: workers, StepSizes: StepSizes{Eta0: 0.05}}, mx, pr, s)
			for r := 0; r < 40; r++ {
				if err := o.Step(ctx); err != nil {
					t.Fatal(err)
				}
			}
			st, _ := o.State()
			if ref == nil {
				ref = st
				continue
			}
			if !sameSlabs(st, ref) {
				t.Errorf("%s: state with %d workers differs from 1 worker", algo, workers)
			}
			for i := range st.Loss {
				if st.Loss[i] != ref.Loss[i] {
					t.Errorf("%s: loss of node %d differs with %d workers", algo, i, workers)
				}
			}
		}
	}
}

// TestResume: a run checkpointed after 10 rounds and resumed in a fresh
// optimizer equals the uninterrupted run bit for bit.
func TestResume(t *testing.T) {
	pr := newLS(5, 10, 30, 1, 6)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Torus(5)))
	for _, algo := range Algorithms() {
		cfg := Config{Algorithm: algo, Workers: 2, StepSizes: StepSizes{Eta0: 0.05, Rho: 7}}
		newSampler := func() *lsSampler { s := newLSSampler(pr, 3, 5); s.sigma = 0.3; return s }
		o, o2, _ := resumedAt(t, cfg, mx, pr, newSampler, 10, 20)
		want, _ := o.State()
		got, _ := o2.State()
		if !sameSlabs(got, want) {
			t.Errorf("%s: resumed state differs from the uninterrupted run", algo)
		}
		if gc, wc := o2.Counters(), o.Counters(); gc.Samples != wc.Samples || gc.MaxBytesSent() != wc.MaxBytesSent() || gc.Rounds != wc.Rounds {
			t.Errorf("%s: resumed counters %+v, want %+v", algo, gc, wc)
		}
	}
}

func TestRestoreErrors(t *testing.T) {
	pr := newLS(4, 10, 20, 1, 6)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Ring(4)))
	o, _ := lsRun(t, Config{Algorithm: GTSTORM, StepSizes: StepSizes{Eta0: 0.05}}, mx, pr, 2, 1)
	good, _ := o.State()
	for _, tc := range []struct {
		name string
		edit func(s *Snapshot)
		want string
	}{
		{"algorithm", func(s *Snapshot) { s.Algorithm = DSGD }, `snapshot of "dsgd"`},
		{"schedule", func(s *Snapshot) { s.Schedule.Eta0 = 0.1 }, "schedule"},
		{"nodes", func(s *Snapshot) { s.Nodes = 5 }, "5 nodes"},
		{"x length", func(s *Snapshot) { s.Slabs[0].Data = s.Slabs[0].Data[:3] }, `slab "x" has 3 values`},
		{"v missing", func(s *Snapshot) { s.Slabs = s.Slabs[:1] }, `slabs ["x"], want ["x" "v"]`},
		{"g extra", func(s *Snapshot) { s.Slabs = append(s.Slabs, Slab{"g", make([]float32, 40)}) }, `slabs ["x" "v" "g"], want ["x" "v"]`},
		{"NaN", func(s *Snapshot) { s.Slabs[0].Data[7] = float32(math.NaN()) }, `slab "x" is not finite`},
		{"counters", func(s *Snapshot) { s.Samples = nil }, "Samples has 0 values"},
		{"round", func(s *Snapshot) { s.Round = -1 }, "round -1"},
	} {
		s := *good
		s.Slabs = slices.Clone(good.Slabs)
		s.Slabs[0].Data = slices.Clone(good.Slabs[0].Data)
		tc.edit(&s)
		if err := o.Restore(&s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if err := o.Restore(nil); err == nil {
		t.Error("Restore(nil) accepted")
	}
}

func TestStepBeforeInitAndCancel(t *testing.T) {
	pr := newLS(3, 10, 20, 1, 6)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Ring(3)))
	o, err := New(Config{Algorithm: DSGD, StepSizes: StepSizes{Eta0: 0.05}}, mx, newLSSampler(pr, 2, 1), lsOracle{pr}, make([]float32, pr.d))
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if err := o.Step(ctx); err == nil || !strings.Contains(err.Error(), "before Init") {
		t.Errorf("Step before Init: %v", err)
	}
	if _, err := o.State(); err == nil {
		t.Error("State before Init accepted")
	}
	o.Init(ctx)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := o.Step(cctx); !errors.Is(err, context.Canceled) || o.Round() != 0 {
		t.Errorf("cancelled Step: %v, round %d", err, o.Round())
	}
	if err := o.Init(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Init: %v", err)
	}
}

// poisonOracle returns a NaN gradient for one node from one call on, an
// error for another, or panics.
type poisonOracle struct {
	lsOracle
	node, after int
	mode        string
	mu          sync.Mutex
	seen        int
}

func (o *poisonOracle) Grad(w int, x []float32, b Batch, g []float32) (float32, error) {
	loss, err := o.lsOracle.Grad(w, x, b, g)
	if b.(*lsBatch).node != o.node {
		return loss, err
	}
	o.mu.Lock()
	o.seen++
	bad := o.seen > o.after
	o.mu.Unlock()
	if bad {
		switch o.mode {
		case "nan":
			g[3] = float32(math.NaN())
		case "inf":
			g[0] = float32(math.Inf(1))
		case "error":
			return 0, errors.New("disk on fire")
		case "panic":
			panic("oracle bug")
		}
	}
	return loss, err
}

func TestDivergenceAndErrors(t *testing.T) {
	pr := newLS(5, 10, 20, 1, 6)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Ring(5)))
	for _, tc := range []struct {
		algo, mode string
		after      int // evaluations of node 2 before it fails
		round      string
		want       string
		diverged   bool
	}{
		{DSGD, "nan", 2, "round 3: node 2", "x has a NaN", true},
		{GNSD, "inf", 3, "round 3: node 2", "y has a NaN or Inf", true},
		{GTSTORM, "nan", 5, "round 3: node 2", "v has a NaN", true},
		{GTSTORM, "error", 5, "round 3: node 2", "disk on fire", false},
		{GNSD, "panic", 1, "round 1: node 2", "panic: oracle bug", false},
	} {
		bad := &poisonOracle{lsOracle: lsOracle{pr}, node: 2, after: tc.after, mode: tc.mode}
		o, err := New(Config{Algorithm: tc.algo, Workers: 3, StepSizes: StepSizes{Eta0: 0.05}}, mx, newLSSampler(pr, 2, 1), bad, make([]float32, pr.d))
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		if err := o.Init(ctx); err != nil {
			t.Fatal(err)
		}
		var stepErr error
		var before *Snapshot
		for r := 0; r < 6 && stepErr == nil; r++ {
			before, _ = o.State()
			stepErr = o.Step(ctx)
		}
		if stepErr == nil || !strings.Contains(stepErr.Error(), tc.round) || !strings.Contains(stepErr.Error(), tc.want) ||
			errors.Is(stepErr, ErrDiverged) != tc.diverged {
			t.Errorf("%s %s: error %v, want %q and %q (diverged %v)", tc.algo, tc.mode, stepErr, tc.round, tc.want, tc.diverged)
			continue
		}
		after, _ := o.State()
		if after.Round != before.Round || !sameSlabs(after, before) {
			t.Errorf("%s %s: state changed by the failed round", tc.algo, tc.mode)
		}
		if err := o.Step(ctx); err != stepErr {
			t.Errorf("%s %s: next Step returned %v, want the same error", tc.algo, tc.mode, err)
		}
	}
}

func TestNewErrors(t *testing.T) {
	pr := newLS(3, 10, 20, 1, 6)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Ring(3)))
	s, or := newLSSampler(pr, 2, 1), lsOracle{pr}
	x0 := make([]float32, pr.d)
	for _, tc := range []struct {
		name string
		cfg  Config
		mx   *graph.Mixing
		s    BatchSource
		o    Oracle
		x0   []float32
		want string
	}{
		{"algorithm", Config{Algorithm: "sgd", StepSizes: StepSizes{Eta0: 0.1}}, mx, s, or, x0, `algorithm "sgd"`},
		{"eta0", Config{Algorithm: DSGD, StepSizes: StepSizes{Eta0: -1}}, mx, s, or, x0, "eta0 = -1"},
		{"rho", Config{Algorithm: GTSTORM, StepSizes: StepSizes{Eta0: 0.1, Rho: -2}}, mx, s, or, x0, "rho = -2"},
		{"mixing", Config{Algorithm: DSGD, StepSizes: StepSizes{Eta0: 0.1}}, nil, s, or, x0, "no mixing"},
		{"batch source", Config{Algorithm: DSGD, StepSizes: StepSizes{Eta0: 0.1}}, mx, nil, or, x0, "batch source and oracle"},
		{"x0", Config{Algorithm: DSGD, StepSizes: StepSizes{Eta0: 0.1}}, mx, s, or, nil, "empty"},
		{"x0 NaN", Config{Algorithm: DSGD, StepSizes: StepSizes{Eta0: 0.1}}, mx, s, or, []float32{float32(math.NaN())}, "not finite"},
		{"workers", Config{Algorithm: DSGD, Workers: -1, StepSizes: StepSizes{Eta0: 0.1}}, mx, s, or, x0, "-1 workers"},
	} {
		if _, err := New(tc.cfg, tc.mx, tc.s, tc.o, tc.x0); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestMeasures checks x̄, the consensus error and the global gradient norm
// against direct float64 computations.
func TestMeasures(t *testing.T) {
	pr := newLS(4, 10, 20, 1, 6)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Ring(4)))
	o, _ := lsRun(t, Config{Algorithm: GNSD, Workers: 2, StepSizes: StepSizes{Eta0: 0.1}}, mx, pr, 3, 1)
	for r := 0; r < 5; r++ {
		o.Step(ctx)
	}
	xbar := meanOf(pr.m, pr.d, o.Node)
	got := make([]float32, pr.d)
	o.Mean(got)
	cons := 0.0
	for i := 0; i < pr.m; i++ {
		for k, v := range o.Node(i) {
			cons += (float64(v) - xbar[k]) * (float64(v) - xbar[k]) / float64(pr.m)
		}
	}
	for k := range got {
		if got[k] != float32(xbar[k]) {
			t.Fatalf("Mean[%d] = %v, want %v", k, got[k], xbar[k])
		}
	}
	if c := o.ConsensusError(); math.Abs(c-cons) > 1e-12*(1+cons) || c <= 0 {
		t.Errorf("consensus error %v, want %v", c, cons)
	}
	// ∇f(x̄) = (1/m) Σ_i A_iᵀ(A_i x̄ − b_i)/n, in float64.
	grad := make([]float64, pr.d)
	wantLoss := 0.0
	for i := 0; i < pr.m; i++ {
		for r := 0; r < pr.n; r++ {
			row := pr.a[i][r*pr.d : (r+1)*pr.d]
			res := -pr.b[i][r]
			for k, v := range row {
				res += v * float64(got[k])
			}
			wantLoss += res * res / 2 / float64(pr.n*pr.m)
			for k, v := range row {
				grad[k] += res * v / float64(pr.n*pr.m)
			}
		}
	}
	want := 0.0
	for _, v := range grad {
		want += v * v
	}
	gn, loss, err := o.GradNormSq(ctx, pr.full())
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(gn-want) > 1e-5*want || math.Abs(loss-wantLoss) > 1e-5*wantLoss {
		t.Errorf("GradNormSq = %v, loss %v; want %v, %v", gn, loss, want, wantLoss)
	}
	// One global batch: node 1's rows only.
	one := pr.full()[1:2]
	g1, _, err := o.GradNormSq(ctx, one)
	if err != nil || g1 <= 0 || g1 == gn {
		t.Errorf("single batch: %v, %v", g1, err)
	}
	if _, _, err := o.GradNormSq(ctx, make([]Batch, 5)); err == nil {
		t.Error("5 batches for 4 nodes accepted")
	}
	// The state is unchanged by measuring.
	before, _ := o.State()
	o.GradNormSq(ctx, pr.full())
	o.ConsensusError()
	after, _ := o.State()
	if !sameSlabs(before, after) {
		t.Error("measuring changed the state")
	}
}

// TestStepAllocations: a steady-state round allocates nothing.
func TestStepAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	pr := newLS(6, 10, 20, 1, 6)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.ErdosRenyi(6, 0.6, 1)))
	for _, algo := range Algorithms() {
		for _, workers := range []int{1, 3} {
			o, _ := lsRun(t, Config{Algorithm: algo, Workers: workers, StepSizes: StepSizes{Eta0: 0.01}}, mx, pr, 2, 1)
			o.Step(ctx)
			if a := testing.AllocsPerRun(20, func() { o.Step(ctx) }); a != 0 {
				t.Errorf("%s with %d workers: %v allocations per round", algo, workers, a)
			}
		}
	}
}

// TestCloseStopsWorkers: Step starts Workers()−1 goroutines, Close ends them,
// and a later Step starts them again.
func TestCloseStopsWorkers(t *testing.T) {
	pr := newLS(6, 10, 20, 1, 6)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Ring(6)))
	o, err := New(Config{Algorithm: GTSTORM, Workers: 9, StepSizes: StepSizes{Eta0: 0.05}}, mx, newLSSampler(pr, 2, 1), lsOracle{pr}, make([]float32, pr.d))
	if err != nil {
		t.Fatal(err)
	}
	if o.Workers() != 6 {
		t.Errorf("Workers() = %d with 9 asked for 6 nodes, want 6", o.Workers())
	}
	// running returns the goroutines of o's team running their loop, and
	// the team: nil when o has none.
	running := func() (int, *team) {
		if o.team == nil {
			return 0, nil
		}
		return int(o.team.live.Load()), o.team
	}
	// ended waits, up to a deadline, for every goroutine of tm to end, and
	// returns how many still run.
	ended := func(tm *team) int {
		n := int(tm.live.Load())
		for end := time.Now().Add(10 * time.Second); n != 0 && time.Now().Before(end); n = int(tm.live.Load()) {
			time.Sleep(time.Millisecond)
		}
		return n
	}
	if err := o.Init(ctx); err != nil {
		t.Fatal(err)
	}
	// Init ran a phase on all 6 workers: the 5 besides the caller's have
	// entered their loop before it returned.
	n, first := running()
	if first == nil || n != 5 {
		t.Fatalf("%d worker goroutines after Init (team %v), want 5", n, first != nil)
	}
	o.Close()
	if o.team != nil {
		t.Error("the optimizer keeps its team after Close")
	}
	if n := ended(first); n != 0 {
		t.Errorf("%d worker goroutines still run 10 s after Close, want 0", n)
	}
	if err := o.Step(ctx); err != nil {
		t.Fatal(err)
	}
	n, second := running()
	if second == nil || second == first || n != 5 {
		t.Fatalf("%d worker goroutines of a new team (%v) after Step, want 5", n, second != nil && second != first)
	}
	o.Close()
	if n := ended(second); n != 0 {
		t.Errorf("%d worker goroutines still run 10 s after the second Close, want 0", n)
	}
}

// pairGrader is lsOracle with GradPair, counting its calls.
type pairGrader struct {
	lsOracle
	calls *atomic.Int64
}

func (o pairGrader) GradPair(w int, xNew, xOld []float32, b Batch, gNew, gOld []float32) (float32, error) {
	o.calls.Add(1)
	loss, err := o.Grad(w, xNew, b, gNew)
	if err != nil {
		return 0, err
	}
	_, err = o.Grad(w, xOld, b, gOld)
	return loss, err
}

// TestPairGrader: GT-STORM uses GradPair once per node and round when the
// oracle has it, with the same trajectory and counters as two Grad calls.
func TestPairGrader(t *testing.T) {
	const m, rounds = 5, 12
	pr := newLS(m, 6, 20, 1, 3)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Ring(m)))
	cfg := Config{Algorithm: GTSTORM, Workers: 2, StepSizes: StepSizes{Eta0: 0.05, Rho: 10}}
	run := func(or Oracle) *Optimizer {
		s := newLSSampler(pr, 3, 9)
		o, err := New(cfg, mx, s, or, make([]float32, pr.d))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { o.Close() })
		if err := o.Init(ctx); err != nil {
			t.Fatal(err)
		}
		for range rounds {
			if err := o.Step(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return o
	}
	var calls atomic.Int64
	plain, paired := run(lsOracle{pr}), run(pairGrader{lsOracle{pr}, &calls})
	if calls.Load() != m*rounds {
		t.Errorf("GradPair called %d times, want %d (once per node and round)", calls.Load(), m*rounds)
	}
	a, _ := plain.State()
	b, _ := paired.State()
	if !sameSlabs(a, b) {
		t.Error("the trajectory with GradPair differs from two Grad calls")
	}
	if ca, cb := plain.Counters(), paired.Counters(); ca.Samples != cb.Samples || ca.GradEvals != cb.GradEvals {
		t.Errorf("counters with GradPair %+v, without %+v", cb, ca)
	}
}
