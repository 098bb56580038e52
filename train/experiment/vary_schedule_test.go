package experiment

import (
	"slices"
	"testing"
)

// TestParseVaryStepSchedule: a step schedule's milestones and factor stay
// in its value, as the flag writes them (--schedule step:0.5,0.75@0.2).
func TestParseVaryStepSchedule(t *testing.T) {
	v, err := ParseVary("schedule=cosine,step:0.25,0.5@0.5,step:0.5,0.75,paper,step:0.3")
	want := []string{"cosine", "step:0.25,0.5@0.5", "step:0.5,0.75", "paper", "step:0.3"}
	if err != nil || !slices.Equal(v.Values, want) {
		t.Errorf("ParseVary = %+v, %v, want values %q", v, err, want)
	}
}
