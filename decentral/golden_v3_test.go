package decentral

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// The golden trajectories of SPEC §14's recipes (weight decay, DSGDm,
// QG-DSGDm, local steps, cosine and step schedules with warm-up), a copy of
// ../shared/golden/lr_trajectories_v3.json; it trains on a8aPath's rows.
var goldenV3Path = filepath.Join("testdata", "lr_trajectories_v3.json")

type goldenV3File struct {
	Rows     int         `json:"rows"`
	Features int         `json:"features"`
	Nodes    int         `json:"nodes"`
	Edges    [][2]int    `json:"edges"`
	W        [][]float64 `json:"W"`
	Draws    [][][]int   `json:"draws"` // [draw][node] → row indices
	Cases    []goldenV3Run
}

type goldenV3Run struct {
	Name        string      `json:"name"`
	Algo        string      `json:"algo"`
	Momentum    float64     `json:"momentum"`
	Nesterov    bool        `json:"nesterov"`
	LocalSteps  int         `json:"local_steps"`
	WeightDecay float64     `json:"weight_decay"`
	Schedule    string      `json:"schedule"`
	Steps       []float64   `json:"steps"`
	StepGamma   float64     `json:"step_gamma"`
	Warmup      int         `json:"warmup"`
	Eta0        float64     `json:"eta0"`
	Rho         float64     `json:"rho"`
	Rounds      int         `json:"rounds"`
	Etas        []float64   `json:"etas"`
	Betas       []float64   `json:"betas"`
	XbarNorm    []float64   `json:"xbar_norm_per_round"`
	FinalX      [][]float64 `json:"final_x"`
}

// scheduleSpec returns the run's --schedule value.
func (c goldenV3Run) scheduleSpec() string {
	if c.Schedule != ScheduleStep {
		return c.Schedule
	}
	ms := make([]string, len(c.Steps))
	for k, s := range c.Steps {
		ms[k] = strconv.FormatFloat(s, 'g', -1, 64)
	}
	return "step:" + strings.Join(ms, ",") + "@" + strconv.FormatFloat(c.StepGamma, 'g', -1, 64)
}

// TestGoldenV3Trajectories replays every case of lr_trajectories_v3.json
// through the registry's methods, with the file's draws indexed by draw:
// every η_t and GT-STORM's β_t exactly, ‖x̄_t‖ every round and each node's
// final x within 1e-4 relative.
func TestGoldenV3Trajectories(t *testing.T) {
	raw, err := os.ReadFile(goldenV3Path)
	if err != nil {
		t.Fatal(err)
	}
	var gf goldenV3File
	if err := json.Unmarshal(raw, &gf); err != nil {
		t.Fatalf("%s: %v", goldenV3Path, err)
	}
	data, err := readLibSVM(a8aPath, gf.Rows, gf.Features)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"dsgdm-heavyball-wd", "dsgdm-nesterov-wd", "dsgdm-mu0-is-atc-dsgd", "qg-dsgdm-nesterov-wd",
		"qg-dsgdm-heavyball", "dsgdm-local2", "dsgdm-cosine-warmup3", "dsgd-step-half-3q", "gt-storm-wd"}
	if len(gf.Cases) != len(want) {
		t.Fatalf("%d cases, want %d", len(gf.Cases), len(want))
	}
	for k, c := range gf.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Name != want[k] {
				t.Fatalf("case %d is %q, want %q", k, c.Name, want[k])
			}
			if len(c.Etas) != c.Rounds {
				t.Fatalf("%d etas for %d rounds", len(c.Etas), c.Rounds)
			}
			g, err := graph.New(gf.Nodes, gf.Edges)
			if err != nil {
				t.Fatal(err)
			}
			mx := mustMixing(t, graph.MixLaplacian, g)
			meth := knobbed(t, c.Algo, Knobs{
				"momentum":    c.Momentum,
				"nesterov":    c.Nesterov,
				"local-steps": c.LocalSteps,
			})
			cfg := Config{Method: meth, Workers: 2, WeightDecay: c.WeightDecay,
				Rounds: c.Rounds, StepSizes: StepSizes{Eta0: c.Eta0, Rho: c.Rho, StepSchedule: c.scheduleSpec(), Warmup: c.Warmup}}
			sampler := &replaySampler{batches: gf.Draws, calls: make([]int, gf.Nodes)}
			o, err := New(cfg, mx, sampler, lrOracle{data, 0.1}, make([]float32, gf.Features))
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			s := o.Schedule()
			for r, eta := range c.Etas {
				if got := s.Eta(r); got != eta {
					t.Errorf("η_%d = %v, file has %v", r, got, eta)
				}
			}
			replayGolden(t, o, goldenRun{Name: c.Name, Algo: c.Algo, Rounds: c.Rounds, Betas: c.Betas,
				XbarNorm: c.XbarNorm, FinalX: c.FinalX})
			if steps := max(c.LocalSteps, 1); c.Algo == DSGDM {
				if n := sampler.calls[0]; n != steps*c.Rounds {
					t.Errorf("node 0 drew %d minibatches, want %d", n, steps*c.Rounds)
				}
			}
		})
	}
}
