package decentral

import (
	"fmt"
	"math"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// DefaultDecay is the paper's step-size decay: η_t = η_0/(1 + 0.1 t)^power.
const DefaultDecay = 0.1

// Step-size exponents: DSGD and GNSD decay with the square root, GT-STORM
// with the cube root (paper §4).
const (
	SqrtPower = 0.5
	CbrtPower = 1.0 / 3
)

// Schedule gives the step size η_t = Eta0/(1 + Decay·t)^Power and GT-STORM's
// momentum weight β_{t+1} = 1 − Rho·η_t², clipped to [0, 1]. Rho = 0 stands
// for the paper's default 1/Eta0², evaluated as 1 − (η_t/η_0)² so that β_1 is
// exactly 0.
type Schedule struct {
	Eta0  float64
	Decay float64
	Power float64
	Rho   float64
}

// Validate reports a schedule whose values are not finite or out of range.
func (s Schedule) Validate() error {
	switch {
	case !(s.Eta0 > 0) || math.IsInf(s.Eta0, 0):
		return fmt.Errorf("schedule: eta0 = %v, want a finite value > 0", s.Eta0)
	case !(s.Decay >= 0) || math.IsInf(s.Decay, 0):
		return fmt.Errorf("schedule: decay = %v, want a finite value ≥ 0", s.Decay)
	case !(s.Power >= 0) || math.IsInf(s.Power, 0):
		return fmt.Errorf("schedule: power = %v, want a finite value ≥ 0", s.Power)
	case !(s.Rho >= 0) || math.IsInf(s.Rho, 0):
		return fmt.Errorf("schedule: rho = %v, want a finite value ≥ 0", s.Rho)
	}
	return nil
}

// Eta returns η_t.
func (s Schedule) Eta(t int) float64 {
	return s.Eta0 / pow(1+float64(s.Decay*float64(t)), s.Power)
}

// Beta returns β_t = 1 − ρη_{t−1}² clipped to [0, 1], the weight GT-STORM's
// round t gives to the mixed v_{t−1}; β_1 = 0 with the default ρ. For t ≤ 0
// it returns 0: v_0 is a plain stochastic gradient.
func (s Schedule) Beta(t int) float64 {
	if t <= 0 {
		return 0
	}
	eta := s.Eta(t - 1)
	if s.Rho == 0 {
		r := eta / s.Eta0
		return min(max(1-float64(r*r), 0), 1)
	}
	return min(max(1-float64(s.Rho*eta*eta), 0), 1)
}

// RhoValue returns ρ, resolving Rho = 0 to 1/Eta0².
func (s Schedule) RhoValue() float64 {
	if s.Rho == 0 {
		return 1 / (s.Eta0 * s.Eta0)
	}
	return s.Rho
}

// pow returns x^y. For y = 1/2 and y = 1/3 (the float64 nearest a third) the
// result is correctly rounded, like C's pow in glibc for all but rare
// near-halfway cases, so a schedule matches a reference implementation in
// another language bit for bit; math.Pow is not correctly rounded.
func pow(x, y float64) float64 {
	switch {
	case y == 0.5:
		return math.Sqrt(x)
	case y == CbrtPower && x > 0 && !math.IsInf(x, 0):
		return thirdPower(x)
	}
	return detmath.Pow(x, y)
}

// thirdPower returns x^(1/3) for the float64 1/3 = 1/3 − 2⁻⁵⁴/3, correctly
// rounded but for halfway cases: the cube root refined by one Newton step in
// double-double arithmetic, times x^(−2⁻⁵⁴/3) ≈ 1 − (2⁻⁵⁴/3)·ln x.
func thirdPower(x float64) float64 {
	y := detmath.Cbrt(x)
	sqHi := float64(y * y)
	sqLo := math.FMA(y, y, -sqHi)
	cubeHi := float64(sqHi * y)
	cubeLo := math.FMA(sqHi, y, -cubeHi) + float64(sqLo*y)
	newton := ((x - cubeHi) - cubeLo) / float64(3*sqHi)
	const delta = 1.0 / (3 * (1 << 54))
	return y + (newton - float64(y*delta*detmath.Log(x)))
}
