package decentral

import (
	"cmp"
	"fmt"
)

// DGET is the name of D-GET in Config.Algorithm.
const DGET = "d-get"

// DefaultPeriod is D-GET's default period q.
const DefaultPeriod = 100

// DGETMethod is D-GET (Sun, Lu, Hong, ICML 2020): gradient tracking of a
// SARAH/SPIDER-type estimator v that restarts from a large-batch gradient
// every q rounds (Period), with a constant step η_0:
//
//	v_{i,0}   = y_{i,0} = ∇f_i(x_0; S1)
//	x_{i,t+1} = Σ_j W_ij x_{j,t} − η_0 y_{i,t}
//	v_{i,t+1} = ∇f_i(x_{i,t+1}; S1)                                   if (t+1) mod q = 0
//	v_{i,t+1} = v_{i,t} + ∇f_i(x_{i,t+1}; ζ_{i,t+1}) − ∇f_i(x_{i,t}; ζ_{i,t+1})  otherwise
//	y_{i,t+1} = Σ_j W_ij y_{j,t} + v_{i,t+1} − v_{i,t}
//
// S1 is the node's whole share or BigBatch samples of it (the batch
// source must be a [FullBatcher]); ζ_{i,t+1} is one minibatch used at both
// points, as GT-STORM's. Init draws and discards ζ_{i,0}, and every round
// draws ζ_{i,t+1} even when it takes S1, so that a node's t-th draw is round
// t's minibatch as for every other algorithm. A node sends x and y (2p
// floats) per neighbour and keeps y and v (2p floats) beyond the model.
type DGETMethod struct {
	// Period is q, the rounds between large-batch gradients; 0 means
	// DefaultPeriod.
	Period int
	// BigBatch is the size of the large batch S1: that many samples drawn
	// from the node's share, or its whole share when 0.
	BigBatch int
}

// dgetKnobs are D-GET's knobs: Period and BigBatch.
var dgetKnobs = []Knob{
	IntKnob("period", "D-GET: rounds q between large-batch gradients", DefaultPeriod, func(q int) string {
		if q < 0 {
			return fmt.Sprintf("a positive round count (0: %d)", DefaultPeriod)
		}
		return ""
	}),
	IntKnob("big-batch", "D-GET: samples in the large batch S1, drawn from the node's share each time (0: the whole share)", 0, func(n int) string {
		if n < 0 {
			return "0 (the node's whole share) or a positive sample count"
		}
		return ""
	}),
}

// newDGET makes D-GET from its knobs "period" and "big-batch".
func newDGET(k Knobs) Method {
	return DGETMethod{Period: k.Int("period"), BigBatch: k.Int("big-batch")}
}

// knobs returns m's knobs by name.
func (m DGETMethod) knobs() Knobs { return Knobs{"period": m.Period, "big-batch": m.BigBatch} }

// ShareBatch returns BigBatch, the size of the large batch D-GET draws
// from a node's share, and its knob.
func (m DGETMethod) ShareBatch() (knob Knob, size int) { return dgetKnobs[1], m.BigBatch }

// PeriodOrDefault returns Period, or DefaultPeriod when it is 0.
func (m DGETMethod) PeriodOrDefault() int {
	if m.Period > 0 {
		return m.Period
	}
	return DefaultPeriod
}

// Validate refuses a negative period or large batch.
func (m DGETMethod) Validate() error { return checkKnobs(dgetKnobs, m.knobs()) }

// D-GET's slabs.
const (
	dgetX = iota
	dgetY
	dgetV
)

// Describe describes D-GET: x, y and v, of which it shares x and y and
// tracks y, on a constant step.
func (DGETMethod) Describe() Description {
	return Description{Name: DGET, Slabs: []string{"x", "y", "v"}, Shared: []int{dgetX, dgetY},
		Direction: dgetY, StateFloats: 2}
}

// Init sets v_0 = y_0, the large-batch gradient at x_0.
func (m DGETMethod) Init(c RoundContext) error {
	if c.Batch() == nil { // ζ_0: drawn to keep the draws aligned, not used
		return errNoBatch
	}
	v := c.Cur(dgetV)
	loss, err := c.FullGrad(c.Cur(dgetX), v, m.BigBatch)
	if err != nil {
		return err
	}
	c.SetLoss(float64(loss))
	copy(c.Cur(dgetY), v)
	return checkFinite("v", v)
}

// Step mixes x and y and tracks the new estimator v.
func (m DGETMethod) Step(c RoundContext) error {
	x, xn := c.Cur(dgetX), c.Next(dgetX)
	y, yn := c.Cur(dgetY), c.Next(dgetY)
	v, vn := c.Cur(dgetV), c.Next(dgetV)
	c.Mix(xn, 0, x)
	addScaled(xn, -c.Eta(), y)
	b := c.Batch()
	var (
		loss float32
		err  error
	)
	if (c.Round()+1)%m.PeriodOrDefault() == 0 {
		// The large batch: FullGrad uses the scratch buffers itself.
		if b == nil {
			return errNoBatch
		}
		loss, err = c.FullGrad(xn, vn, m.BigBatch)
	} else {
		gNew, gOld := c.Scratch()
		loss, err = c.GradPair(xn, x, b, gNew, gOld)
		if err == nil {
			copy(vn, v)
			add(vn, gNew)
			sub(vn, gOld)
		}
	}
	if err != nil {
		return err
	}
	c.SetLoss(float64(loss))
	c.Mix(yn, 1, y)
	v, vn = v[:len(yn)], vn[:len(yn)]
	for k := range yn {
		yn[k] += vn[k] - v[k]
	}
	if err := checkFinite("x", xn); err != nil {
		return err
	}
	return checkFinite("y", yn)
}

// Samples is S1 at Init and every q-th round (BigBatch, or c.Full for the
// whole share), two gradients on one minibatch in the other rounds.
func (m DGETMethod) Samples(t int, c Cost) int64 {
	if t == 0 || t%m.PeriodOrDefault() == 0 {
		return int64(cmp.Or(m.BigBatch, c.Full))
	}
	return 2 * int64(c.Batch)
}
