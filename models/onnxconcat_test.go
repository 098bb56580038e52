package models

import (
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/onnx"
)

// TestImportConcatOfOne checks that a Concat of one tensor of the data
// (torch.cat of a one-tensor list, as torchvision's DenseNet writes for
// the first layer of each block) imports as that tensor, and that a
// Concat of none is refused.
func TestImportConcatOfOne(t *testing.T) {
	k := onnx.FloatTensor("k", ramp(18, 1), 2, 1, 3, 3)
	m, _, err := ImportONNX("cat", tinyONNX(t, 13, batchN, []onnx.Tensor{k},
		node("Conv", []string{"x", "k"}, "c"), node("Concat", []string{"c"}, "j", onnx.IntAttr("axis", 1)),
		node("Relu", []string{"j"}, "r"), node("Flatten", []string{"r"}, "y")), []int{1, 4, 4}, 8)
	if err != nil {
		t.Fatal(err)
	}
	if got := specOps(t, m); got != "conv relu flatten" {
		t.Errorf("layers %s, want conv relu flatten", got)
	}
	_, _, err = ImportONNX("cat", tinyONNX(t, 13, batchN, []onnx.Tensor{k},
		node("Conv", []string{"x", "k"}, "c"), node("Concat", nil, "j", onnx.IntAttr("axis", 1)),
		node("Flatten", []string{"c"}, "y")), []int{1, 4, 4}, 8)
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("a Concat of no tensors: %v, want a one-line refusal", err)
	}
}
