package decentral

import (
	"math"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/decentral/compress"
)

// TestChocoIdentityIsAdaptThenCombine: with no compression and γ = 1,
// x̂_{t+1} = x_{t+½}, so CHOCO's round is x_{t+1} = W (x_t − η_t g_t): DSGD
// with the gradient step before the mixing. A float32 reference of that
// recursion, on the same batches, matches CHOCO to rounding.
func TestChocoIdentityIsAdaptThenCombine(t *testing.T) {
	const m, rounds = 6, 30
	pr := newLS(m, 8, 30, 1, 3)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.ErdosRenyi(m, 0.5, 4)))
	o, _ := lsRun(t, Config{Method: CHOCOMethod{Gamma: 1, Compress: "none"}, StepSizes: StepSizes{Eta0: 0.05}}, mx, pr, 3, 7)

	ref := newLSSampler(pr, 3, 7)
	sched, _ := Config{Algorithm: CHOCO, StepSizes: StepSizes{Eta0: 0.05}}.Schedule()
	x := make([][]float32, m)
	for i := range x {
		x[i] = make([]float32, pr.d)
	}
	half := make([][]float32, m)
	g := make([]float32, pr.d)
	for r := 0; r < rounds; r++ {
		eta := float32(sched.Eta(r))
		for i := range half {
			if _, err := (lsOracle{pr}).Grad(0, x[i], ref.Sample(i), g); err != nil {
				t.Fatal(err)
			}
			half[i] = append(half[i][:0], x[i]...)
			addScaled(half[i], -eta, g)
		}
		for i := range x {
			self, ws := mx.Row32(i)
			setScaled(x[i], self, half[i])
			for n, j := range mx.From(i) {
				addScaled(x[i], ws[n], half[j])
			}
		}
		if err := o.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	worst := 0.0
	for i := range x {
		for k, v := range o.Node(i) {
			worst = max(worst, math.Abs(float64(v-x[i][k]))/(1+math.Abs(float64(x[i][k]))))
		}
	}
	if worst > 1e-5 {
		t.Errorf("CHOCO (none, γ = 1) is %.2e from W(x − ηg) after %d rounds, want ≤ 1e-5", worst, rounds)
	}
}

// TestChocoBookkeeping: whatever the compressor, s_i stays Σ_j W_ij x̂_j,
// so Σ_i (s_i − x̂_i) = 0 and the consensus step leaves x̄ where the local
// steps put it; the bytes counted are the encoded messages, exactly.
func TestChocoBookkeeping(t *testing.T) {
	const m, rounds = 6, 40
	pr := newLS(m, 20, 30, 1, 3)
	mx := mustMixing(t, graph.MixMetropolis, mustGraph(graph.ErdosRenyi(m, 0.5, 4)))
	for _, spec := range []string{"none", "topk:0.2", "randk:0.3", "qsgd:7", "sign"} {
		o, _ := lsRun(t, Config{Method: CHOCOMethod{Compress: spec}, Seed: 5, StepSizes: StepSizes{Eta0: 0.05}}, mx, pr, 3, 7)
		for range rounds {
			if err := o.Step(ctx); err != nil {
				t.Fatalf("%s: %v", spec, err)
			}
		}
		st, _ := o.State()
		hat, s := st.Slab("xhat"), st.Slab("s")
		p := pr.d
		worst := 0.0
		for i := 0; i < m; i++ {
			for k := 0; k < p; k++ {
				self, ws := mx.Row32(i)
				want := float64(self) * float64(hat[i*p+k])
				for n, j := range mx.From(i) {
					want += float64(ws[n]) * float64(hat[j*p+k])
				}
				worst = max(worst, math.Abs(float64(s[i*p+k])-want)/(1+math.Abs(want)))
			}
		}
		if worst > 1e-4 {
			t.Errorf("%s: s_i is %.2e from Σ_j W_ij x̂_j, want ≤ 1e-4", spec, worst)
		}
		c, _ := compress.Parse(spec)
		for i, b := range o.Counters().BytesSent {
			want := int64(c.Size(p)) * int64(mx.Graph().Degree(i)) * rounds
			if b != want {
				t.Errorf("%s: node %d sent %d bytes, want %d (%d-byte messages × %d neighbours × %d rounds)", spec, i, b, want, c.Size(p), mx.Graph().Degree(i), rounds)
			}
		}
	}
}

// TestChocoConverges: with top-k 10%, QSGD 4-bit or scaled sign (γ = 0.4), CHOCO
// reaches the point uncompressed CHOCO reaches (at a constant step, the
// heterogeneity floor all gossip SGD without tracking has), far below
// where it started.
func TestChocoConverges(t *testing.T) {
	pr := newLS(8, 10, 40, 0.5, 2)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Ring(8)))
	final := func(spec string) (start, end float64) {
		o, s := lsRun(t, Config{Method: CHOCOMethod{Gamma: 0.4, Compress: spec}, Seed: 1, StepSizes: StepSizes{Eta0: 0.1, ConstantStep: true}}, mx, pr, 40, 1)
		s.exact = true
		start = stationarity(t, o, pr.full())
		for range 3000 {
			if err := o.Step(ctx); err != nil {
				t.Fatalf("%s: %v", spec, err)
			}
		}
		return start, stationarity(t, o, pr.full())
	}
	start, floor := final("none")
	if !(floor < start/10) {
		t.Fatalf("uncompressed CHOCO: S(x) went from %.3g to %.3g, want a 10-fold fall", start, floor)
	}
	for _, spec := range []string{"topk:0.1", "qsgd:7", "sign"} {
		if _, end := final(spec); math.Abs(end-floor) > 0.01*floor {
			t.Errorf("%s: S(x) = %.4g after 3000 rounds, uncompressed CHOCO's is %.4g", spec, end, floor)
		}
	}
}

func TestChocoRefusals(t *testing.T) {
	pr := newLS(4, 5, 10, 1, 1)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Ring(4)))
	exp, err := graph.OnePeerExponential(4)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"time-varying", Config{Algorithm: CHOCO, Topology: exp, StepSizes: StepSizes{Eta0: 0.1}}, "static graph"},
		{"bad spec", Config{Method: CHOCOMethod{Compress: "topk:7"}, StepSizes: StepSizes{Eta0: 0.1}}, "topk:7"},
		{"gamma", Config{Method: CHOCOMethod{Gamma: 1.5}, StepSizes: StepSizes{Eta0: 0.1}}, "gamma 1.5: want a consensus step in (0, 1]"},
		{"network over ranks", Config{Algorithm: DSGD, Local: []int{0, 1}, Network: &Network{Batch: 1}, StepSizes: StepSizes{Eta0: 0.1}}, "one process"},
		{"network batch", Config{Algorithm: DSGD, Network: &Network{}, StepSizes: StepSizes{Eta0: 0.1}}, "batch 0"},
		{"network speeds", Config{Algorithm: DSGD, Network: &Network{Batch: 1, Slowdown: []float64{1, 2}}, StepSizes: StepSizes{Eta0: 0.1}}, "2 node speeds for 4 nodes"},
		{"network slowdown", Config{Algorithm: DSGD, Network: &Network{Batch: 1, Slowdown: []float64{1, 0, 1, 1}}, StepSizes: StepSizes{Eta0: 0.1}}, "node 1 is 0 times slower"},
	} {
		_, err := New(c.cfg, mx, newLSSampler(pr, 2, 1), lsOracle{pr}, make([]float32, pr.d))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.name, err, c.want)
		}
	}
}
