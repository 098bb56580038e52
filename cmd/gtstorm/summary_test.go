package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestSummary runs `gtstorm summary` on a zoo name, an ONNX file and bad
// input: a table of the layers with the parameter total, or one line and
// exit status 2.
func TestSummary(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want []string // in stdout, or in stderr where code != 0
	}{
		{[]string{"--model", "resnet20-gn", "--dataset", "cifar10", "--batch", "32"}, 0,
			[]string{"resnet20-gn: samples [3,32,32] → 10 classes, 72 layers, 272474 parameters", "conv 3×3 → 16, stride 1, padding 1, no bias", "training graph at batch 32"}},
		{[]string{"--model", "../../models/testdata/onnx/prelu.onnx"}, 0,
			[]string{"prelu.onnx: samples [1,28,28] → 10 classes, 9 layers, 837 parameters", "act1", "prelu, 6 slope(s)", "[6,26,26]"}},
		{[]string{"--model", "resnet21-gn"}, 2, []string{"want 6n + 2"}},
		{[]string{"--model", "mlp:32", "--dataset", "a9a"}, 2, []string{"--dataset a9a: want an image dataset"}},
		{[]string{"--model", "missing.onnx"}, 2, []string{"missing.onnx"}},
		{[]string{"--dataset", "mnist"}, 2, []string{"--model: want"}},
		{[]string{"--model", "mlp:8", "--batch", "0"}, 2, []string{"--batch 0"}},
	} {
		var out, errOut bytes.Buffer
		code := run(append([]string{"summary"}, c.args...), &out, &errOut)
		text := out.String()
		if c.code != 0 {
			text = errOut.String()
		}
		if code != c.code {
			t.Errorf("%v: exit %d, want %d\nstdout %s\nstderr %s", c.args, code, c.code, out.String(), errOut.String())
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, text)
			}
		}
		if c.code != 0 && strings.Count(strings.TrimSpace(text), "\n") > 0 {
			t.Errorf("%v: a refusal of more than one line:\n%s", c.args, text)
		}
	}
}
