package train

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/decentral"
)

// TestGammaOnlyForCHOCO: γ is CHOCO's, so another algorithm refuses it
// (compare's --gamma sets the CHOCO cells only: experiment's
// TestCompareGammaOnlyForCHOCO).
func TestGammaOnlyForCHOCO(t *testing.T) {
	for _, c := range []struct {
		algo  string
		gamma float64
		ok    bool
	}{
		{decentral.CHOCO, 0.1, true},
		{decentral.CHOCO, 0, true},
		{decentral.DSGD, 0, true},
		{decentral.DSGD, 0.1, false},
		{decentral.GTSTORM, 0.5, false},
	} {
		cfg := Default()
		cfg.Algo = c.algo
		cfg = cfg.WithKnob("gamma", c.gamma)
		err := cfg.Validate()
		var ce *ConfigError
		if c.ok != (err == nil) || !c.ok && (!errors.As(err, &ce) || ce.Flag != "gamma") {
			t.Errorf("%s with γ %v: %v", c.algo, c.gamma, err)
		}
	}
}

// TestResolvedNamesCompressor: spellings of one compressor resolve to one
// setting, so that a grid sees them as the same cell.
func TestResolvedNamesCompressor(t *testing.T) {
	for spec, want := range map[string]string{
		"":          "",
		"none":      "",
		"qsgd:07":   "qsgd:7",
		"topk:0.10": "topk:0.1",
		"randk:1":   "randk:1",
		"sign":      "sign",
	} {
		cfg := Default()
		cfg.Algo = decentral.CHOCO
		cfg = cfg.WithKnob("compress", spec)
		r, err := cfg.Resolved()
		if err != nil || r.Knobs.String("compress") != want {
			t.Errorf("--compress %q resolves to %q (%v), want %q", spec, r.Knobs.String("compress"), err, want)
		}
	}
}

// TestBigBatchWithinShare: a D-GET large batch larger than a node's share
// is refused, naming the share.
func TestBigBatchWithinShare(t *testing.T) {
	needA8A(t)
	cfg := lrConfig(decentral.DGET)
	cfg = cfg.WithKnob("big-batch", 100000)
	_, err := Train(context.Background(), cfg, Options{Out: t.TempDir()})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Flag != "big-batch" || !strings.Contains(ce.Want, "share") {
		t.Fatalf("--big-batch 100000: %v, want a --big-batch error naming the share", err)
	}
}

// TestTrainRefusesForeignFolder: a folder holding files a run does not
// write is refused, and with Overwrite run into with those files kept.
func TestTrainRefusesForeignFolder(t *testing.T) {
	needA8A(t)
	dir := t.TempDir()
	for _, ours := range []string{RankCheckpointFile(40), "ranks.txt", ".metrics.csv.tmp123"} {
		if err := os.WriteFile(filepath.Join(dir, ours), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := lrConfig(decentral.DSGD)
	cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = 10, 10, 0
	_, err := Train(context.Background(), cfg, Options{Out: dir})
	var nr *NotRunFolderError
	if !errors.As(err, &nr) || len(nr.Names) != 1 || nr.Names[0] != "notes.txt" {
		t.Fatalf("train into a folder with notes.txt: %v, want a NotRunFolderError naming it", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ConfigFile)); err == nil {
		t.Error("the refused run wrote config.json")
	}
	if _, err := Train(context.Background(), cfg, Options{Out: dir, Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(notes); err != nil || string(b) != "mine" {
		t.Errorf("notes.txt after an overwriting run: %q, %v", b, err)
	}
}

// TestD2GraphsCheckedUpFront: D² with Metropolis weights on failing links
// meets a W_t with λ_min ≤ −1/3 at round 124 of this seed; the run is
// refused before anything is written, naming the round, while algorithms
// that can use any W run.
func TestD2GraphsCheckedUpFront(t *testing.T) {
	needA8A(t)
	for _, c := range []struct {
		algo, mixing string
		refused      bool
	}{
		{decentral.D2, graph.MixMetropolis, true},
		{decentral.D2, graph.MixLaplacian, false},
		{decentral.DSGD, graph.MixMetropolis, false},
	} {
		cfg := lrConfig(c.algo)
		cfg.Mixing, cfg.LinkDrop, cfg.Iters = c.mixing, 0.3, 1000
		err := cfg.CheckGraphs()
		var ce *ConfigError
		if c.refused != (err != nil) || c.refused && (!errors.As(err, &ce) || ce.Flag != "link-drop" || !strings.Contains(ce.Want, "round 124")) {
			t.Errorf("%s, %s weights, links failing w.p. 0.3: %v", c.algo, c.mixing, err)
		}
	}
	cfg := lrConfig(decentral.D2)
	cfg.Mixing, cfg.LinkDrop, cfg.Iters = graph.MixMetropolis, 0.3, 1000
	out := filepath.Join(t.TempDir(), "run")
	if _, err := Train(context.Background(), cfg, Options{Out: out}); err == nil {
		t.Fatal("D² on failing Metropolis links trained")
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("the refused run created %s", out)
	}
}

// TestBlownApartIsDivergence: D² on a graph that loses 90% of its links
// each round grows the nodes' disagreement geometrically while every value
// stays finite; the run stops as diverged instead of reporting a finished
// run with a consensus error of 1e52.
func TestBlownApartIsDivergence(t *testing.T) {
	needA8A(t)
	cfg := lrConfig(decentral.D2)
	cfg.LinkDrop, cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = 0.9, 1000, 100, 200
	out := t.TempDir()
	_, err := Train(context.Background(), cfg, Options{Out: out})
	if !errors.Is(err, decentral.ErrDiverged) {
		t.Fatalf("D² with --link-drop 0.9: %v, want a divergence", err)
	}
	f, err := os.Open(filepath.Join(out, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum, err := ReadSummary(f)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.Diverged, "blown apart") || !(float64(sum.ConsensusError) <= blownApart) {
		t.Errorf("summary: diverged %q, consensus error %v", sum.Diverged, float64(sum.ConsensusError))
	}
}
