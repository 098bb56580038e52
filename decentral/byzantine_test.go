package decentral

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestChooseByzantine: the draw is the seed's, distinct, sorted, and B < m.
func TestChooseByzantine(t *testing.T) {
	a, err := ChooseByzantine(20, 3, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ChooseByzantine(20, 3, 7)
	if !slices.Equal(a, b) || len(a) != 3 || !slices.IsSorted(a) || a[0] == a[1] || a[1] == a[2] {
		t.Errorf("seed 7: %v then %v, want the same 3 distinct sorted nodes", a, b)
	}
	differ := false
	for seed := range uint64(10) {
		c, _ := ChooseByzantine(20, 3, seed)
		differ = differ || !slices.Equal(a, c)
	}
	if !differ {
		t.Error("every seed drew the same nodes")
	}
	for _, bad := range []int{-1, 20, 21} {
		if _, err := ChooseByzantine(20, bad, 1); err == nil {
			t.Errorf("B = %d of 20: no error", bad)
		}
	}
}

// TestParseByzantine covers counts and lists, good and bad.
func TestParseByzantine(t *testing.T) {
	for spec, want := range map[string][]int{"": nil, "0": nil, "7,3": {3, 7}, "5,": {5}, "0, 9": {0, 9}} {
		got, err := ParseByzantine(spec, 10, 1)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%q: %v, %v; want %v", spec, got, err, want)
		}
	}
	if got, _ := ParseByzantine("2", 10, 1); len(got) != 2 {
		t.Errorf("2: %v, want two nodes", got)
	}
	for _, spec := range []string{"-1", "10", "x", "3,3", "1,10", "-1,", "0,1,2,3,4,5,6,7,8,9"} {
		if got, err := ParseByzantine(spec, 10, 1); err == nil {
			t.Errorf("%q: %v and no error", spec, got)
		}
	}
}

// TestParseAttack covers the flag forms, good and bad.
func TestParseAttack(t *testing.T) {
	for spec, want := range map[string]string{"": "", "signflip": "signflip", "signflip:2": "signflip:2",
		"gauss:0.5": "gauss:0.5", "alie": "alie", "alie:1.5": "alie:1.5", "ipm:0.1": "ipm:0.1",
		"dissensus:1": "dissensus:1", "labelflip": "labelflip"} {
		a, err := ParseAttack(spec)
		if err != nil || a.String() != want {
			t.Errorf("%q: %v, %v; want %s", spec, a, err, want)
		}
	}
	for _, spec := range []string{"flip", "signflip:-1", "gauss:x", "ipm:inf", "alie:NaN", "labelflip:1", "signflip:"} {
		if _, err := ParseAttack(spec); err == nil {
			t.Errorf("%q: no error", spec)
		}
	}
}

// mixedRows returns what every node's Mix of slab 0 gives in o's next
// round, from rows xs (one per node), without stepping.
func mixedRows(t *testing.T, o *Optimizer, xs [][]float32) [][]float32 {
	t.Helper()
	for i, x := range xs {
		copy(o.row(o.x, i), x)
	}
	for i := range o.m {
		o.send[i] = o.share(i, o.send[i][:0])
		if _, err := o.sendNode(0, i, o.round, o.mix, o.mix.to[i], o.send[i]); err != nil {
			t.Fatal(err)
		}
	}
	out := make([][]float32, o.m)
	for i := range o.m {
		out[i] = make([]float32, o.p)
		RoundContext{o, 0, i}.Mix(out[i], 0, o.row(o.x, i))
	}
	return out
}

