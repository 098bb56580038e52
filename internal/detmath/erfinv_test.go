package detmath

import (
	"math"
	"testing"
)

func TestErfinvAsMath(t *testing.T) {
	onFMAAMD64(t)
	for _, tc := range []struct {
		name string
		xs   []float64
	}{
		{"specials", specials},
		{"bits", bitInputs(50000, 3)},
		{"(-1, 1)", inputs(200000, -1, 1)},
		{"near 1", join(inputs(50000, 0.999999, 1), steps(1, 3000))},
		{"near -1", join(inputs(50000, -1, -0.999999), steps(-1, 3000))},
		{"branch edges", join(steps(0.85, 500), steps(-0.85, 500), steps(1-2*math.Exp(-25), 500))},
		{"near 0", inputs(20000, -1e-10, 1e-10)},
	} {
		t.Run(tc.name, func(t *testing.T) { sameAsMath(t, "Erfinv", Erfinv, math.Erfinv, tc.xs) })
	}
}
