package detmath

import (
	"math"
	"testing"
)

func TestSinCosAsMath(t *testing.T) {
	onFMAAMD64(t)
	// Multiples of Pi/4, where the reduction cancels most.
	var octants []float64
	for k := -2000; k <= 2000; k++ {
		octants = append(octants, steps(float64(float64(k)*(math.Pi/4)), 3)...)
	}
	for _, tc := range []struct {
		name string
		xs   []float64
	}{
		{"specials", specials},
		{"bits", bitInputs(200000, 4)},
		{"[-10, 10]", inputs(100000, -10, 10)},
		{"[-1e9, 1e9]", inputs(100000, -1e9, 1e9)},
		{"octants", octants},
		{"threshold", join(steps(1<<29, 1000), steps(-(1<<29), 1000), inputs(20000, 5e8, 6e8))},
		{"huge", join(inputs(50000, -1e300, 1e300), inputs(50000, 1e15, 1e22))},
		{"tiny", join(inputs(20000, -1e-8, 1e-8), steps(math.Pi/4, 100))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sameAsMath(t, "Sin", Sin, math.Sin, tc.xs)
			sameAsMath(t, "Cos", Cos, math.Cos, tc.xs)
		})
	}
}
