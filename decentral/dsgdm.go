package decentral

import (
	"math"
	"slices"
)

// DSGDM is the name of DSGD with local momentum in Config.Algorithm.
const DSGDM = "dsgdm"

// DSGDMMethod is DSGD with local heavy-ball or Nesterov momentum, adapt then
// combine (Lin et al. 2021; SPEC §14). Each round a node takes LocalSteps
// local steps, each on a new minibatch g_i at its current local point,
//
//	b_i ← μ b_i + g_i,  d_i = g_i + μ b_i (Nesterov) or b_i,  x_i ← x_i − η_t d_i,
//
// and then gossips once: x_{i,t+1} = Σ_j W_ij x_{j,t+½}. With μ = 0 it is
// adapt-then-combine DSGD; with LocalSteps > 1 decentralized local SGD
// (Koloskova et al. 2020). A node sends x_{t+½} (p floats) per neighbour and
// keeps the momentum buffer b (p floats) beyond the model. Its slab h holds
// x_{t+½}, the round's message, which Prepare writes before the messages go
// out; it is not state between rounds.
type DSGDMMethod struct {
	// Momentum is μ in [0, 1); 0, torch.optim.SGD's default, is no momentum.
	Momentum float64
	// Nesterov takes Nesterov's direction g + μb instead of b.
	Nesterov bool
	// LocalSteps is τ, the local steps between gossips; 0 means 1.
	LocalSteps int
}

// DSGDM's slabs.
const (
	dsgdmX = iota
	dsgdmB
	dsgdmH
)

// momentumKnobs are the knobs DSGDm and QG-DSGDm share: Momentum and
// Nesterov.
var momentumKnobs = []Knob{
	FloatKnob("momentum", "dsgdm, qg-dsgdm: momentum μ in [0, 1) (0: none, torch.optim.SGD's default)", 0, func(mu float64) string {
		if !(mu >= 0 && mu < 1) {
			return "a momentum μ in [0, 1)"
		}
		return ""
	}),
	BoolKnob("nesterov", "dsgdm, qg-dsgdm: Nesterov's momentum direction instead of heavy ball"),
}

// dsgdmKnobs are DSGDm's knobs: the momentum's and LocalSteps.
var dsgdmKnobs = append(slices.Clip(momentumKnobs), func() Knob {
	k := IntKnob("local-steps", "dsgdm: local steps τ, each on a new minibatch, between gossips", 1, func(tau int) string {
		if tau < 1 {
			return "at least 1 local step"
		}
		return ""
	})
	k.strictParse = true
	return k
}())

// newDSGDM makes DSGDm from its knobs "momentum", "nesterov" and
// "local-steps".
func newDSGDM(k Knobs) Method {
	return DSGDMMethod{Momentum: k.Float("momentum"), Nesterov: k.Bool("nesterov"), LocalSteps: k.Int("local-steps")}
}

// Steps returns τ, LocalSteps or 1 when it is 0.
func (m DSGDMMethod) Steps() int { return max(m.LocalSteps, 1) }

// Validate refuses a momentum outside [0, 1) and negative local steps.
func (m DSGDMMethod) Validate() error {
	return checkKnobs(dsgdmKnobs, Knobs{"momentum": m.Momentum, "local-steps": m.LocalSteps})
}

// Describe describes DSGDm: x, the momentum buffer b and the message
// x_{t+½}, which it shares.
func (DSGDMMethod) Describe() Description {
	return Description{Name: DSGDM, Slabs: []string{"x", "b", "h"}, Shared: []int{dsgdmH},
		StateFloats: 1, Power: SqrtPower}
}

// Init clears the momentum buffer; DSGDm evaluates nothing before its first
// round.
func (DSGDMMethod) Init(c RoundContext) error {
	clear(c.Cur(dsgdmB))
	clear(c.Cur(dsgdmH))
	c.SetLoss(math.NaN())
	return nil
}

// Prepare takes the round's local steps from x into h = x_{t+½}, the
// message, and the next momentum buffer.
func (m DSGDMMethod) Prepare(c RoundContext) error {
	x, h := c.Cur(dsgdmX), c.Cur(dsgdmH)
	b, bn := c.Cur(dsgdmB), c.Next(dsgdmB)
	g, _ := c.Scratch()
	copy(h, x)
	copy(bn, b)
	for s := range m.Steps() {
		loss, err := c.Grad(h, c.Batch(), g)
		if err != nil {
			return err
		}
		if s == 0 {
			c.SetLoss(float64(loss)) // at the node's own x_t
		}
		momentumStep(h, bn, g, float32(m.Momentum), m.Nesterov, c.Eta())
	}
	if err := checkFinite("b", bn); err != nil {
		return err
	}
	return checkFinite("x", h)
}

// momentumStep sets b ← μb + g and x ← x − η·d with d = g + μb (nesterov)
// or b: torch.optim.SGD's step without dampening.
func momentumStep(x, b, g []float32, mu float32, nesterov bool, eta float32) {
	b, g = b[:len(x)], g[:len(x)]
	for k := range x {
		bk := float32(mu*b[k]) + g[k]
		b[k] = bk
		d := bk
		if nesterov {
			d = g[k] + float32(mu*bk)
		}
		x[k] -= float32(eta * d)
	}
}

// Step gossips the local models: x_{t+1} = Σ_j W_ij x_{j,t+½}.
func (DSGDMMethod) Step(c RoundContext) error {
	xn := c.Next(dsgdmX)
	c.Mix(xn, 0, c.Cur(dsgdmH))
	return checkFinite("x", xn)
}

// Samples is one minibatch per local step, none at Init.
func (m DSGDMMethod) Samples(t int, c Cost) int64 {
	if t == 0 {
		return 0
	}
	return int64(m.Steps()) * int64(c.Batch)
}
