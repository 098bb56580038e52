package train

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
)

// TestResumeNewPaths: a run of each new algorithm and time-varying graph,
// interrupted and resumed, equals the uninterrupted run row for row: D-GET's
// large batches drawn from the sampler's streams, the link failures (a pure
// function of the seed and the round) and the exponential graph's period
// all continue where they stopped.
func TestResumeNewPaths(t *testing.T) {
	needA8A(t)
	cases := []struct {
		name string
		set  func(c *Config)
	}{
		{"d-get whole share", func(c *Config) { c.Algo, c.Period = decentral.DGET, 7 }},
		{"d-get big batch", func(c *Config) { c.Algo, c.Period, c.BigBatch = decentral.DGET, 6, 40 }},
		{"d2 link drop", func(c *Config) { c.Algo, c.LinkDrop = decentral.D2, 0.3 }},
		{"gnsd link drop metropolis", func(c *Config) { c.Algo, c.LinkDrop, c.Mixing = decentral.GNSD, 0.5, decentral.MixMetropolis }},
		{"gt-storm exp", func(c *Config) { c.Algo, c.Topology, c.Nodes = decentral.GTSTORM, decentral.ExpTopology, 8 }},
		{"d2 exp", func(c *Config) { c.Algo, c.Topology, c.Nodes = decentral.D2, decentral.ExpTopology, 6 }},
		{"choco qsgd on a simulated network", func(c *Config) {
			c.Algo, c.Compress, c.Gamma = decentral.CHOCO, "qsgd:7", 0.3
			c.LinkLatency, c.LinkBandwidth, c.Compute, c.Stragglers = 0.001, 1e7, 0.002, "1:5"
		}},
		{"choco top-k", func(c *Config) { c.Algo, c.Compress = decentral.CHOCO, "topk:0.05" }},
		{"gt-storm on a simulated network", func(c *Config) {
			c.Algo, c.LinkLatency, c.LinkBandwidth, c.Compute = decentral.GTSTORM, 0.05, 1e7, 0.01
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := lrConfig(decentral.DSGD)
			cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = 40, 10, 10
			tc.set(&cfg)
			fresh := t.TempDir()
			want, err := Train(context.Background(), cfg, Options{Out: fresh})
			if err != nil {
				t.Fatal(err)
			}
			cut := t.TempDir()
			// Interrupted at the 26th look: between the checkpoints of
			// rounds 20 and 30.
			if _, err := Train(&cancelOnLook{Context: context.Background(), at: 26}, cfg, Options{Out: cut}); !errors.Is(err, ErrInterrupted) {
				t.Fatalf("err = %v, want an interruption", err)
			}
			got, err := Resume(context.Background(), cut, cfg.Iters, Options{})
			if err != nil {
				t.Fatal(err)
			}
			sameRows(t, rowsOf(t, cut), rowsOf(t, fresh))
			if cfg.SimulatesNetwork() && !(got.SimSeconds > 0) {
				t.Errorf("simulated network, summary sim_seconds %v", got.SimSeconds)
			}
			if got.Samples != want.Samples || got.BytesSentPerNode != want.BytesSentPerNode || got.FinalTestAcc != want.FinalTestAcc || got.SimSeconds != want.SimSeconds {
				t.Errorf("resumed summary: %d samples, %d bytes, acc %v; uninterrupted %d, %d, %v",
					got.Samples, got.BytesSentPerNode, got.FinalTestAcc, want.Samples, want.BytesSentPerNode, want.FinalTestAcc)
			}
		})
	}
}

