package main

import (
	"path/filepath"
	"strconv"
	"testing"
)

// TestLaunchLocalStepsEqualsTrain: DSGDm with Nesterov momentum, weight
// decay, a cosine schedule with warm-up and 4 local steps a round, spread
// over 2 rank processes, ends with train's model and metrics, bit for bit.
func TestLaunchLocalStepsEqualsTrain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	dir := t.TempDir()
	data := writeLibSVM(t, filepath.Join(dir, "data"), "a1a", false)
	flags := []string{"--dataset", "libsvm", "--data-dir", data, "--nodes", "4", "--batch", "2", "--eta0", "0.1",
		"--algo", "dsgdm", "--momentum", "0.9", "--nesterov", "--local-steps", "4", "--weight-decay", "1e-3",
		"--schedule", "cosine", "--warmup", "3", "--iters", "12", "--eval-every", "4", "--checkpoint-every", "4",
		"--local-eval", "20", "--grad-samples", "10"}
	launchEqualsTrain(t, dir, flags, 2)
}

// TestLaunchMLPEqualsTrain: a network chosen with --model (an MLP on
// MNIST) spread over 3 rank processes ends with train's model and metrics,
// bit for bit.
func TestLaunchMLPEqualsTrain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	dir := t.TempDir()
	flags := append([]string{"--model", "mlp:32,16"}, smallMNIST...)
	launchEqualsTrain(t, dir, flags, 3)
}

// launchEqualsTrain runs flags with train and with launch over ranks
// processes, in folders under dir, and fails t unless both end with the
// same model and metrics, bit for bit.
func launchEqualsTrain(t *testing.T, dir string, flags []string, ranks int) {
	t.Helper()
	one := trainReference(t, dir, flags)
	out := filepath.Join(dir, "launch")
	if b, err := gtstorm(t, append([]string{"launch", "--ranks", strconv.Itoa(ranks), "--insecure", "--out", out}, flags...)...).CombinedOutput(); err != nil {
		t.Fatalf("launch: %v\n%s", err, b)
	}
	sameModel(t, out, one)
	if got, want := metricsWithoutSeconds(t, out), metricsWithoutSeconds(t, one); got != want {
		t.Errorf("launch --ranks %d: metrics\n%s\nwant train's\n%s", ranks, got, want)
	}
}
