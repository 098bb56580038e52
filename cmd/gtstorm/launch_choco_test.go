package main

import (
	"path/filepath"
	"testing"
)

// TestLaunchChocoEqualsTrain: CHOCO-SGD with top-k compression over two
// rank processes, its messages travelling encoded, ends with train's model
// and metrics bit for bit, bytes sent included.
func TestLaunchChocoEqualsTrain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	dir := t.TempDir()
	flags := []string{"--algo", "choco", "--compress", "topk:0.01", "--iters", "20", "--eval-every", "10",
		"--checkpoint-every", "10", "--local-eval", "200", "--grad-samples", "20"}
	one, two := filepath.Join(dir, "train"), filepath.Join(dir, "launch")
	if b, err := gtstorm(t, append([]string{"train", "--out", one}, flags...)...).CombinedOutput(); err != nil {
		t.Fatalf("train: %v\n%s", err, b)
	}
	if b, err := gtstorm(t, append([]string{"launch", "--ranks", "2", "--out", two}, flags...)...).CombinedOutput(); err != nil {
		t.Fatalf("launch --ranks 2: %v\n%s", err, b)
	}
	sameModel(t, two, one)
	if got, want := metricsWithoutSeconds(t, two), metricsWithoutSeconds(t, one); got != want {
		t.Errorf("launch --ranks 2: metrics\n%s\nwant train's\n%s", got, want)
	}
}
