package train

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
)

// recipeConfig is a small a8a run of DSGDm with every recipe of SPEC §14:
// Nesterov momentum, four local steps, weight decay, a cosine schedule with
// a warm-up.
func recipeConfig() Config {
	c := lrConfig(decentral.DSGDM)
	c = c.WithKnob("momentum", 0.9).WithKnob("nesterov", true).WithKnob("local-steps", 4)
	c.WeightDecay, c.StepSchedule, c.Warmup = 1e-3, decentral.ScheduleCosine, 5
	return c
}

// TestRecipesSameBitsAnyWorkers: DSGDm with local steps gives the same
// metrics and summary with 1 and 2 workers.
func TestRecipesSameBitsAnyWorkers(t *testing.T) {
	needA8A(t)
	var rows [][]string
	var sums []Summary
	for _, workers := range []int{1, 2} {
		cfg := recipeConfig()
		cfg.Workers = workers
		out := t.TempDir()
		sum, err := Train(context.Background(), cfg, Options{Out: out})
		if err != nil {
			t.Fatal(err)
		}
		_, r, err := readRun(out)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, withoutSeconds(r))
		sum.Seconds, sum.Workers = 0, 0
		sums = append(sums, *sum)
	}
	if !slices.Equal(rows[0], rows[1]) {
		t.Errorf("metrics differ between 1 and 2 workers:\n%v\n%v", rows[0], rows[1])
	}
	if sums[0].Samples != 10*60*4 || sums[0].CommRounds != 60 || sums[0].StateFloatsPerNode != sums[0].Params {
		t.Errorf("samples %d, rounds %d, state floats %d: want 4 local steps of batch 1 on 10 nodes a round for 60 gossips, b only",
			sums[0].Samples, sums[0].CommRounds, sums[0].StateFloatsPerNode)
	}
	if !reflect.DeepEqual(sums[0], sums[1]) {
		t.Errorf("summaries differ between 1 and 2 workers:\n%+v\n%+v", sums[0], sums[1])
	}
}

// TestRecipesResumeEqualsUninterrupted interrupts the recipe run after a
// checkpoint and resumes it: the momentum buffer travels in the
// checkpoint, so the metrics and summary equal the uninterrupted run's.
func TestRecipesResumeEqualsUninterrupted(t *testing.T) {
	needA8A(t)
	ck := resumeEqualsUninterrupted(t, recipeConfig())
	if ck.snap.Slab("b") == nil {
		t.Errorf("checkpoint with slabs %v, want the momentum buffer b", ck.snap.Slabs)
	}
}
