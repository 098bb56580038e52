package main

import (
	"path/filepath"
	"testing"
)

// augmentFlags is a short GT-STORM run with --augment crop:4,flip: an MLP
// on 12×12 MNIST-format digits.
func augmentFlags(t *testing.T, dir string) []string {
	return []string{"--dataset", "mnist", "--data-dir", writeTinyMNIST(t, filepath.Join(dir, "mnist"), 12, 96, 24),
		"--model", "mlp:16", "--augment", "crop:4,flip", "--nodes", "3", "--partition", "iid", "--batch", "4",
		"--iters", "8", "--eval-every", "4", "--checkpoint-every", "4", "--local-eval", "12", "--grad-samples", "8", "--eta0", "0.05"}
}

// TestLaunchAugmentEqualsTrain: an augmented GT-STORM run, and a D-GET
// run (whose large batches are augmented too), spread over 2 rank
// processes end with train's model and metrics, bit for bit: each batch's
// crops and flips derive from its node's stream, whichever process draws
// it.
func TestLaunchAugmentEqualsTrain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	for _, algo := range [][]string{{"--algo", "gt-storm"}, {"--algo", "d-get", "--big-batch", "12", "--period", "3"}} {
		t.Run(algo[1], func(t *testing.T) {
			dir := t.TempDir()
			launchEqualsTrain(t, dir, append(augmentFlags(t, dir), algo...), 2)
		})
	}
}

// TestAugmentBadFlags: a bad --augment, of a run or a grid, is one line on
// stderr naming the flag and its value, with exit status 2.
func TestAugmentBadFlags(t *testing.T) {
	dir := t.TempDir()
	tiny := writeTinyMNIST(t, filepath.Join(dir, "mnist"), 12, 24, 6)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--augment", "crop:-1"}, "--augment crop:-1: want none, or crop:P (P from 1 to 255 pixels)"},
		{[]string{"train", "--augment", "crop:1.5"}, "--augment crop:1.5: want"},
		{[]string{"train", "--augment", "crop"}, "--augment crop: want"},
		{[]string{"train", "--augment", "rotate:10"}, "--augment rotate:10: want"},
		{[]string{"train", "--augment", "crop:4,crop:2"}, "--augment crop:4,crop:2: want"},
		{[]string{"train", "--augment", "crop:28"}, "--augment crop:28: want a crop padding smaller than mnist's 28×28 images"},
		{[]string{"train", "--dataset", "libsvm", "--data-dir", a8a, "--augment", "flip"},
			"--augment flip: want none with --dataset libsvm: augmentation applies to images, and a8a holds feature vectors"},
		{[]string{"train", "--dataset", "mnist", "--data-dir", tiny, "--model", "mlp:8", "--augment", "crop:12,flip"},
			"--augment crop:12,flip: want a crop padding smaller than mnist's 12×12 images"},
		{[]string{"compare", "--vary", "augment=none,crop:-1"}, "--augment crop:-1"},
	} {
		wantRefusedProcess(t, dir, append(tc.args, "--out", filepath.Join(dir, "run")), tc.want)
	}
}
