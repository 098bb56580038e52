package models

import (
	"bytes"
	"strings"
	"testing"
)

// TestSummarize checks each zoo network's and an imported network's
// summary: the layers' parameter counts add up to the model's, every
// output shape is the Net's, and the first layers read as torch's
// modules would be written.
func TestSummarize(t *testing.T) {
	resnet, err := New("resnet20-gn", []int{3, 32, 32}, 10)
	if err != nil {
		t.Fatal(err)
	}
	mlp, err := New("mlp:32,16@0.25", []int{1, 28, 28}, 10)
	if err != nil {
		t.Fatal(err)
	}
	prelu, _ := importFixture(t, "prelu")
	for _, c := range []struct {
		m      Model
		layers int
		first  []string // the ops of the first layers
	}{
		{resnet, 0, []string{"conv 3×3 → 16, stride 1, padding 1, no bias", "groupnorm, 2 groups"}},
		{mlp, 0, []string{"dense → 32", "relu", "dropout, p 0.25"}},
		{prelu, 9, []string{"conv 3×3 → 6, stride 1, padding 0", "prelu, 6 slope(s)", "maxpool 2×2, stride 2"}},
	} {
		t.Run(c.m.Name(), func(t *testing.T) {
			ls, err := Summarize(c.m)
			if err != nil {
				t.Fatal(err)
			}
			if c.layers > 0 && len(ls) != c.layers {
				t.Errorf("%d layers, want %d", len(ls), c.layers)
			}
			sum := 0
			for _, l := range ls {
				sum += l.Params
			}
			if sum != c.m.NumParams() {
				t.Errorf("layers' parameters add up to %d, the model has %d", sum, c.m.NumParams())
			}
			for i, want := range c.first {
				if i >= len(ls) || ls[i].Op != want {
					t.Fatalf("layer %d: %+v, want op %q", i+1, ls[min(i, len(ls)-1)], want)
				}
			}
			_, classes, _ := Classifier(c.m)
			if last := ls[len(ls)-1].Shape; len(last) != 1 || last[0] != classes {
				t.Errorf("last output %v, want [%d]", last, classes)
			}
			var b bytes.Buffer
			if err := WriteSummary(&b, c.m); err != nil {
				t.Fatal(err)
			}
			if lines := strings.Count(b.String(), "\n"); lines != len(ls)+2 {
				t.Errorf("%d lines, want a heading, a header and %d layers:\n%s", lines, len(ls), b.String())
			}
		})
	}
	if _, err := Summarize(NewLogReg(5, 0.1)); err == nil {
		t.Error("Summarize listed the logistic regression's layers")
	}
}
