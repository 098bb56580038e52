package robust

import (
	"math"
	"slices"
	"strconv"

	"github.com/gtstorm/gtstorm/decentral"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// Clip is self-centred clipping (He, Karimireddy, Jaggi 2022, "Byzantine-
// robust decentralized learning via ClippedGossip"):
//
//	v_i ← v_i + Σ_{j ∈ N_i} W_ij · CLIP(v_j − v_i, τ_i),  CLIP(z, τ) = z · min(1, τ/‖z‖).
//
// A neighbour's pull on node i is at most W_ij τ_i, however far its vector
// lies. The rule is computed as gossip over the clipped vectors v_i +
// CLIP(v_j − v_i, τ_i) — the same thing, since row i of W sums to 1 —
// and a clipped neighbour only changes the weights: it keeps W_ij·c of its
// own vector and hands W_ij·(1 − c) to v_i, c = τ_i/‖v_j − v_i‖. With no
// neighbour clipped (τ = +Inf, say) it is plain gossip bit for bit.
//
// Tau = 0 chooses τ_i adaptively, each round and for each node and slab,
// by the rule of the authors' implementation (SelfCenteredClipping in
// github.com/epfml/byzantine-robust-decentralized-optimizer): τ_i is the
// second-largest of the distances ‖v_j − v_i‖ over the neighbours, the
// largest for a node of one neighbour. The farthest neighbour is thus
// always pulled in to the second-farthest's distance; the paper's theorem
// instead sets τ_i² = (1/δ_i) Σ_{j honest} W_ij ‖v_j − v_i‖² (δ_i the
// Byzantine weight at i), which needs to know who is honest.
type Clip struct {
	// Tau is the clipping radius τ > 0 (+Inf clips nothing); 0 is adaptive.
	Tau float64
}

// String returns "clip:τ", or "clip" for the adaptive radius.
func (c Clip) String() string {
	if c.Tau == 0 {
		return AggClip
	}
	return AggClip + ":" + strconv.FormatFloat(c.Tau, 'g', -1, 64)
}

// Check accepts every W.
func (Clip) Check(*graph.Mixing) error { return nil }

// Aggregate sets dst to own plus the clipped pulls of the neighbours.
func (c Clip) Aggregate(dst, own []float32, self float32, ws []float32, vecs [][]float32, s *Scratch) {
	n := len(vecs)
	d := s.Float64(2 * n)
	dist, sorted := d[:n], d[n:]
	for k, v := range vecs {
		dist[k] = vecDistance(v, own)
	}
	tau := c.Tau
	if tau == 0 && n > 0 {
		copy(sorted, dist)
		slices.Sort(sorted)
		tau = sorted[max(n-2, 0)]
	}
	// A vector that is not finite and clipped weighs nothing (and is
	// replaced by own, as 0 · NaN would still poison the sum).
	dropped := func(dk float64) bool { return math.IsNaN(dk) || math.IsInf(dk, 1) && dk > tau }
	w := s.Float32(n)
	selfW := float64(self)
	clipped := false
	for k, dk := range dist {
		w[k] = ws[k]
		if dk > tau || math.IsNaN(dk) {
			f := tau / dk
			if dropped(dk) {
				f = 0
			}
			w[k] = float32(float64(ws[k]) * f)
			selfW += float64(float64(ws[k]) * (1 - f))
			clipped = true
		}
	}
	if !clipped {
		selfW = float64(self)
	}
	decentral.Gossip(dst, float32(selfW), own, w, n, func(k int) []float32 {
		if dropped(dist[k]) {
			return own
		}
		return vecs[k]
	})
}