// TestBudget: a budget of samples buys each algorithm the most rounds that
// stay within it, and a run of those rounds draws that many samples.
func TestBudget(t *testing.T) {
	needA8A(t)
	for _, bad := range []string{"", "samples", "rounds=10", "samples=0", "samples=-3", "samples=x", "samples=1.5k"} {
		if _, err := ParseBudget(bad); err == nil {
			t.Errorf("ParseBudget(%q) accepted", bad)
		}
	}
	b, err := ParseBudget("samples=3k")
	if err != nil || b.Samples != 3000 {
		t.Fatalf("ParseBudget(samples=3k) = %+v, %v", b, err)
	}
	rounds := map[string]int{}
	for _, algo := range decentral.Algorithms() {
		cfg := lrConfig(algo)
		cfg.Batch, cfg.Period, cfg.EvalEvery, cfg.CheckpointEvery = 4, 50, 50, 0
		r, err := b.Rounds(cfg)
		if err != nil {
			t.Fatalf("%s: %v", algo, err)
		}
		rounds[algo] = r
		cost := decentral.Cost{Batch: cfg.Batch, Full: cfg.dataSizes().train / cfg.Nodes}
		meth, err := cfg.method()
		if err != nil {
			t.Fatal(err)
		}
		within := decentral.SamplesAfter(meth, r, cost)
		over := decentral.SamplesAfter(meth, r+1, cost)
		if within > b.Samples || over <= b.Samples {
			t.Errorf("%s: %d rounds draw %d samples and %d rounds %d; budget %d", algo, r, within, r+1, over, b.Samples)
		}
		cfg.Iters = r
		sum, err := Train(context.Background(), cfg, Options{Out: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		// Shares differ by at most one sample, so each large batch may
		// differ from the mean share by one per node.
		perNode := float64(sum.Samples) / float64(cfg.Nodes)
		if d := perNode - float64(within); d < -float64(r/cfg.Period+1) || d > float64(r/cfg.Period+1) {
			t.Errorf("%s: %.1f samples per node, the budget's rounds predict %d", algo, perNode, within)
		}
	}
	// GT-STORM draws one batch at Init and two a round; DSGD one a round.
	if d := rounds[decentral.DSGD] - 2*rounds[decentral.GTSTORM]; d < 0 || d > 2 {
		t.Errorf("dsgd gets %d rounds and gt-storm %d: want about twice as many", rounds[decentral.DSGD], rounds[decentral.GTSTORM])
	}
	if rounds[decentral.DGET] >= rounds[decentral.GTSTORM] {
		t.Errorf("d-get gets %d rounds, gt-storm %d: its large batches should cost it rounds", rounds[decentral.DGET], rounds[decentral.GTSTORM])
	}
	cfg := lrConfig(decentral.DGET)
	if _, err := (Budget{Samples: 10}).Rounds(cfg); err == nil {
		t.Error("a budget below one round of d-get accepted")
	}
}

// TestMeasuredComputeSurvivesResume: without --compute the gradient time
// is measured once, when the run starts; a resumed run keeps using it.
func TestMeasuredComputeSurvivesResume(t *testing.T) {
	needA8A(t)
	cfg := lrConfig(decentral.DSGD)
	cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = 40, 10, 10
	cfg.LinkLatency = 0.001
	cut := t.TempDir()
	if _, err := Train(&cancelOnLook{Context: context.Background(), at: 26}, cfg, Options{Out: cut}); !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want an interruption", err)
	}
	ck, err := readCheckpoint(filepath.Join(cut, CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	if !(ck.meta.Compute > 0) {
		t.Fatalf("checkpoint records a measured compute time of %v s", ck.meta.Compute)
	}
	got, err := Resume(context.Background(), cut, cfg.Iters, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if float64(got.ComputeSeconds) != ck.meta.Compute {
		t.Errorf("resumed run assumed %v s per gradient, the run measured %v s", got.ComputeSeconds, ck.meta.Compute)
	}
	// DSGD with every node computing alike and unlimited bandwidth: each
	// round takes one gradient and one latency, so sim_seconds = rounds ×
	// (compute + latency).
	if want := 40 * (ck.meta.Compute + 0.001); math.Abs(float64(got.SimSeconds)-want) > 1e-9*want {
		t.Errorf("sim_seconds %v, want 40 × (%v + 0.001) = %v", got.SimSeconds, ck.meta.Compute, want)
	}
}
