package robust

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// Attacks by name, as ParseAttack takes them.
const (
	AttackSignFlip  = "signflip"
	AttackGauss     = "gauss"
	AttackALIE      = "alie"
	AttackIPM       = "ipm"
	AttackDissensus = "dissensus"
	AttackLabelFlip = "labelflip"
)

// AttackKinds is the forms ParseAttack accepts, for help texts.
const AttackKinds = "signflip[:s]|gauss[:σ]|alie[:z]|ipm[:ε]|dissensus[:ε]|labelflip"

// Attack is what the Byzantine nodes of a run (Config.Byzantine) do. Each
// round a Byzantine node b sends each honest neighbour j its own message
// m_bj in place of v_b, the vector it would have sent honestly, on every
// slab its method shares (x, and y or v where the method tracks a
// direction); to a Byzantine neighbour, a colluder, it sends v_b:
//
//	signflip:s    m_bj = −s · v_b                                   (s = 1)
//	gauss:σ       m_bj = v_b + σ ξ, ξ ~ N(0, I) drawn from a stream of
//	              (seed, round, b, j, slab)                          (σ = 1)
//	alie:z        m_bj = μ_j − z · σ_j   (Baruch et al., NeurIPS 2019)
//	ipm:ε         m_bj = −ε · μ_j        (Xie et al., UAI 2020)     (ε = 0.1)
//	dissensus:ε   m_bj = v_j − ε Σ_{k ∈ H_j} W_jk (v_k − v_j) / Σ_{c ∈ B_j} W_jc
//	              (He, Karimireddy, Jaggi 2022)                      (ε = 1)
//	labelflip     the honest protocol on the node's share with labels
//	              y → C − 1 − y (the data layer flips them; no message lies)
//
// H_j and B_j are j's honest and Byzantine neighbours, and μ_j and σ_j the
// coordinate-wise mean and (population) standard deviation of the vectors
// H_j send j this round (j's own vector when H_j is empty). alie, ipm and
// dissensus are omniscient: the attacker reads the honest vectors its
// target receives. Without z, alie takes Baruch et al.'s z_max for the n =
// |N̄_j| vectors j combines of which f = |B_j| lie: z = Φ⁻¹((n − s)/n),
// s = ⌊n/2 + 1⌋ − f (1 when that is not in (0, 1)). Under plain gossip
// dissensus moves j by (1 − ε) times its honest gossip step: ε = 1
// cancels j's mixing, ε > 1 reverses it.
//
// Every message depends only on the run's seed, the round, the two nodes,
// the slab and the vectors of the round, so a run stays the same bit for
// bit whatever its workers and processes. The optimizer running b makes
// the messages and sends them through a [ScatterExchange]; an omniscient
// attack reads v_j and H_j's vectors there, so over several processes
// b's must run j and H_j ([CheckPlacement]).
type Attack struct {
	// Name is one of the Attack* names; empty is no attack.
	Name string
	// Param is the attack's parameter ≥ 0 (s, σ, z, ε); NaN takes the
	// default (alie's z from the neighbourhood).
	Param float64
}

// ParseAttack returns the attack spec names, such as "signflip:1" or
// "alie"; empty is no attack.
func ParseAttack(spec string) (Attack, error) {
	if spec == "" {
		return Attack{}, nil
	}
	name, arg, hasArg := strings.Cut(spec, ":")
	a := Attack{Name: name, Param: math.NaN()}
	switch name {
	case AttackSignFlip, AttackGauss, AttackALIE, AttackIPM, AttackDissensus:
	case AttackLabelFlip:
		if !hasArg {
			return a, nil
		}
		return Attack{}, fmt.Errorf("attack %q: labelflip takes no parameter", spec)
	default:
		return Attack{}, fmt.Errorf("attack %q: want %s", spec, AttackKinds)
	}
	if hasArg {
		x, err := strconv.ParseFloat(arg, 64)
		if err != nil || !(x >= 0) || math.IsInf(x, 0) {
			return Attack{}, fmt.Errorf("attack %q: want a finite parameter ≥ 0", spec)
		}
		a.Param = x
	}
	return a, nil
}

// String returns the attack in its flag form.
func (a Attack) String() string {
	if a.Name == "" || math.IsNaN(a.Param) {
		return a.Name
	}
	return a.Name + ":" + strconv.FormatFloat(a.Param, 'g', -1, 64)
}

// Lies reports whether the attack changes messages: every attack but none
// and labelflip, whose nodes lie in their data instead.
func (a Attack) Lies() bool { return a.Name != "" && a.Name != AttackLabelFlip }

// Omniscient reports whether the attack reads the honest vectors its
// target receives (alie, ipm, dissensus).
func (a Attack) Omniscient() bool {
	return a.Name == AttackALIE || a.Name == AttackIPM || a.Name == AttackDissensus
}

// param returns Param, or def when it is NaN (not given).
func (a Attack) param(def float64) float64 {
	if math.IsNaN(a.Param) {
		return def
	}
	return a.Param
}

// validate refuses an attack that is not one of ParseAttack's.
func (a Attack) validate() error {
	if a.Name == "" {
		return nil
	}
	if _, err := ParseAttack(a.Name); err != nil {
		return err
	}
	if !math.IsNaN(a.Param) && (!(a.Param >= 0) || math.IsInf(a.Param, 0)) {
		return fmt.Errorf("attack %s: want a finite parameter ≥ 0", a)
	}
	return nil
}

// alieZ returns Baruch et al.'s z_max for n vectors of which f lie.
func alieZ(n, f int) float64 {
	s := n/2 + 1 - f
	p := float64(n-s) / float64(n)
	if !(p > 0 && p < 1) {
		return 1
	}
	return math.Sqrt2 * detmath.Erfinv(2*p-1)
}
