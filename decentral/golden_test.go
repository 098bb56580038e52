package decentral

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// The golden trajectories: exact float64 runs of the three algorithms by an
// independent implementation of SPEC §3, a copy of
// ../shared/golden/lr_trajectories.json, and the first 64 rows of a8a that
// every golden file trains on: the golden tests need nothing outside the
// repository, so a clone alone runs its main correctness check.
var (
	goldenPath = filepath.Join("testdata", "lr_trajectories.json")
	a8aPath    = filepath.Join("testdata", "a8a-64rows")
)

type goldenFile struct {
	About    string      `json:"about"`
	Rows     int         `json:"rows"`
	Features int         `json:"features"`
	Nodes    int         `json:"nodes"`
	Batch    int         `json:"batch"`
	Batches  [][][]int   `json:"batches"` // [round][node] → row indices
	Cases    []goldenRun `json:"cases"`
}

type goldenRun struct {
	Name     string      `json:"name"`
	Algo     string      `json:"algo"`
	Graph    string      `json:"graph"`
	Edges    [][2]int    `json:"edges"`
	W        [][]float64 `json:"W"`
	Eta0     float64     `json:"eta0"`
	Rho      float64     `json:"rho"`
	Decay    float64     `json:"decay"`
	Alpha    float64     `json:"alpha"`
	Rounds   int         `json:"rounds"`
	Betas    []float64   `json:"betas"`
	XbarNorm []float64   `json:"xbar_norm_per_round"`
	FinalX   [][]float64 `json:"final_x"`
}

// lrData is a LibSVM sample set in sparse rows with labels in {0, 1}.
type lrData struct {
	dim    int
	cols   [][]int
	vals   [][]float32
	labels []float32
}

// readLibSVM reads the first n rows of a LibSVM file with 1-based feature
// indices below dim+1 and labels ±1.
func readLibSVM(path string, n, dim int) (*lrData, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d := &lrData{dim: dim}
	sc := bufio.NewScanner(f)
	for line := 1; len(d.labels) < n && sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "+1", "1":
			d.labels = append(d.labels, 1)
		case "-1":
			d.labels = append(d.labels, 0)
		default:
			return nil, fmt.Errorf("%s:%d: label %q", path, line, fields[0])
		}
		var cols []int
		var vals []float32
		for _, fv := range fields[1:] {
			i, v, ok := strings.Cut(fv, ":")
			idx, err1 := strconv.Atoi(i)
			val, err2 := strconv.ParseFloat(v, 32)
			if !ok || err1 != nil || err2 != nil || idx < 1 || idx > dim {
				return nil, fmt.Errorf("%s:%d: feature %q", path, line, fv)
			}
			cols = append(cols, idx-1)
			vals = append(vals, float32(val))
		}
		d.cols = append(d.cols, cols)
		d.vals = append(d.vals, vals)
	}
	if len(d.labels) < n {
		return nil, fmt.Errorf("%s: %d rows, want %d", path, len(d.labels), n)
	}
	return d, sc.Err()
}

// lrBatch is a list of row indices.
type lrBatch []int

func (b lrBatch) Len() int { return len(b) }

// lrOracle is the paper's non-convex logistic regression (SPEC §5) in
// float32: mean binary cross-entropy of σ(xᵀζ) plus α Σ_k x_k²/(1 + x_k²).
type lrOracle struct {
	d     *lrData
	alpha float32
}

func (o lrOracle) Grad(worker int, x []float32, bb Batch, grad []float32) (float32, error) {
	b := bb.(lrBatch)
	clear(grad)
	var loss float32
	inv := 1 / float32(len(b))
	for _, r := range b {
		var z float32
		for k, c := range o.d.cols[r] {
			z += x[c] * o.d.vals[r][k]
		}
		y := o.d.labels[r]
		s := float32(1 / (1 + math.Exp(-float64(z))))
		// BCE = softplus(z) − y z, computed stably.
		loss += float32(math.Max(float64(z), 0)+math.Log1p(math.Exp(-math.Abs(float64(z))))) - y*z
		for k, c := range o.d.cols[r] {
			grad[c] += inv * (s - y) * o.d.vals[r][k]
		}
	}
	loss *= inv
	for k, v := range x {
		q := 1 + v*v
		loss += o.alpha * v * v / q
		grad[k] += o.alpha * 2 * v / (q * q)
	}
	return loss, nil
}

// replaySampler hands node i the file's batches in order: call k gets
// batches[k][i].
type replaySampler struct {
	batches [][][]int
	calls   []int
}

func (s *replaySampler) Sample(node int) Batch {
	b := lrBatch(s.batches[s.calls[node]][node])
	s.calls[node]++
	return b
}

// loadGolden decodes the golden file at path into gf and returns its rows of
// a8a.
func loadGolden(t *testing.T, path string, gf any, head *goldenFile) *lrData {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, gf); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	data, err := readLibSVM(a8aPath, head.Rows, head.Features)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestGoldenTrajectories(t *testing.T) {
	var gf goldenFile
	data := loadGolden(t, goldenPath, &gf, &gf)
	if len(gf.Cases) != 8 {
		t.Fatalf("%d cases, want 8", len(gf.Cases))
	}
	for _, c := range gf.Cases {
		t.Run(c.Name, func(t *testing.T) {
			if c.Decay != DefaultDecay {
				t.Fatalf("decay %v, want %v", c.Decay, DefaultDecay)
			}
			g, err := graph.New(gf.Nodes, c.Edges)
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
			sampler := &replaySampler{batches: gf.Batches, calls: make([]int, gf.Nodes)}
			cfg := Config{Algorithm: c.Algo, Workers: 2, StepSizes: StepSizes{Eta0: c.Eta0, Rho: c.Rho}}
			o, err := New(cfg, mx, sampler, lrOracle{data, float32(c.Alpha)}, make([]float32, gf.Features))
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			replayGolden(t, o, c)
		})
	}
}

// replayGolden initialises o, runs c's rounds and checks them against the
// file: β_t exactly (GT-STORM), ‖x̄_t‖ every round and every node's final x
// within 1e-4 relative.
func replayGolden(t *testing.T, o *Optimizer, c goldenRun) {
	t.Helper()
	if err := o.Init(ctx); err != nil {
		t.Fatal(err)
	}
	xbar := make([]float32, o.Dim())
	worstNorm := 0.0
	for r := 1; r <= c.Rounds; r++ {
		if err := o.Step(ctx); err != nil {
			t.Fatal(err)
		}
		if c.Algo == GTSTORM {
			if got := o.Beta(); got != c.Betas[r-1] {
				t.Errorf("β_%d = %v, file has %v", r, got, c.Betas[r-1])
			}
		}
		o.Mean(xbar)
		n := 0.0
		for _, v := range xbar {
			n += float64(v) * float64(v)
		}
		worstNorm = max(worstNorm, math.Abs(math.Sqrt(n)-c.XbarNorm[r-1])/c.XbarNorm[r-1])
	}
	if c.Algo != GTSTORM && len(c.Betas) != 0 {
		t.Errorf("%d betas for %s", len(c.Betas), c.Algo)
	}
	worst, worstElem := finalXError(o, c.FinalX)
	t.Logf("final x relative error %.2e (worst element %.2e), ‖x̄_t‖ %.2e", worst, worstElem, worstNorm)
	if worstNorm > 1e-4 {
		t.Errorf("‖x̄_t‖ relative error up to %.2e", worstNorm)
	}
	if worst > 1e-4 || worstElem > 1e-4 {
		t.Errorf("final x: relative error %.2e, worst element %.2e; want ≤ 1e-4", worst, worstElem)
	}
}
