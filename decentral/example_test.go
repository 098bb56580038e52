package decentral_test

import (
	"context"
	"fmt"
	"math"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/decentral"
)

// shard is one node's share of a least-squares problem: rows a_r with
// targets b_r, and the node's loss f_i(x) = (1/2n) Σ_r (a_r·x − b_r)². The
// example gives each node all of its rows every round, so the shard is also
// the node's (fixed) batch.
type shard struct {
	a [][2]float32
	b []float32
}

// Len makes *shard a decentral.Batch: it holds len(b) samples.
func (s *shard) Len() int { return len(s.b) }

// fixedBatches is a decentral.BatchSource that hands node i its whole shard.
type fixedBatches []*shard

func (f fixedBatches) Sample(node int) decentral.Batch { return f[node] }

// leastSquares is a decentral.Oracle: the exact gradient
// (1/n) Σ_r (a_r·x − b_r) a_r of a shard.
type leastSquares struct{}

func (leastSquares) Grad(_ int, x []float32, b decentral.Batch, grad []float32) (float32, error) {
	s := b.(*shard)
	var loss, g0, g1 float32
	for r, a := range s.a {
		res := a[0]*x[0] + a[1]*x[1] - s.b[r]
		loss += res * res / 2
		g0 += res * a[0]
		g1 += res * a[1]
	}
	n := float32(len(s.b))
	grad[0], grad[1] = g0/n, g1/n
	return loss / n, nil
}

// Four nodes on a ring run DSGD on a least-squares problem whose nodes
// disagree: node i alone would settle at c_i = (4, 0), (0, 4), (2, 2) or
// (2, −2), with curvature 1, 4, 1 and 4, so together they minimise
// f = (1/4) Σ_i f_i at the curvature-weighted mean x* = (1.4, 1). The
// consensus error (1/m) Σ_i ‖x_i − x̄‖² and the distance ‖x̄ − x*‖ shrink as
// the step size η_t = η_0/√(1 + 0.1t) decays.
func Example() {
	// Rows (α, α) and (α, −α) with targets α(cx+cy) and α(cx−cy) give node i
	// the loss f_i(x) = (α²/2)‖x − c‖².
	node := func(alpha, cx, cy float32) *shard {
		return &shard{
			a: [][2]float32{{alpha, alpha}, {alpha, -alpha}},
			b: []float32{alpha * (cx + cy), alpha * (cx - cy)},
		}
	}
	batches := fixedBatches{node(1, 4, 0), node(2, 0, 4), node(1, 2, 2), node(2, 2, -2)}
	xStar := [2]float64{1.4, 1}

	g, err := graph.Ring(4)
	if err != nil {
		panic(err)
	}
	mix, err := graph.NewMixing(graph.MixLaplacian, g)
	if err != nil {
		panic(err)
	}
	cfg := decentral.Config{Algorithm: decentral.DSGD, Workers: 1, StepSizes: decentral.StepSizes{Eta0: 0.2}}
	opt, err := decentral.New(cfg, mix, batches, leastSquares{}, []float32{0, 0})
	if err != nil {
		panic(err)
	}
	defer opt.Close()

	ctx := context.Background()
	if err := opt.Init(ctx); err != nil {
		panic(err)
	}
	xbar := make([]float32, opt.Dim())
	for opt.Round() < 10000 {
		if err := opt.Step(ctx); err != nil {
			panic(err)
		}
		if t := opt.Round(); t == 1 || t == 10 || t == 100 || t == 1000 || t == 10000 {
			opt.Mean(xbar)
			dist := math.Hypot(float64(xbar[0])-xStar[0], float64(xbar[1])-xStar[1])
			fmt.Printf("round %5d: consensus error %.1e, distance to x* %.1e\n", t, opt.ConsensusError(), dist)
		}
	}
	fmt.Printf("x̄ = (%.2f, %.2f), %d samples\n", xbar[0], xbar[1], opt.Counters().Samples)
	// Output:
	// round     1: consensus error 3.3e+00, distance to x* 8.6e-01
	// round    10: consensus error 2.2e+00, distance to x* 1.4e-01
	// round   100: consensus error 9.3e-01, distance to x* 7.9e-02
	// round  1000: consensus error 1.9e-01, distance to x* 2.8e-02
	// round 10000: consensus error 2.5e-02, distance to x* 9.0e-03
	// x̄ = (1.41, 1.00), 80000 samples
}
