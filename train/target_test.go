package train

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTargetJSON: a target met at round 0 writes its round and counts (they
// are zero, not absent); one never met writes only its name.
func TestTargetJSON(t *testing.T) {
	rows := []Row{{Round: 0, TestAcc: 0.6}, {Round: 10, TestAcc: 0.7, Samples: 640}}
	tests := []struct {
		acc        float64
		want, miss []string
	}{
		{0.5, []string{`"reached":true`, `"round":0`, `"samples":0`, `"bytes_sent_per_node":0`}, nil},
		{0.65, []string{`"reached":true`, `"round":10`, `"samples":640`}, nil},
		{0.9, []string{`"target":"test_acc ≥ 0.9"`, `"reached":false`}, []string{`"round"`, `"samples"`}},
	}
	for _, tt := range tests {
		b, err := json.Marshal(Target(Config{TargetAcc: tt.acc}, rows))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tt.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("target %g: %s lacks %s", tt.acc, b, w)
			}
		}
		for _, m := range tt.miss {
			if strings.Contains(string(b), m) {
				t.Errorf("target %g: %s has %s", tt.acc, b, m)
			}
		}
		var back TargetReached
		if err := json.Unmarshal(b, &back); err != nil || back.Reached != (tt.acc < 0.7) {
			t.Errorf("target %g: %s reads back as %+v (%v)", tt.acc, b, back, err)
		}
	}
}