// TestAttackMessages checks each attack's message on K4 by hand: node 0
// lies to node 1, whose honest neighbours 2 and 3 hold (2, 0) and (4, 6);
// W has 1/2 on the diagonal and 1/6 elsewhere.
func TestAttackMessages(t *testing.T) {
	pr := newLS(4, 2, 4, 0, 1)
	mx := mustMixing(t, MixLaplacian, mustGraph(Complete(4)))
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
		a, _ := ParseAttack(tc.attack)
		o, _ := lsRun(t, Config{Algorithm: DSGD, Eta0: 0.1, Byzantine: []int{0}, Attack: a}, mx, pr, 1, 1)
		got := mixedRows(t, o, xs)
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
	pr := newLS(4, 50, 20, 0, 1)
	mx := mustMixing(t, MixLaplacian, mustGraph(Complete(4)))
	xs := make([][]float32, 4)
	for i := range xs {
		xs[i] = make([]float32, 50)
	}
	run := func() [][]float32 {
		o, _ := lsRun(t, Config{Algorithm: DSGD, Eta0: 0.1, Byzantine: []int{0}, Attack: Attack{AttackGauss, 6}, Seed: 3}, mx, pr, 1, 1)
		return mixedRows(t, o, xs)
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
	pr := newLS(8, 10, 30, 1, 4)
	mx := mustMixing(t, MixLaplacian, mustGraph(ErdosRenyi(8, 0.6, 4)))
	for _, algo := range []string{DSGD, GNSD, GTSTORM, D2, DGET} {
		state := func(cfg Config, workers int) *Snapshot {
			s := newLSSampler(pr, 3, 77)
			cfg.Algorithm, cfg.Eta0, cfg.Workers, cfg.Seed = algo, 0.05, workers, 9
			o, _ := lsRunWith(t, cfg, mx, pr, s)
			for range 15 {
				if err := o.Step(ctx); err != nil {
					t.Fatal(err)
				}
			}
			st, _ := o.State()
			return st
		}
		plain := state(Config{}, 1)
		if st := state(Config{Aggregate: Clip{math.Inf(1)}}, 3); !sameSlabs(st, plain) {
			t.Errorf("%s: clip:inf differs from plain gossip", algo)
		}
		for _, attack := range []Attack{{AttackGauss, 0.5}, {AttackALIE, math.NaN()}} {
			for _, agg := range []Aggregator{Mean{}, Clip{}, Trim{1}, Median{}} {
				cfg := Config{Byzantine: []int{2, 5}, Attack: attack, Aggregate: agg}
				if a, b := state(cfg, 1), state(cfg, 3); !sameSlabs(a, b) {
					t.Errorf("%s, %s, %s: 3 workers differ from 1", algo, attack, agg)
				}
			}
		}
	}
}

// TestByzantineConfigErrors: New refuses what a run cannot do.
func TestByzantineConfigErrors(t *testing.T) {
	pr := newLS(4, 3, 4, 0, 1)
	mx := mustMixing(t, MixLaplacian, mustGraph(Complete(4)))
	flip := Attack{AttackSignFlip, 1}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Algorithm: DSGD, Attack: flip}, "no Byzantine nodes"},
		{Config{Algorithm: DSGD, Byzantine: []int{1}}, "no attack"},
		{Config{Algorithm: DSGD, Byzantine: []int{0, 1, 2, 3}, Attack: flip}, "want fewer"},
		{Config{Algorithm: DSGD, Byzantine: []int{2, 1}, Attack: flip}, "increasing"},
		{Config{Algorithm: DSGD, Byzantine: []int{1}, Attack: Attack{AttackGauss, -1}}, "≥ 0"},
		{Config{Algorithm: CHOCO, Byzantine: []int{1}, Attack: flip}, "uncompressed"},
		{Config{Algorithm: CHOCO, Aggregate: Median{}}, "uncompressed"},
	} {
		tc.cfg.Eta0 = 0.1
		_, err := New(tc.cfg, mx, newLSSampler(pr, 1, 1), lsOracle{pr}, make([]float32, 3))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want an error with %q", tc.cfg, err, tc.want)
		}
	}
	// labelflip lies in the data: CHOCO may run with it.
	if _, err := New(Config{Algorithm: CHOCO, Eta0: 0.1, Byzantine: []int{1}, Attack: Attack{Name: AttackLabelFlip}}, mx, newLSSampler(pr, 1, 1), lsOracle{pr}, make([]float32, 3)); err != nil {
		t.Errorf("CHOCO with labelflip: %v", err)
	}
}

// TestRobustStepAllocations: a steady round with lies and a robust rule
// allocates nothing.
func TestRobustStepAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	pr := newLS(6, 10, 20, 1, 6)
	mx := mustMixing(t, MixLaplacian, mustGraph(Complete(6)))
	for _, attack := range []Attack{{AttackGauss, 1}, {AttackDissensus, 1}} {
		for _, agg := range []Aggregator{Mean{}, Clip{}, Trim{1}, Median{}} {
			o, _ := lsRun(t, Config{Algorithm: GTSTORM, Eta0: 0.01, Workers: 2, Byzantine: []int{1}, Attack: attack, Aggregate: agg}, mx, pr, 2, 1)
			o.Step(ctx)
			if a := testing.AllocsPerRun(20, func() { o.Step(ctx) }); a != 0 {
				t.Errorf("%s, %s: %v allocations per round", attack, agg, a)
			}
		}
	}
}
