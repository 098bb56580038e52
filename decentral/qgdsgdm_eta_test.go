package decentral

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// TestQGDSGDMZeroStepIsNoDivergence: a schedule whose η_t rounds to 0 in
// float32 (step:0.5@1e-45) leaves QG-DSGDm's m̂ ← μm̂ + (1 − μ)(x_t − x_{t+1})/η_t
// without a finite value. The run stops at that round with an error that
// names η_t, not with ErrDiverged: the model did not diverge.
func TestQGDSGDMZeroStepIsNoDivergence(t *testing.T) {
	pr := newLS(4, 6, 20, 1, 3)
	mx := mustMixing(t, graph.MixLaplacian, mustGraph(graph.Ring(4)))
	cfg := Config{Method: QGDSGDMMethod{Momentum: 0.9}, Rounds: 4,
		StepSizes: StepSizes{Eta0: 0.01, StepSchedule: "step:0.5@1e-45"}}
	o, _ := lsRun(t, cfg, mx, pr, 2, 1)
	var err error
	for r := 0; r < 4 && err == nil; r++ {
		err = o.Step(context.Background())
	}
	if err == nil || errors.Is(err, ErrDiverged) || !strings.Contains(err.Error(), "η_t") {
		t.Fatalf("err = %v, want an error naming η_t, not a divergence", err)
	}
}
