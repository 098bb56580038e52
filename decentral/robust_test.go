package decentral_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/decentral/graph"
	"github.com/gtstorm/gtstorm/decentral/robust"
)

// The Byzantine runs: package robust's attacks and rules through the
// optimizer's hooks (Config.Byzantine, Mixer and Exchange).

var ctx = context.Background()

// robustConfig returns cfg with s applied (robust.Apply) on mx, or fails.
func robustConfig(t testing.TB, cfg decentral.Config, mx *graph.Mixing, s robust.Setting) decentral.Config {
	t.Helper()
	cfg, err := robust.Apply(cfg, mx, s)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestAttackMessages checks each attack's message on K4 by hand: node 0
// lies to node 1, whose honest neighbours 2 and 3 hold (2, 0) and (4, 6);
// W has 1/2 on the diagonal and 1/6 elsewhere.
func TestAttackMessages(t *testing.T) {
	pr := decentral.NewLS(4, 2, 4, 0, 1)
	mx := decentral.MustMixing(t, graph.MixLaplacian, decentral.MustGraph(graph.Complete(4)))
	xs := [][]float32{{1, 2}, {0, 0}, {2, 0}, {4, 6}}
	for _, tc := range []struct {
		attack string
		want   []float32 // node 1's mix: 1/6 (m_01 + (2, 0) + (4, 6))
	}{
		{"signflip:2", []float32{4.0 / 6, 2.0 / 6}}, // m = (−2, −4)
		{"ipm:0.5", []float32{0.75, 0.75}},          // μ = (3, 3), m = (−1.5, −1.5)
		{"alie:1", []float32{8.0 / 6, 1}},           // σ = (1, 3), m = (2, 0)
		{"dissensus:1", []float32{0, 0}},            // cancels node 1's step
		{"dissensus:2", []float32{-1, -1}},          // reverses it
		{"gauss:0", []float32{7.0 / 6, 8.0 / 6}},    // honest
	} {
		a, _ := robust.ParseAttack(tc.attack)
		cfg := robustConfig(t, decentral.Config{Algorithm: decentral.DSGD, StepSizes: decentral.StepSizes{Eta0: 0.1}}, mx, robust.Setting{Byzantine: []int{0}, Attack: a})
		o := decentral.LSRun(t, cfg, mx, pr, 1, 1)
		got := decentral.MixedRows(t, o, xs)
		if !near(got[1], tc.want, 1e-6) {
			t.Errorf("%s: node 1 mixes %v, want %v", tc.attack, got[1], tc.want)
		}
		if !slices.Equal(o.Honest(), []int{1, 2, 3}) || !slices.Equal(o.Byzantine(), []int{0}) {
			t.Errorf("honest %v, Byzantine %v", o.Honest(), o.Byzantine())
		}
		xbar := make([]float32, 2)
		o.Mean(xbar)
		if !slices.Equal(xbar, []float32{2, 2}) {
			t.Errorf("honest mean %v, want (2, 2)", xbar)
		}
	}
}

// TestGaussNoise: each neighbour gets its own noise, and the noise is the
// same in a second run.
func TestGaussNoise(t *testing.T) {
	pr := decentral.NewLS(4, 50, 20, 0, 1)
	mx := decentral.MustMixing(t, graph.MixLaplacian, decentral.MustGraph(graph.Complete(4)))
	xs := make([][]float32, 4)
	for i := range xs {
		xs[i] = make([]float32, 50)
	}
	run := func() [][]float32 {
		cfg := robustConfig(t, decentral.Config{Algorithm: decentral.DSGD, Seed: 3, StepSizes: decentral.StepSizes{Eta0: 0.1}}, mx,
			robust.Setting{Byzantine: []int{0}, Attack: robust.Attack{Name: robust.AttackGauss, Param: 6}})
		o := decentral.LSRun(t, cfg, mx, pr, 1, 1)
		return decentral.MixedRows(t, o, xs)
	}
	a, b := run(), run()
	for i := range a {
		if !slices.Equal(a[i], b[i]) {
			t.Fatalf("node %d: the noise differs between runs", i)
		}
	}
	if slices.Equal(a[1], a[2]) {
		t.Error("nodes 1 and 2 got the same noise")
	}
	// Node 1 gets 1/6 of N(0, 36) per coordinate: a standard deviation of 1.
	s := 0.0
	for _, v := range a[1] {
		s += float64(v) * float64(v)
	}
	if sd := math.Sqrt(s / 50); sd < 0.6 || sd > 1.5 {
		t.Errorf("noise standard deviation %.3f at node 1, want about 1", sd)
	}
}

// TestRobustRunInvariance: a run with lies and a robust rule gives the same
// bits whatever its workers, and clip:inf without lies is plain gossip.
func TestRobustRunInvariance(t *testing.T) {
	pr := decentral.NewLS(8, 10, 30, 1, 4)
	mx := decentral.MustMixing(t, graph.MixLaplacian, decentral.MustGraph(graph.ErdosRenyi(8, 0.6, 4)))
	for _, algo := range []string{decentral.DSGD, decentral.GNSD, decentral.GTSTORM, decentral.D2, decentral.DGET} {
		state := func(s robust.Setting, workers int) *decentral.Snapshot {
			smp := decentral.NewLSSampler(pr, 3, 77)
			cfg := robustConfig(t, decentral.Config{Algorithm: algo, Workers: workers, Seed: 9, StepSizes: decentral.StepSizes{Eta0: 0.05}}, mx, s)
			o, _ := decentral.LSRunWith(t, cfg, mx, pr, smp)
			for range 15 {
				if err := o.Step(ctx); err != nil {
					t.Fatal(err)
				}
			}
			st, _ := o.State()
			return st
		}
		plain := state(robust.Setting{}, 1)
		if st := state(robust.Setting{Aggregate: robust.Clip{Tau: math.Inf(1)}}, 3); !decentral.SameSlabs(st, plain) {
			t.Errorf("%s: clip:inf differs from plain gossip", algo)
		}
		for _, attack := range []robust.Attack{{Name: robust.AttackGauss, Param: 0.5}, {Name: robust.AttackALIE, Param: math.NaN()}} {
			for _, agg := range []robust.Aggregator{robust.Mean{}, robust.Clip{}, robust.Trim{B: 1}, robust.Median{}} {
				s := robust.Setting{Byzantine: []int{2, 5}, Attack: attack, Aggregate: agg}
				if a, b := state(s, 1), state(s, 3); !decentral.SameSlabs(a, b) {
					t.Errorf("%s, %s, %s: 3 workers differ from 1", algo, attack, agg)
				}
			}
		}
	}
}

// TestByzantineConfigErrors: robust.Apply and New refuse what a run cannot
// do.
func TestByzantineConfigErrors(t *testing.T) {
	pr := decentral.NewLS(4, 3, 4, 0, 1)
	mx := decentral.MustMixing(t, graph.MixLaplacian, decentral.MustGraph(graph.Complete(4)))
	flip := robust.Attack{Name: robust.AttackSignFlip, Param: 1}
	build := func(algo string, s robust.Setting) error {
		cfg, err := robust.Apply(decentral.Config{Algorithm: algo, StepSizes: decentral.StepSizes{Eta0: 0.1}}, mx, s)
		if err != nil {
			return err
		}
		_, err = decentral.New(cfg, mx, decentral.NewLSSampler(pr, 1, 1), decentral.LSOracle(pr), make([]float32, 3))
		return err
	}
	for _, tc := range []struct {
		algo string
		s    robust.Setting
		want string
	}{
		{decentral.DSGD, robust.Setting{Attack: flip}, "no Byzantine nodes"},
		{decentral.DSGD, robust.Setting{Byzantine: []int{1}}, "no attack"},
		{decentral.DSGD, robust.Setting{Byzantine: []int{0, 1, 2, 3}, Attack: flip}, "want fewer"},
		{decentral.DSGD, robust.Setting{Byzantine: []int{2, 1}, Attack: flip}, "increasing"},
		{decentral.DSGD, robust.Setting{Byzantine: []int{1}, Attack: robust.Attack{Name: robust.AttackGauss, Param: -1}}, "≥ 0"},
		{decentral.CHOCO, robust.Setting{Byzantine: []int{1}, Attack: flip}, "uncompressed"},
		{decentral.CHOCO, robust.Setting{Aggregate: robust.Median{}}, "uncompressed"},
	} {
		if err := build(tc.algo, tc.s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %+v: %v, want an error with %q", tc.algo, tc.s, err, tc.want)
		}
	}
	// labelflip lies in the data: CHOCO may run with it.
	if err := build(decentral.CHOCO, robust.Setting{Byzantine: []int{1}, Attack: robust.Attack{Name: robust.AttackLabelFlip}}); err != nil {
		t.Errorf("CHOCO with labelflip: %v", err)
	}
	// trim:1 on a star, whose leaves have one neighbour.
	star := decentral.MustMixing(t, graph.MixLaplacian, decentral.MustGraph(graph.Star(5)))
	cfg := robustConfig(t, decentral.Config{Algorithm: decentral.DSGD, StepSizes: decentral.StepSizes{Eta0: 0.1}}, star, robust.Setting{Aggregate: robust.Trim{B: 1}})
	if _, err := decentral.New(cfg, star, decentral.NewLSSampler(decentral.NewLS(5, 3, 4, 0, 1), 1, 1), decentral.LSOracle(decentral.NewLS(5, 3, 4, 0, 1)), make([]float32, 3)); err == nil {
		t.Error("New took trim:1 on a star")
	}
}

// TestRobustStepAllocations: a steady round with lies and a robust rule
// allocates nothing.
func TestRobustStepAllocations(t *testing.T) {
	if decentral.RaceEnabled {
		t.Skip("the race detector allocates")
	}
	pr := decentral.NewLS(6, 10, 20, 1, 6)
	mx := decentral.MustMixing(t, graph.MixLaplacian, decentral.MustGraph(graph.Complete(6)))
	for _, attack := range []robust.Attack{{Name: robust.AttackGauss, Param: 1}, {Name: robust.AttackDissensus, Param: 1}} {
		for _, agg := range []robust.Aggregator{robust.Mean{}, robust.Clip{}, robust.Trim{B: 1}, robust.Median{}} {
			cfg := robustConfig(t, decentral.Config{Algorithm: decentral.GTSTORM, Workers: 2, StepSizes: decentral.StepSizes{Eta0: 0.01}}, mx,
				robust.Setting{Byzantine: []int{1}, Attack: attack, Aggregate: agg})
			o := decentral.LSRun(t, cfg, mx, pr, 2, 1)
			o.Step(ctx)
			if a := testing.AllocsPerRun(20, func() { o.Step(ctx) }); a != 0 {
				t.Errorf("%s, %s: %v allocations per round", attack, agg, a)
			}
		}
	}
}

// TestByzantineCollude: Byzantine nodes tell each other the truth. On K4
// with nodes 0 and 1 Byzantine under signflip:1, node 1 mixes the honest
// vectors of all three neighbours, while honest node 2 gets the flipped
// vectors of both.
func TestByzantineCollude(t *testing.T) {
	pr := decentral.NewLS(4, 2, 4, 0, 1)
	mx := decentral.MustMixing(t, graph.MixLaplacian, decentral.MustGraph(graph.Complete(4)))
	xs := [][]float32{{1, 2}, {3, 0}, {2, 0}, {4, 6}}
	a, _ := robust.ParseAttack("signflip:1")
	cfg := robustConfig(t, decentral.Config{Algorithm: decentral.DSGD, StepSizes: decentral.StepSizes{Eta0: 0.1}}, mx, robust.Setting{Byzantine: []int{0, 1}, Attack: a})
	o := decentral.LSRun(t, cfg, mx, pr, 1, 1)
	got := decentral.MixedRows(t, o, xs)
	// W: 1/2 on the diagonal, 1/6 elsewhere.
	for _, c := range []struct {
		node int
		want []float32
	}{
		{1, []float32{(3.0/2 + (1+2+4)/6.0), (0 + (2+0+6)/6.0)}},     // honest mix
		{2, []float32{(2.0/2 + (-1-3+4)/6.0), (0 + (-2-0+6)/6.0)}},   // both lie
		{0, []float32{(1.0/2 + (3+2+4)/6.0), (2.0/2 + (0+0+6)/6.0)}}, // honest mix
	} {
		if !near(got[c.node], c.want, 1e-6) {
			t.Errorf("node %d mixes %v, want %v", c.node, got[c.node], c.want)
		}
	}
}

func near(a, b []float32, tol float64) bool {
	for k := range a {
		if math.Abs(float64(a[k])-float64(b[k])) > tol {
			return false
		}
	}
	return len(a) == len(b)
}
