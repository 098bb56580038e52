package decentral

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// goldenV2Path holds exact float64 runs of D², D-GET and of DSGD, GNSD,
// GT-STORM and D² on the one-peer exponential graph (SPEC §9), on the
// problem and batches of lr_trajectories.json.
var goldenV2Path = filepath.Join("testdata", "lr_trajectories_v2.json")

type goldenV2File struct {
	goldenFile
	Cases []goldenV2Run `json:"cases"`
}

type goldenV2Run struct {
	goldenRun
	Q         int           `json:"q"`           // D-GET's period
	WPerRound [][][]float64 `json:"W_per_round"` // W_t of a time-varying graph
}

// perRound is the Topology whose round t mixes with p[t mod len(p)].
type perRound []*graph.Mixing

func (p perRound) Mixing(t int) *graph.Mixing { return p[t%len(p)] }

// replayFullSampler is a replaySampler whose large batch is a node's whole
// share: node i owns rows i, i+m, i+2m, … of the file's rows.
type replayFullSampler struct {
	*replaySampler
	share [][]Batch // share[i]: node i's one piece
}

func newReplayFullSampler(gf *goldenV2File) *replayFullSampler {
	s := &replayFullSampler{replaySampler: &replaySampler{batches: gf.Batches, calls: make([]int, gf.Nodes)}}
	for i := range gf.Nodes {
		var rows lrBatch
		for r := i; r < gf.Rows; r += gf.Nodes {
			rows = append(rows, r)
		}
		s.share = append(s.share, []Batch{rows})
	}
	return s
}

func (s *replayFullSampler) FullBatch(node, n int) []Batch {
	if n != 0 {
		return nil // only the whole share is replayed
	}
	return s.share[node]
}

// denseMixing builds W from its dense rows, the non-zero off-diagonal
// weights in increasing column order.
func denseMixing(name string, dense [][]float64) (*graph.Mixing, error) {
	m := len(dense)
	self, from, w := make([]float64, m), make([][]int, m), make([][]float64, m)
	for i, row := range dense {
		self[i] = row[i]
		for j, v := range row {
			if j != i && v != 0 {
				from[i] = append(from[i], j)
				w[i] = append(w[i], v)
			}
		}
	}
	return graph.NewMixingRows(name, self, from, w)
}

// goldenV2Mixing returns New's W and the run's Topology: the Laplacian
// mixing of the file's edges (checked against its W), or the file's W_t.
func goldenV2Mixing(t *testing.T, nodes int, c goldenV2Run) (*graph.Mixing, graph.Topology) {
	t.Helper()
	if len(c.WPerRound) == 0 {
		g, err := graph.New(nodes, c.Edges)
		if err != nil {
			t.Fatal(err)
		}
		mx := mustMixing(t, graph.MixLaplacian, g)
		for i, row := range mx.Dense() {
			for j, w := range row {
				if math.Abs(w-c.W[i][j]) > 1e-15 {
					t.Fatalf("W[%d][%d] = %v, file has %v", i, j, w, c.W[i][j])
				}
			}
		}
		return mx, nil
	}
	if len(c.WPerRound) < c.Rounds {
		t.Fatalf("%d matrices W_t for %d rounds", len(c.WPerRound), c.Rounds)
	}
	var topo perRound
	for r, dense := range c.WPerRound {
		mx, err := denseMixing(fmt.Sprintf("%s-round%d", c.Graph, r), dense)
		if err != nil {
			t.Fatal(err)
		}
		topo = append(topo, mx)
	}
	return topo[0], topo
}

// TestGoldenV2Trajectories replays every case of lr_trajectories_v2.json:
// each node's final x within 1e-4 relative, ‖x̄_t‖ every round within 1e-4,
// and GT-STORM's β_t exactly.
func TestGoldenV2Trajectories(t *testing.T) {
	var gf goldenV2File
	data := loadGolden(t, goldenV2Path, &gf, &gf.goldenFile)
	want := []string{"d2-ring4", "d-get-ring4-q4", "dsgd-exp4", "gnsd-exp4", "gt-storm-exp4-rho4", "d2-exp4"}
	if len(gf.Cases) != len(want) {
		t.Fatalf("%d cases, want %d", len(gf.Cases), len(want))
	}
	for k, c := range gf.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Name != want[k] {
				t.Fatalf("case %d is %q, want %q", k, c.Name, want[k])
			}
			if c.Decay != DefaultDecay {
				t.Fatalf("decay %v, want %v", c.Decay, DefaultDecay)
			}
			if c.Algo == DGET && c.Q <= 0 {
				t.Fatalf("d-get case without its period q")
			}
			mx, topo := goldenV2Mixing(t, gf.Nodes, c)
			meth := knobbed(t, c.Algo, Knobs{"period": c.Q})
			cfg := Config{Method: meth, Workers: 2, Topology: topo, StepSizes: StepSizes{Eta0: c.Eta0, Rho: c.Rho}}
			o, err := New(cfg, mx, newReplayFullSampler(&gf), lrOracle{data, float32(c.Alpha)}, make([]float32, gf.Features))
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			replayGolden(t, o, c.goldenRun)
		})
	}
}

// finalXError returns the worst over nodes of ‖x_i − want_i‖/‖want_i‖ and
// the worst element error |x_ik − want_ik|/max(|want_ik|, 0.01).
func finalXError(o *Optimizer, want [][]float64) (worst, worstElem float64) {
	for i, w := range want {
		got := o.Node(i)
		diff, norm := 0.0, 0.0
		for k, v := range w {
			d := float64(got[k]) - v
			diff += d * d
			norm += v * v
			worstElem = max(worstElem, math.Abs(d)/max(math.Abs(v), 1e-2))
		}
		worst = max(worst, math.Sqrt(diff/norm))
	}
	return worst, worstElem
}
