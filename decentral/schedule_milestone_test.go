package decentral

import "testing"

// TestStepMilestoneExact: a step schedule's milestone S of T rounds is
// round ⌊S·T⌋ for S the decimal fraction written, where the float64
// product rounds below an integer (0.29·100 = 28.999999999999996).
func TestStepMilestoneExact(t *testing.T) {
	for _, tc := range []struct {
		spec   string
		rounds int
		at     int // the milestone round
	}{
		{"step:0.29", 100, 29}, {"step:0.57", 100, 57}, {"step:0.58", 50, 29},
		{"step:0.5", 15, 7}, {"step:0.75", 15, 11}, {"step:0.3", 10, 3}, {"step:0.001", 4, 0},
	} {
		shape, _, err := ParseSchedule(tc.spec)
		if err != nil {
			t.Fatal(err)
		}
		s := Schedule{Eta0: 1, Shape: shape, Rounds: tc.rounds}
		if err := s.Validate(); err != nil {
			t.Fatal(err)
		}
		if tc.at > 0 {
			if got := s.Eta(tc.at - 1); got != 1 {
				t.Errorf("%s over %d rounds: η_%d = %v, want 1 (before the milestone)", tc.spec, tc.rounds, tc.at-1, got)
			}
		}
		if got := s.Eta(tc.at); got != 0.1 {
			t.Errorf("%s over %d rounds: η_%d = %v, want 0.1 (the milestone ⌊S·T⌋ = %d)", tc.spec, tc.rounds, tc.at, got, tc.at)
		}
	}
}
