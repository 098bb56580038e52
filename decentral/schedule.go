package decentral

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

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

// StepSizes are the step-size settings of a run, which a [Config] and a
// run's settings in package train share (its JSON form is that of
// config.json): with the method's own exponent and the run's round count
// they make its [Schedule].
type StepSizes struct {
	// Eta0 is the initial step size η_0 > 0.
	Eta0 float64 `json:"eta0"`
	// Rho is GT-STORM's ρ ≥ 0 in β_{t+1} = 1 − ρη_t²; 0 means the paper's
	// default 1/η_0² (β_1 = 0 exactly). A tiny ρ such as 1e-300 gives β = 1.
	// Like η_0 it is a knob of the schedule, not of the method, though only
	// GT-STORM takes it (see [Knob.Schedule]).
	Rho float64 `json:"rho"`
	// CubeRoot puts every algorithm with a decaying step on
	// η_t = η_0/(1 + 0.1t)^{1/3} (paper appendix A.1); otherwise DSGD, D²
	// and GNSD use the square root. D-GET's constant step stays constant.
	CubeRoot bool `json:"cube_root"`
	// ConstantStep puts every algorithm on η_t = η_0, the setting of
	// constant-step analyses (DSGD's heterogeneity bias is then a fixed
	// distance from the optimum). It overrides CubeRoot.
	ConstantStep bool `json:"constant_step,omitempty"`
	// StepSchedule is the step-size schedule of SPEC §14 (`--schedule`):
	// "" or "paper" is the schedule above, "constant" is ConstantStep,
	// "cosine" and "step:S1,S2,…[@γ]" decay over the run's rounds.
	StepSchedule string `json:"schedule,omitempty"`
	// Warmup K > 0 multiplies every η_t by min(1, (t + 1)/K).
	Warmup int `json:"warmup,omitempty"`
}

// KnobField returns the field of s that the method knob named name, a
// knob of the schedule (see [Knob.Schedule]), sets: Rho for GT-STORM's
// rho; nil for another name.
func (s *StepSizes) KnobField(name string) *float64 {
	if name == rhoKnob.Name {
		return &s.Rho
	}
	return nil
}

// Schedule gives the step size η_t and GT-STORM's momentum weight
// β_{t+1} = 1 − Rho·η_t², clipped to [0, 1]. Rho = 0 stands for the paper's
// default 1/Eta0², evaluated as 1 − (η_t/η_0)² so that β_1 is exactly 0.
//
// Shape "" is the paper's η_t = Eta0/(1 + Decay·t)^Power (SPEC §3); "cosine"
// is Eta0(1 + cos(πt/Rounds))/2 and "step:S1,S2,…@γ" multiplies Eta0 by γ at
// each round ⌊S_k·Rounds⌋ (SPEC §14). Warmup K > 0 multiplies any of them by
// min(1, (t + 1)/K). The zero Shape and Warmup keep the paper's bits.
type Schedule struct {
	Eta0  float64
	Decay float64
	Power float64
	Rho   float64
	// Shape is "", "cosine" or "step:S1,S2,…@γ" in ParseSchedule's
	// canonical form; Rounds is the run's T, which cosine and step read.
	Shape  string `json:",omitempty"`
	Rounds int    `json:",omitempty"`
	Warmup int    `json:",omitempty"`
}

// Schedule shapes of Config.StepSchedule and `--schedule`.
const (
	SchedulePaper    = "paper"
	ScheduleConstant = "constant"
	ScheduleCosine   = "cosine"
	ScheduleStep     = "step"
)

// DefaultStepGamma is the factor a step schedule multiplies η by at each
// milestone when its spec gives none.
const DefaultStepGamma = 0.1

// ParseSchedule parses a --schedule value: paper, constant, cosine or
// step:S1,S2,…[@γ] with milestones 0 < S1 < S2 < … < 1 and 0 < γ, and
// returns the Schedule.Shape it stands for ("" for paper and constant,
// which Config.ConstantStep and the method's Power express) and whether it
// is constant. A step schedule's canonical form always lists γ.
func ParseSchedule(spec string) (shape string, constant bool, err error) {
	switch spec {
	case "", SchedulePaper:
		return "", false, nil
	case ScheduleConstant:
		return "", true, nil
	case ScheduleCosine:
		return ScheduleCosine, false, nil
	}
	ms, gamma, err := parseStep(spec)
	if err != nil {
		return "", false, err
	}
	parts := make([]string, len(ms))
	for k, s := range ms {
		parts[k] = strconv.FormatFloat(s, 'g', -1, 64)
	}
	return ScheduleStep + ":" + strings.Join(parts, ",") + "@" + strconv.FormatFloat(gamma, 'g', -1, 64), false, nil
}

