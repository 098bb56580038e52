package detmath

import (
	"math"
	"testing"
)

func TestLog1pAsMath(t *testing.T) {
	onFMAAMD64(t)
	for _, tc := range []struct {
		name string
		xs   []float64
	}{
		{"specials", specials},
		{"bits", bitInputs(200000, 1)},
		{"[-1, 1]", inputs(100000, -1, 1)},
		{"near -1", join(inputs(50000, -1, -0.999), steps(-1, 2000))},
		{"near 0", join(inputs(50000, -1e-8, 1e-8), inputs(20000, -1e-15, 1e-15))},
		{"reduction edges", join(steps(math.Sqrt2-1, 500), steps(math.Sqrt2/2-1, 500), steps(0x1p-29, 500), steps(0x1p-54, 500), steps(0x1p53, 500))},
		{"large", join(inputs(50000, 0, 1e6), inputs(20000, 0, 1e300))},
	} {
		t.Run(tc.name, func(t *testing.T) { sameAsMath(t, "Log1p", Log1p, math.Log1p, tc.xs) })
	}
}
