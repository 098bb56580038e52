package decentral

import (
	"fmt"
	"math"
)

// QGDSGDM is the name of DSGD with quasi-global momentum in
// Config.Algorithm.
const QGDSGDM = "qg-dsgdm"

// QGDSGDMMethod is DSGD with quasi-global momentum (Lin et al. ICML 2021;
// SPEC §14): the momentum m̂ is built from the model's change over a whole
// round, gossip included, rather than from the local gradients alone:
//
//	tmp = μ m̂_i + g_i,  d_i = g_i + μ·tmp (Nesterov) or tmp
//	x_{i,t+½} = x_{i,t} − η_t d_i,  x_{i,t+1} = Σ_j W_ij x_{j,t+½}
//	m̂_i ← μ m̂_i + (1 − μ)(x_{i,t} − x_{i,t+1})/η_t
//
// A node sends x_{t+½} (p floats) per neighbour and keeps m̂ and x_t (2p
// floats) beyond the model. Its slab h holds x_{t+½}, the round's message,
// which Prepare writes before the messages go out.
type QGDSGDMMethod struct {
	// Momentum is μ in [0, 1); 0 is adapt-then-combine DSGD.
	Momentum float64
	// Nesterov takes the direction g + μ·tmp instead of tmp.
	Nesterov bool
}

// QG-DSGDm's slabs.
const (
	qgX = iota
	qgM
	qgH
)

// newQGDSGDM makes QG-DSGDm from its knobs "momentum" and "nesterov".
func newQGDSGDM(k Knobs) Method {
	return QGDSGDMMethod{Momentum: k.Float("momentum"), Nesterov: k.Bool("nesterov")}
}

// Validate refuses a momentum outside [0, 1).
func (m QGDSGDMMethod) Validate() error {
	return checkKnobs(momentumKnobs, Knobs{"momentum": m.Momentum})
}

// Describe describes QG-DSGDm: x, the quasi-global momentum m̂ and the
// message x_{t+½}, which it shares.
func (QGDSGDMMethod) Describe() Description {
	return Description{Name: QGDSGDM, Slabs: []string{"x", "m", "h"}, Shared: []int{qgH},
		StateFloats: 2, Power: SqrtPower}
}

// Init clears m̂; QG-DSGDm evaluates nothing before its first round.
func (QGDSGDMMethod) Init(c RoundContext) error {
	clear(c.Cur(qgM))
	clear(c.Cur(qgH))
	c.SetLoss(math.NaN())
	return nil
}

// Prepare takes the local step from x into h = x_{t+½}, the message.
func (m QGDSGDMMethod) Prepare(c RoundContext) error {
	x, h, mh := c.Cur(qgX), c.Cur(qgH), c.Cur(qgM)
	g, _ := c.Scratch()
	loss, err := c.Grad(x, c.Batch(), g)
	if err != nil {
		return err
	}
	c.SetLoss(float64(loss))
	mu, eta := float32(m.Momentum), c.Eta()
	x, mh, g = x[:len(h)], mh[:len(h)], g[:len(h)]
	for k := range h {
		d := float32(mu*mh[k]) + g[k]
		if m.Nesterov {
			d = g[k] + float32(mu*d)
		}
		h[k] = x[k] - float32(eta*d)
	}
	return checkFinite("x", h)
}

// Step gossips the local models and updates m̂ with the round's change.
func (m QGDSGDMMethod) Step(c RoundContext) error {
	x, xn := c.Cur(qgX), c.Next(qgX)
	mh, mn := c.Cur(qgM), c.Next(qgM)
	c.Mix(xn, 0, c.Cur(qgH))
	mu := float32(m.Momentum)
	w := float32((1 - m.Momentum) / float64(c.Eta()))
	if math.IsInf(float64(w), 0) {
		// η_t is 0 or too small for float32: the round's change over η_t
		// has no finite value. Not a divergence of the model, a schedule
		// this method cannot take.
		return fmt.Errorf("qg-dsgdm divides the round's change of x by η_t = %g (float32), which leaves no finite momentum; want a schedule (--schedule, --eta0) whose every step is above about 1e-38", c.Eta())
	}
	x, mh, mn = x[:len(xn)], mh[:len(xn)], mn[:len(xn)]
	for k := range xn {
		mn[k] = float32(mu*mh[k]) + float32(w*(x[k]-xn[k]))
	}
	if err := checkFinite("m", mn); err != nil {
		return err
	}
	return checkFinite("x", xn)
}

// Samples is one minibatch a round, none at Init.
func (QGDSGDMMethod) Samples(t int, c Cost) int64 {
	if t == 0 {
		return 0
	}
	return int64(c.Batch)
}
