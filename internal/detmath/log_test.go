package detmath

import (
	"math"
	"testing"
)

// TestLogEdgesAsMath checks Log against math.Log over the whole normal
// range: at the reduction's edge, f1 = Sqrt2/2 with every exponent, where
// log_amd64.s compares with <= and Go's log.go with < (the two differ in
// the last bit at x = (Sqrt2/2)·2³²), and at random bits. Subnormals are
// left out: log_amd64.s does not normalize them (golang/go#56600), and
// math.Log(5e-324) is -709.09 on amd64 where Log gives -744.44.
func TestLogEdgesAsMath(t *testing.T) {
	onFMAAMD64(t)
	var xs []float64
	for e := -1021; e <= 1024; e++ {
		xs = append(xs, steps(math.Ldexp(math.Sqrt2/2, e), 3)...)
	}
	for _, x := range bitInputs(300000, 8) {
		if x = math.Abs(x); !(x < 0x1p-1022) {
			xs = append(xs, x)
		}
	}
	sameAsMath(t, "Log", Log, math.Log, join(specials[:5], xs))
}
