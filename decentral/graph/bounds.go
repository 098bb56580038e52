package graph

import (
	"fmt"
	"math"
)

// This file gives bounds on W's spectrum beyond λ (spectrum.go) for the
// methods that need them: D²'s CheckMixing asks for λ_min(W) (package decentral).

// LambdaMin returns the smallest eigenvalue of the symmetric W: from the
// dense eigendecomposition for m ≤ denseSpectrumMax, else by Lanczos on the
// complement of the all-ones vector (whose eigenvalue, 1, is never the
// smallest).
func (mx *Mixing) LambdaMin() (float64, error) {
	m := mx.Nodes()
	if m == 1 {
		self, _ := mx.Row(0)
		return self, nil
	}
	if m <= denseSpectrumMax {
		ev, err := eigenvalues(flatten(mx.Dense()), m)
		if err != nil {
			return 0, fmt.Errorf("λ_min of a %d-node %s mixing matrix: %w", m, mx.Name(), err)
		}
		return ev[0], nil
	}
	lo, _, err := lanczos(m, mx.apply, wantLow)
	if err != nil {
		return 0, fmt.Errorf("λ_min of a %d-node %s mixing matrix: %w", m, mx.Name(), err)
	}
	return min(lo, 1), nil
}

// GershgorinMin returns min_i (W_ii − Σ_{j≠i} |W_ij|), a lower bound on the
// real part of every eigenvalue of W.
func (mx *Mixing) GershgorinMin() float64 {
	bound := math.Inf(1)
	for i := range mx.Nodes() {
		self, row := mx.Row(i)
		r := 0.0
		for _, v := range row {
			r += math.Abs(v)
		}
		bound = min(bound, self-r)
	}
	return bound
}
