package decentral

import (
	"math"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

func TestConvergenceLeastSquares(t *testing.T) {
	pr := newLS(8, 10, 50, 1, 1)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.ErdosRenyi(8, 0.5, 1)))
	full := pr.full()
	norm := 0.0
	for _, v := range pr.xStar {
		norm += v * v
	}
	norm = math.Sqrt(norm)
	for _, tc := range []struct {
		name   string
		cfg    Config
		exact  bool
		rounds int
		maxS   float64 // S(x_T)/S(x_0)
		maxD   float64 // ‖x̄_T − x*‖/‖x*‖
	}{
		// Noisy gradients: minibatches of 4 rows plus N(0, 0.25) noise.
		{"dsgd-noisy", Config{Algorithm: DSGD, StepSizes: StepSizes{Eta0: 0.1}}, false, 2000, 0.02, 0.1},
		{"gnsd-noisy", Config{Algorithm: GNSD, StepSizes: StepSizes{Eta0: 0.1}}, false, 2000, 0.02, 0.1},
		{"gt-storm-noisy", Config{Algorithm: GTSTORM, StepSizes: StepSizes{Eta0: 0.1, Rho: 10}}, false, 2000, 0.02, 0.1},
		// Exact gradients: gradient tracking (GNSD, GT-STORM with β = 1)
		// removes the heterogeneity bias and reaches x* itself; DSGD's bias
		// (and GT-STORM's for β < 1) only fades with η_t.
		{"gnsd-exact", Config{Algorithm: GNSD, StepSizes: StepSizes{Eta0: 0.1}}, true, 1500, 1e-8, 1e-4},
		{"gt-storm-exact-beta1", Config{Algorithm: GTSTORM, StepSizes: StepSizes{Eta0: 0.1, Rho: 1e-300}}, true, 1500, 1e-8, 1e-4},
		{"dsgd-exact", Config{Algorithm: DSGD, StepSizes: StepSizes{Eta0: 0.1}}, true, 1500, 0.01, 0.05},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Workers = 2
			s := newLSSampler(pr, 4, 51)
			s.sigma, s.exact = 0.5, tc.exact
			if tc.exact {
				s.sigma = 0
			}
			o, err := New(tc.cfg, mx, s, lsOracle{pr}, make([]float32, pr.d))
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if err := o.Init(ctx); err != nil {
				t.Fatal(err)
			}
			s0 := stationarity(t, o, full)
			for r := 0; r < tc.rounds; r++ {
				if err := o.Step(ctx); err != nil {
					t.Fatal(err)
				}
			}
			sT, d := stationarity(t, o, full), distance(o, pr.xStar)
			t.Logf("S: %.3e → %.3e (ratio %.2e); ‖x̄ − x*‖/‖x*‖ = %.2e", s0, sT, sT/s0, d/norm)
			if sT > tc.maxS*s0 || d > tc.maxD*norm {
				t.Errorf("S ratio %.3e (want ≤ %g), distance ratio %.3e (want ≤ %g)", sT/s0, tc.maxS, d/norm, tc.maxD)
			}
		})
	}
}

// TestGTStormBeatsDSGD: with noisy gradients and the same rounds, GT-STORM
// (ρ = 10, the paper's best for η_0 = 0.1) reaches a lower stationarity
// measure than DSGD on every seed, and on average by more than a factor 2.
func TestGTStormBeatsDSGD(t *testing.T) {
	ratio := 0.0
	seeds := []uint64{1, 2, 3, 4}
	for _, seed := range seeds {
		pr := newLS(8, 10, 50, 1, seed)
		mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.ErdosRenyi(8, 0.5, seed)))
		final := map[string]float64{}
		for _, cfg := range []Config{{Algorithm: DSGD, StepSizes: StepSizes{Eta0: 0.1}}, {Algorithm: GTSTORM, StepSizes: StepSizes{Eta0: 0.1, Rho: 10}}} {
			cfg.Workers = 1
			s := newLSSampler(pr, 4, seed+50)
			s.sigma = 0.5
			o, err := New(cfg, mx, s, lsOracle{pr}, make([]float32, pr.d))
			if err != nil {
				t.Fatal(err)
			}
			if err := o.Init(ctx); err != nil {
				t.Fatal(err)
			}
			for r := 0; r < 1000; r++ {
				if err := o.Step(ctx); err != nil {
					t.Fatal(err)
				}
			}
			final[cfg.Algorithm] = stationarity(t, o, pr.full())
		}
		t.Logf("seed %d: S(DSGD) = %.3e, S(GT-STORM) = %.3e", seed, final[DSGD], final[GTSTORM])
		if final[GTSTORM] >= final[DSGD] {
			t.Errorf("seed %d: GT-STORM S = %.3e not below DSGD's %.3e", seed, final[GTSTORM], final[DSGD])
		}
		ratio += final[DSGD] / final[GTSTORM] / float64(len(seeds))
	}
	if ratio < 2 {
		t.Errorf("mean S(DSGD)/S(GT-STORM) = %.2f, want ≥ 2", ratio)
	}
}

// meanOf returns the float64 average over nodes of vec(i).
func meanOf(m, p int, vec func(i int) []float32) []float64 {
	out := make([]float64, p)
	for i := 0; i < m; i++ {
		for k, v := range vec(i) {
			out[k] += float64(v) / float64(m)
		}
	}
	return out
}

// TestAverageIdentity checks x̄_{t+1} = x̄_t − η_t v̄_t (W doubly stochastic)
// for the gradient-tracking methods, and GNSD's ȳ_t = mean of the kept
// gradients.
func TestAverageIdentity(t *testing.T) {
	pr := newLS(6, 10, 30, 1, 5)
	for _, kind := range []string{graph.MixLaplacian, graph.MixMetropolis} {
		mx := mustMixing(t, kind, mustGraph(graph.ErdosRenyi(6, 0.4, 2)))
		for _, algo := range []string{GNSD, GTSTORM} {
			o, _ := lsRun(t, Config{Algorithm: algo, Workers: 2, StepSizes: StepSizes{Eta0: 0.05, Rho: 3}}, mx, pr, 3, 9)
			worst := 0.0
			for r := 0; r < 60; r++ {
				xbar := meanOf(o.Nodes(), o.Dim(), o.Node)
				vbar := meanOf(o.Nodes(), o.Dim(), o.Direction)
				eta := o.Eta()
				if algo == GNSD {
					st, _ := o.State()
					gbar := meanOf(o.Nodes(), o.Dim(), func(i int) []float32 { return st.Slab("g")[i*o.Dim() : (i+1)*o.Dim()] })
					for k := range gbar {
						if math.Abs(gbar[k]-vbar[k]) > 1e-5*(1+math.Abs(gbar[k])) {
							t.Fatalf("%s round %d: ȳ[%d] = %v, mean gradient %v", kind, r, k, vbar[k], gbar[k])
						}
					}
				}
				if err := o.Step(ctx); err != nil {
					t.Fatal(err)
				}
				next := meanOf(o.Nodes(), o.Dim(), o.Node)
				for k := range next {
					want := xbar[k] - eta*vbar[k]
					err := math.Abs(next[k]-want) / (1 + math.Abs(want))
					worst = max(worst, err)
				}
			}
			if worst > 1e-5 {
				t.Errorf("%s %s: |x̄_{t+1} − (x̄_t − η_t v̄_t)| up to %.2e, want float32 rounding", kind, algo, worst)
			}
		}
	}
}
