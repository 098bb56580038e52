package detmath

import (
	"math"
	"runtime"
	"testing"
)

func TestExpLogAsMath(t *testing.T) {
	if runtime.GOARCH != "amd64" || !hasFMA() {
		t.Skip("math.Exp's bits are the FMA path of amd64's assembly")
	}
	sameAsMath(t, "Exp", Exp, math.Exp, inputs(300000, -760, 720))
	sameAsMath(t, "Exp", Exp, math.Exp, inputs(300000, -2, 2))
	sameAsMath(t, "Log", Log, math.Log, inputs(300000, 0, 1e6))
	sameAsMath(t, "Log", Log, math.Log, inputs(300000, 0.5, 2))
}
