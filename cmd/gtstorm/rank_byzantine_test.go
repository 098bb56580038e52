package main

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestLaunchByzantineEqualsTrain: a Byzantine node's gauss lies, made on its
// rank, one per neighbour, and sent over gRPC with mutual TLS to the ranks
// of its neighbours, give under self-centred clipping on three ranks the
// run of train, bit for bit; and an omniscient attack whose Byzantine node
// lies across ranks is refused on every rank before the first round.
func TestLaunchByzantineEqualsTrain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	dir := t.TempDir()
	args := append([]string{"--byzantine", "3,", "--attack", "gauss:0.05", "--aggregate", "clip"}, smallMNIST...)
	one := filepath.Join(dir, "train")
	if b, err := gtstorm(t, append([]string{"train", "--out", one}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("train: %v\n%s", err, b)
	}
	out := filepath.Join(dir, "launch")
	b, err := gtstorm(t, append([]string{"launch", "--ranks", "3", "--out", out}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("launch --ranks 3: %v\n%s", err, b)
	}
	sameModel(t, out, one)
	if got, want := metricsWithoutSeconds(t, out), metricsWithoutSeconds(t, one); got != want {
		t.Errorf("launch --ranks 3: metrics\n%s\nwant train's\n%s", got, want)
	}

	far := filepath.Join(dir, "far")
	omni := append([]string{"launch", "--ranks", "3", "--out", far, "--byzantine", "3,", "--attack", "alie"}, smallMNIST...)
	b, err = gtstorm(t, omni...).CombinedOutput()
	if err == nil || !bytes.Contains(b, []byte("attack alie: Byzantine node 3 lies to node")) {
		t.Fatalf("launch with alie across ranks: %v, want a refusal naming node 3:\n%s", err, b)
	}
}
