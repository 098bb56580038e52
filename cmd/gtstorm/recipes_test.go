package main

import (
	"testing"
)

// TestRecipeRefusals: the settings of SPEC §14 (momentum, weight decay,
// local steps, schedules, warm-up) refuse bad values, and the method knobs
// --momentum, --nesterov and --local-steps the methods that do not take
// them, each in one line naming the flag, exit status 2, before anything
// runs.
func TestRecipeRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--algo", "dsgdm", "--momentum", "1"}, "--momentum 1: want a momentum μ in [0, 1)"},
		{[]string{"train", "--algo", "qg-dsgdm", "--momentum", "-0.1"}, "--momentum -0.1: want a momentum μ in [0, 1)"},
		{[]string{"train", "--weight-decay", "-1e-4"}, "--weight-decay -0.0001: want a finite weight decay λ ≥ 0"},
		{[]string{"train", "--algo", "dsgdm", "--local-steps", "0"}, `invalid value "0" for flag -local-steps: at least 1 local step`},
		{[]string{"train", "--schedule", "step:0.5,1.5"}, `--schedule step:0.5,1.5: want paper, constant, cosine or step:S1,S2,…[@γ] with milestones increasing in (0, 1) and γ > 0 (milestone "1.5" is not a fraction of the run in (0, 1))`},
		{[]string{"train", "--schedule", "step:0"}, `milestone "0" is not a fraction`},
		{[]string{"train", "--schedule", "step:0.75,0.5"}, "milestones 0.75,0.5 do not increase"},
		{[]string{"train", "--schedule", "linear"}, "--schedule linear: want paper, constant, cosine or step"},
		{[]string{"train", "--iters", "10", "--warmup", "11"}, "--warmup 11: want 0 (none) or a warm-up of at most the run's 10 rounds (--iters)"},
		{[]string{"train", "--algo", "dsgd", "--momentum", "0.9"}, "--momentum 0.9: want 0 with --algo dsgd: --momentum applies to --algo dsgdm, qg-dsgdm"},
		{[]string{"train", "--algo", "gt-storm", "--nesterov"}, "--nesterov true: want false with --algo gt-storm: --nesterov applies to --algo dsgdm, qg-dsgdm"},
		{[]string{"train", "--algo", "qg-dsgdm", "--local-steps", "4"}, "--local-steps 4: want 1 with --algo qg-dsgdm: --local-steps applies to --algo dsgdm"},
		{[]string{"sweep", "--algo", "dsgdm", "--vary", "local-steps=0,2"}, "local-steps=0"},
		{[]string{"train", "--schedule", "cosine", "--constant-step"}, "--constant-step true: want false with --schedule cosine"},
	} {
		wantRefused(t, tc.args, tc.want)
	}
}
