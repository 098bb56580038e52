package train

import (
	"context"
	"errors"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
)

// TestResumeRefusesOtherRoundsOfSpreadSchedule: a cosine or step schedule
// is spread over the run's T, so resume --iters with another count would
// keep the rounds done on the old T and run the rest on the new one, a
// trajectory of neither run; it is refused as a bad --iters. The run's own
// count still resumes, and the paper's schedule extends (TestExtendEqualsLonger).
func TestResumeRefusesOtherRoundsOfSpreadSchedule(t *testing.T) {
	needA8A(t)
	for _, sched := range []string{decentral.ScheduleCosine, "step:0.5"} {
		if sched != decentral.ScheduleCosine && raceSkipsVariant(t, sched, decentral.ScheduleCosine) {
			continue
		}
		cfg := lrConfig(decentral.DSGDM)
		cfg.StepSchedule = sched
		cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = 4, 2, 0
		out := t.TempDir()
		if _, err := Train(context.Background(), cfg, Options{Out: out}); err != nil {
			t.Fatal(err)
		}
		_, err := Resume(context.Background(), out, 8, Options{})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Flag != "iters" {
			t.Errorf("%s: resume --iters 8 of a 4-round run: err = %v, want a --iters ConfigError", sched, err)
		}
		if _, err := Resume(context.Background(), out, 4, Options{}); err != nil {
			t.Errorf("%s: resume --iters 4 of a 4-round run: %v", sched, err)
		}
	}
}
