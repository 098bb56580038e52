package detmath

import (
	"math"
	"testing"
)

func TestCbrtAsMath(t *testing.T) {
	onFMAAMD64(t)
	for _, tc := range []struct {
		name string
		xs   []float64
	}{
		{"specials", specials},
		{"bits", bitInputs(200000, 2)},
		{"[-1000, 1000]", inputs(100000, -1000, 1000)},
		{"[-1, 1]", inputs(50000, -1, 1)},
		{"subnormal", join(inputs(50000, -0x1p-1022, 0x1p-1022), steps(0x1p-1022, 500))},
		{"cubes", join(steps(8, 100), steps(27, 100), steps(-1e15, 100))},
	} {
		t.Run(tc.name, func(t *testing.T) { sameAsMath(t, "Cbrt", Cbrt, math.Cbrt, tc.xs) })
	}
}
