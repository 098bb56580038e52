package train

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"

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
		{"d-get whole share", func(c *Config) { *c = c.WithKnob("period", 7); c.Algo = decentral.DGET }},
		{"d-get big batch", func(c *Config) { *c = c.WithKnob("period", 6).WithKnob("big-batch", 40); c.Algo = decentral.DGET }},
		{"d2 link drop", func(c *Config) { c.Algo, c.LinkDrop = decentral.D2, 0.3 }},
		{"gnsd link drop metropolis", func(c *Config) { c.Algo, c.LinkDrop, c.Mixing = decentral.GNSD, 0.5, graph.MixMetropolis }},
		{"gt-storm exp", func(c *Config) { c.Algo, c.Topology, c.Nodes = decentral.GTSTORM, graph.ExpTopology, 8 }},
		{"d2 exp", func(c *Config) { c.Algo, c.Topology, c.Nodes = decentral.D2, graph.ExpTopology, 6 }},
		{"choco qsgd on a simulated network", func(c *Config) {
			*c = c.WithKnob("compress", "qsgd:7").WithKnob("gamma", 0.3)
			c.Algo = decentral.CHOCO
			c.LinkLatency, c.LinkBandwidth, c.Compute, c.Stragglers = 0.001, 1e7, 0.002, "1:5"
		}},
		{"choco top-k", func(c *Config) { *c = c.WithKnob("compress", "topk:0.05"); c.Algo = decentral.CHOCO }},
		{"gt-storm on a simulated network", func(c *Config) {
			c.Algo, c.LinkLatency, c.LinkBandwidth, c.Compute = decentral.GTSTORM, 0.05, 1e7, 0.01
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name != "choco qsgd on a simulated network" {
				skipVariantUnderRace(t, "choco qsgd on a simulated network")
			}
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