// ScheduleWant says what a --schedule value may be.
const ScheduleWant = "paper, constant, cosine or step:S1,S2,…[@γ] with milestones increasing in (0, 1) and γ > 0"

// parseStep parses step:S1,S2,…[@γ] into its milestones and factor. Its
// errors read schedule "SPEC": what is wrong.
func parseStep(spec string) (ms []float64, gamma float64, err error) {
	rest, ok := strings.CutPrefix(spec, ScheduleStep+":")
	if !ok {
		return nil, 0, fmt.Errorf("schedule %q: want %s", spec, ScheduleWant)
	}
	list, g, hasGamma := strings.Cut(rest, "@")
	gamma = DefaultStepGamma
	if hasGamma {
		gamma, err = strconv.ParseFloat(g, 64)
		if err != nil || !(gamma > 0) || math.IsInf(gamma, 0) {
			return nil, 0, fmt.Errorf("schedule %q: factor γ = %q is not a finite number > 0", spec, g)
		}
	}
	for _, f := range strings.Split(list, ",") {
		s, err := strconv.ParseFloat(f, 64)
		switch {
		case err != nil || !(s > 0 && s < 1):
			return nil, 0, fmt.Errorf("schedule %q: milestone %q is not a fraction of the run in (0, 1)", spec, f)
		case len(ms) > 0 && s <= ms[len(ms)-1]:
			return nil, 0, fmt.Errorf("schedule %q: milestones %s do not increase", spec, list)
		}
		ms = append(ms, s)
	}
	return ms, gamma, nil
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
	case s.Warmup < 0 || s.Rounds < 0:
		return fmt.Errorf("schedule: warm-up %d over %d rounds, want ≥ 0", s.Warmup, s.Rounds)
	case s.Rounds > 0 && s.Warmup > s.Rounds:
		return fmt.Errorf("schedule: warm-up of %d rounds, want at most the run's %d", s.Warmup, s.Rounds)
	case s.Shape == "":
		return nil
	case s.Rounds < 1:
		return fmt.Errorf("schedule %s: want the run's round count", s.Shape)
	case s.Shape == ScheduleCosine:
		return nil
	}
	_, _, err := parseStep(s.Shape)
	return err
}

// Eta returns η_t.
func (s Schedule) Eta(t int) float64 {
	var eta float64
	switch {
	case s.Shape == "":
		eta = s.Eta0 / pow(1+float64(s.Decay*float64(t)), s.Power)
	case s.Shape == ScheduleCosine:
		c := cosRounded(float64(math.Pi*float64(t)) / float64(s.Rounds))
		eta = float64(s.Eta0*(1+c)) / 2
	default:
		ms, gamma, _ := parseStep(s.Shape) // Validate checked it
		f := 1.0
		for _, m := range ms {
			if t >= milestone(m, s.Rounds) {
				f = float64(f * gamma)
			}
		}
		eta = float64(s.Eta0 * f)
	}
	if s.Warmup > 0 && t+1 < s.Warmup {
		eta = float64(eta * (float64(t+1) / float64(s.Warmup)))
	}
	return eta
}

// milestone returns the round ⌊S·T⌋ of a step schedule's milestone S over
// T rounds, S read as the decimal fraction it was written as (its shortest
// form): 0.29 of 100 rounds is round 29, where the float64 product
// 0.29·100 = 28.999999999999996 would floor to 28.
func milestone(s float64, rounds int) int {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(s, 'g', -1, 64))
	if !ok {
		return int(math.Floor(float64(s * float64(rounds))))
	}
	r.Mul(r, new(big.Rat).SetInt64(int64(rounds)))
	return int(new(big.Int).Quo(r.Num(), r.Denom()).Int64()) // r ≥ 0: Quo floors
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

// cosRounded returns cos x correctly rounded, as glibc's cos gives it (the
// reference implementation's), for |x| up to a few π: its Taylor series
// summed in 256-bit arithmetic. math.Cos may be an ulp or two off, which a
// cosine schedule's η_t would show.
func cosRounded(x float64) float64 {
	const prec = 256
	x2 := new(big.Float).SetPrec(prec).SetFloat64(x)
	x2.Mul(x2, x2)
	sum := new(big.Float).SetPrec(prec).SetInt64(1)
	term := new(big.Float).SetPrec(prec).SetInt64(1)
	div := new(big.Float).SetPrec(prec)
	for n := int64(1); n <= 80; n++ {
		term.Mul(term, x2)
		term.Quo(term, div.SetInt64((2*n-1)*(2*n)))
		term.Neg(term)
		sum.Add(sum, term)
	}
	f, _ := sum.Float64()
	return f
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
