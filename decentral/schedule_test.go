package decentral

import (
	"math"
	"math/big"
	"testing"
)

func TestScheduleEta(t *testing.T) {
	for _, tc := range []struct {
		algo     string
		cubeRoot bool
		power    float64
	}{
		{DSGD, false, 0.5}, {GNSD, false, 0.5}, {GTSTORM, false, 1.0 / 3},
		{DSGD, true, 1.0 / 3}, {GNSD, true, 1.0 / 3}, {GTSTORM, true, 1.0 / 3},
	} {
		s, err := Config{Algorithm: tc.algo, StepSizes: StepSizes{Eta0: 0.2, CubeRoot: tc.cubeRoot}}.Schedule()
		if err != nil {
			t.Fatal(err)
		}
		for _, step := range []int{0, 1, 10, 99, 12345} {
			want := 0.2 / math.Pow(1+0.1*float64(step), tc.power)
			if got := s.Eta(step); math.Abs(got-want) > 1e-15*want {
				t.Errorf("%s cube=%v: η_%d = %v, want %v", tc.algo, tc.cubeRoot, step, got, want)
			}
		}
		if s.Eta(0) != 0.2 {
			t.Errorf("%s: η_0 = %v", tc.algo, s.Eta(0))
		}
	}
}

func TestScheduleBeta(t *testing.T) {
	s, _ := Config{Algorithm: GTSTORM, StepSizes: StepSizes{Eta0: 0.1}}.Schedule()
	eta0 := s.Eta0
	if s.RhoValue() != 1/(eta0*eta0) || s.Rho != 0 {
		t.Fatalf("default ρ = %v, want 1/η_0²", s.RhoValue())
	}
	if s.Beta(0) != 0 || s.Beta(1) != 0 {
		t.Errorf("β_0, β_1 = %v, %v, want 0, 0 with the default ρ", s.Beta(0), s.Beta(1))
	}
	for step := 1; step < 2000; step += 37 {
		eta := s.Eta(step - 1)
		want := 1 - s.RhoValue()*eta*eta
		if got := s.Beta(step); math.Abs(got-want) > 1e-15 || got < 0 || got > 1 {
			t.Fatalf("β_%d = %v, want 1 − ρη²_%d = %v", step, got, step-1, want)
		}
		if s.Beta(step+1) < s.Beta(step) {
			t.Fatalf("β decreases at %d", step)
		}
	}
	big, _ := Config{Algorithm: GTSTORM, StepSizes: StepSizes{Eta0: 0.1, Rho: 1e6}}.Schedule()
	if big.Beta(1) != 0 || big.Beta(50) != 0 {
		t.Errorf("ρ = 1e6: β = %v, %v, want clipped to 0", big.Beta(1), big.Beta(50))
	}
	one, _ := Config{Algorithm: GTSTORM, StepSizes: StepSizes{Eta0: 0.1, Rho: 1e-300}}.Schedule()
	if one.Beta(1) != 1 || one.Beta(7) != 1 {
		t.Errorf("tiny ρ: β = %v, want 1", one.Beta(1))
	}
}

func TestScheduleErrors(t *testing.T) {
	for _, c := range []Config{
		{Algorithm: GTSTORM, StepSizes: StepSizes{Eta0: 0}},
		{Algorithm: GTSTORM, StepSizes: StepSizes{Eta0: -1}},
		{Algorithm: GTSTORM, StepSizes: StepSizes{Eta0: math.NaN()}},
		{Algorithm: GTSTORM, StepSizes: StepSizes{Eta0: math.Inf(1)}},
		{Algorithm: GTSTORM, StepSizes: StepSizes{Eta0: 0.1, Rho: -1}},
		{Algorithm: "adam", StepSizes: StepSizes{Eta0: 0.1}},
	} {
		if _, err := c.Schedule(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

// TestThirdPowerCorrectlyRounded compares x^(1/3), for the float64 1/3, with
// a 256-bit reference rounded once, over the step-size arguments 1 + 0.1t.
func TestThirdPowerCorrectlyRounded(t *testing.T) {
	const prec = 256
	delta := new(big.Float).SetPrec(prec).SetMantExp(big.NewFloat(1), -54)
	delta.Quo(delta, big.NewFloat(3))
	three := new(big.Float).SetPrec(prec).SetInt64(3)
	n := 20000
	if testing.Short() {
		n = 3000
	}
	differs := 0
	for step := 0; step < n; step++ {
		x := 1 + 0.1*float64(step)
		bx := new(big.Float).SetPrec(prec).SetFloat64(x)
		y := new(big.Float).SetPrec(prec).SetFloat64(math.Cbrt(x))
		for range 4 { // Newton: y -= (y³ − x)/(3y²)
			y2 := new(big.Float).SetPrec(prec).Mul(y, y)
			num := new(big.Float).SetPrec(prec).Mul(y2, y)
			num.Sub(num, bx)
			den := new(big.Float).SetPrec(prec).Mul(three, y2)
			y.Sub(y, num.Quo(num, den))
		}
		// x^(1/3 − δ) = cbrt(x)·exp(−δ ln x), δ ln x < 2e-16.
		corr := new(big.Float).SetPrec(prec).Mul(delta, big.NewFloat(math.Log(x)))
		corr.Sub(big.NewFloat(1).SetPrec(prec), corr)
		want, _ := y.Mul(y, corr).Float64()
		if got := pow(x, CbrtPower); got != want {
			t.Fatalf("pow(%v, 1/3) = %v, correctly rounded %v", x, got, want)
		}
		if math.Pow(x, CbrtPower) != want {
			differs++
		}
	}
	t.Logf("math.Pow was not correctly rounded for %d of %d arguments", differs, n)
	if pow(2.25, 0.5) != 1.5 || pow(8, 2) != 64 {
		t.Error("pow special cases")
	}
}
