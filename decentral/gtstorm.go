package decentral

import "math"

// GTSTORM is the name of GT-STORM in Config.Algorithm.
const GTSTORM = "gt-storm"

// rhoKnob is GT-STORM's ρ in β_{t+1} = 1 − ρη_t², a knob of the step-size
// schedule ([StepSizes].Rho) that only GT-STORM's β reads.
var rhoKnob = func() Knob {
	k := FloatKnob("rho", "GT-STORM's ρ in β = 1 − ρη² (0: 1/η_0², so β_1 = 0)", 0, func(rho float64) string {
		if !(rho >= 0) || math.IsInf(rho, 0) {
			return "a finite ρ ≥ 0 (0 means 1/η_0²)"
		}
		return ""
	})
	k.Schedule = true
	return k
}()

// GTSTORMMethod is GT-STORM (paper Algorithm 1): gradient tracking with a
// STORM-style recursive momentum estimator.
//
//	x_{i,0} = x^0,  v_{i,0} = ∇f_i(x_{i,0}; ζ_{i,0})
//	x_{i,t} = Σ_j W_ij x_{j,t−1} − η_{t−1} v_{i,t−1}
//	v_{i,t} = β_t Σ_j W_ij v_{j,t−1} + ∇f_i(x_{i,t}; ζ_{i,t}) − β_t ∇f_i(x_{i,t−1}; ζ_{i,t})
//
// with ONE minibatch ζ_{i,t} per node and round, used for both gradients.
// A node sends x and v (2p floats) per neighbour and keeps v and x_{t−1}
// (2p floats) beyond the model: two gradient evaluations per round.
//
// Its momentum weight β_{t+1} = 1 − ρη_t² is the [Schedule]'s (Config.Rho),
// like the step sizes: the driver computes both, reports them and saves them
// in a Snapshot, and the method reads them from the RoundContext.
type GTSTORMMethod struct{}

// GT-STORM's slabs.
const (
	gtstormX = iota
	gtstormV
)

// Describe describes GT-STORM: x and v, both shared, v tracked and weighed
// with β.
func (GTSTORMMethod) Describe() Description {
	return Description{Name: GTSTORM, Slabs: []string{"x", "v"}, Shared: []int{gtstormX, gtstormV},
		Direction: gtstormV, StateFloats: 2, Power: CbrtPower, Momentum: true}
}

// Init sets v_0, the gradient at x_0.
func (GTSTORMMethod) Init(c RoundContext) error {
	v := c.Cur(gtstormV)
	loss, err := c.Grad(c.Cur(gtstormX), c.Batch(), v)
	if err != nil {
		return err
	}
	c.SetLoss(float64(loss))
	return checkFinite("v", v)
}

// Step mixes x and v and forms the STORM estimator.
func (GTSTORMMethod) Step(c RoundContext) error {
	x, xn := c.Cur(gtstormX), c.Next(gtstormX) // x_{t−1}, x_t
	v, vn := c.Cur(gtstormV), c.Next(gtstormV) // v_{t−1}, v_t
	gNew, gOld := c.Scratch()
	c.Mix(xn, 0, x)
	addScaled(xn, -c.Eta(), v)
	c.Mix(vn, 1, v)
	loss, err := c.GradPair(xn, x, c.Batch(), gNew, gOld)
	if err != nil {
		return err
	}
	c.SetLoss(float64(loss))
	beta := c.Beta()
	gOld, gNew = gOld[:len(vn)], gNew[:len(vn)]
	for k := range vn {
		vn[k] = float32(beta*(vn[k]-gOld[k])) + gNew[k]
	}
	if err := checkFinite("x", xn); err != nil {
		return err
	}
	return checkFinite("v", vn)
}

// Samples is one minibatch at Init (v_0), then two gradients a round on
// one minibatch.
func (GTSTORMMethod) Samples(t int, c Cost) int64 {
	if t == 0 {
		return int64(c.Batch)
	}
	return 2 * int64(c.Batch)
}
