package main

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/cluster/transport"
	"github.com/gtstorm/gtstorm/train"
	"github.com/gtstorm/gtstorm/weights"
)

// smallMNIST are the flags of a short default MNIST run.
var smallMNIST = []string{"--iters", "12", "--eval-every", "6", "--checkpoint-every", "6", "--local-eval", "200", "--grad-samples", "20"}

// metricsWithoutSeconds returns a run's metrics rows with the wall times
// cleared.
func metricsWithoutSeconds(t *testing.T, dir string) string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, train.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := train.ReadCSV(f)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for i := range rows {
		rows[i].Seconds = 0
	}
	if err := train.WriteCSV(&b, rows); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// sameModel fails unless the model files of two runs hold the same
// parameters, bit for bit.
func sameModel(t *testing.T, a, b string) {
	t.Helper()
	ma, err := weights.Read(filepath.Join(a, train.ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	mb, err := weights.Read(filepath.Join(b, train.ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(ma.Params) != len(mb.Params) {
		t.Fatalf("%d and %d parameters", len(ma.Params), len(mb.Params))
	}
	for j := range ma.Params {
		if math.Float32bits(ma.Params[j]) != math.Float32bits(mb.Params[j]) {
			t.Fatalf("parameter %d: %v in %s, %v in %s", j, ma.Params[j], a, mb.Params[j], b)
		}
	}
}

// TestLaunchEqualsTrain: the default MNIST run spread over K rank
// processes talking gRPC over mutual TLS ends with train's final model and
// metrics, bit for bit.
func TestLaunchEqualsTrain(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	dir := t.TempDir()
	one := filepath.Join(dir, "train")
	if b, err := gtstorm(t, append([]string{"train", "--out", one}, smallMNIST...)...).CombinedOutput(); err != nil {
		t.Fatalf("train: %v\n%s", err, b)
	}
	for _, k := range []int{2, 5} {
		out := filepath.Join(dir, fmt.Sprintf("launch%d", k))
		args := append([]string{"launch", "--ranks", fmt.Sprint(k), "--out", out}, smallMNIST...)
		b, err := gtstorm(t, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("launch --ranks %d: %v\n%s", k, err, b)
		}
		if !bytes.Contains(b, []byte(fmt.Sprintf("[rank %d] rank %d: network:", k-1, k-1))) {
			t.Errorf("launch --ranks %d: no network line from rank %d:\n%s", k, k-1, b)
		}
		sameModel(t, out, one)
		if got, want := metricsWithoutSeconds(t, out), metricsWithoutSeconds(t, one); got != want {
			t.Errorf("launch --ranks %d: metrics\n%s\nwant train's\n%s", k, got, want)
		}
	}
}

// freePorts returns n loopback addresses free a moment ago.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var addrs []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		addrs = append(addrs, ln.Addr().String())
	}
	return addrs
}

// TestNodeBadInput: a bad ranks file, rank or security choice gets one line
// naming it and a non-zero exit, before any run starts.
func TestNodeBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.txt", "127.0.0.1:7001\n127.0.0.1:7002\n")
	far := write("far.txt", "10.1.2.3:7001\n127.0.0.1:7002\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"node", "--rank", "0", "--ranks", write("dup.txt", "127.0.0.1:7001\n127.0.0.1:7001\n"), "--insecure"}, "duplicate address"},
		{[]string{"node", "--rank", "0", "--ranks", write("bad.txt", "127.0.0.1:port\n"), "--insecure"}, "bad.txt:1"},
		{[]string{"node", "--rank", "0", "--ranks", filepath.Join(dir, "missing.txt"), "--insecure"}, "missing.txt"},
		{[]string{"node", "--rank", "2", "--ranks", good, "--insecure"}, "--rank 2"},
		{[]string{"node", "--rank", "0", "--ranks", good}, "--certs"},
		{[]string{"node", "--rank", "0", "--ranks", far, "--insecure"}, "not a loopback address"},
		{[]string{"node", "--rank", "0"}, "--ranks"},
		{[]string{"node", "--rank", "0", "--ranks", good, "--certs", filepath.Join(dir, "nocerts")}, "ca.pem"},
		{[]string{"launch", "--ranks", "11"}, "--ranks 11"},
	} {
		cmd := gtstorm(t, tc.args...)
		cmd.Dir = dir
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		msg := strings.TrimSpace(errb.String())
		if err == nil || !strings.Contains(msg, tc.want) || strings.Contains(msg, "panic:") {
			t.Errorf("gtstorm %s: %v, stderr %q; want a failure naming %q", strings.Join(tc.args, " "), err, msg, tc.want)
		}
	}
}

// TestNodeConfigMismatch: ranks started with different run flags refuse
// each other at connect, naming both config hashes, and exit non-zero
// within the peer timeout.
func TestNodeConfigMismatch(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	t.Parallel() // waits out a 5 s peer timeout, idle
	dir := t.TempDir()
	addrs := freePorts(t, 2)
	ranks := filepath.Join(dir, "ranks.txt")
	if err := os.WriteFile(ranks, []byte(strings.Join(addrs, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	outs := make([]bytes.Buffer, 2)
	errs := make([]error, 2)
	for r, eta := range []string{"0.01", "0.02"} {
		args := append([]string{"node", "--rank", fmt.Sprint(r), "--ranks", ranks, "--insecure", "--peer-timeout", "5s",
			"--eta0", eta, "--out", filepath.Join(dir, fmt.Sprint("rank", r))}, smallMNIST...)
		cmd := exec.CommandContext(ctx, os.Args[0], args...)
		cmd.Env = append(os.Environ(), "GTSTORM_TEST_MAIN=1")
		cmd.Stderr = &outs[r]
		wg.Go(func() { errs[r] = cmd.Run() })
	}
	wg.Wait()
	all := outs[0].String() + outs[1].String()
	for r, err := range errs {
		if err == nil {
			t.Errorf("rank %d with other flags than its peer succeeded", r)
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("the ranks did not stop within 90 s:\n%s", all)
	}
	if !strings.Contains(all, "config hash mismatch") {
		t.Errorf("no rank named the config mismatch:\n%s", all)
	}
}

// startRanks starts one `gtstorm rank` process per rank on fresh loopback
// ports, in plaintext, with the given extra flags per rank.
func startRanks(t *testing.T, ctx context.Context, dir string, k int, extra func(r int) []string) ([]*exec.Cmd, []*bytes.Buffer) {
	t.Helper()
	ranks := filepath.Join(dir, "ranks.txt")
	if err := os.WriteFile(ranks, []byte(strings.Join(freePorts(t, k), "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmds := make([]*exec.Cmd, k)
	logs := make([]*bytes.Buffer, k)
	for r := range k {
		args := append([]string{"node", "--rank", fmt.Sprint(r), "--ranks", ranks, "--insecure", "--peer-timeout", "3s",
			"--out", filepath.Join(dir, fmt.Sprint("rank", r))}, extra(r)...)
		cmds[r] = exec.CommandContext(ctx, os.Args[0], args...)
		cmds[r].Env = append(os.Environ(), "GTSTORM_TEST_MAIN=1")
		logs[r] = new(bytes.Buffer)
		cmds[r].Stderr = logs[r]
		if err := cmds[r].Start(); err != nil {
			t.Fatal(err)
		}
	}
	return cmds, logs
}

// TestKilledRankResumes: SIGKILL one rank of three mid-run; the survivors
// stop within the peer timeout naming it and checkpoint, every rank then
// restarts from the latest round all of them kept, and the finished run
// equals train's uninterrupted one, number for number.
func TestKilledRankResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	flags := faultFlags
	dir := t.TempDir()
	one := trainReference(t, dir, flags)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const k = 3
	cmds, logs := startRanks(t, ctx, dir, k, func(int) []string { return flags })
	// Kill rank 1 once it has checkpointed round 12.
	victim := filepath.Join(dir, "rank1", train.RankCheckpointFile(12))
	for {
		if _, err := os.Stat(victim); err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("rank 1 never checkpointed round 12")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cmds[1].Process.Kill()
	for r, c := range cmds {
		err := c.Wait()
		if r != 1 && (err == nil || !strings.Contains(logs[r].String(), "rank 1")) {
			t.Errorf("rank %d after rank 1 was killed: %v, stderr:\n%s", r, err, logs[r])
		}
	}
	dirs := []string{filepath.Join(dir, "rank0"), filepath.Join(dir, "rank1"), filepath.Join(dir, "rank2")}
	round, err := train.CommonRound(dirs)
	if err != nil || round < 12 {
		t.Fatalf("common round %d (%v), want ≥ 12", round, err)
	}
	// The ranks agree on it themselves (--resume), as on several hosts.
	cmds, logs = startRanks(t, ctx, dir, k, func(int) []string { return []string{"--resume"} })
	failed := false
	for r, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Errorf("resumed rank %d: %v", r, err)
			failed = true
		}
		if want := fmt.Sprintf("resuming from round %d", round); !strings.Contains(logs[r].String(), want) {
			t.Errorf("resumed rank %d does not say %q", r, want)
			failed = true
		}
	}
	if failed {
		for r, l := range logs {
			t.Logf("rank %d:\n%s", r, l)
		}
		t.FailNow()
	}
	sameModel(t, dirs[0], one)
	if got, want := metricsWithoutSeconds(t, dirs[0]), metricsWithoutSeconds(t, one); got != want {
		t.Errorf("resumed run's metrics\n%s\nwant train's\n%s", got, want)
	}
}

// TestNodeFolderHoldsRun: a rank started again in the folder of its
// finished run is refused with the command that resumes a run over ranks,
// not `gtstorm resume`.
func TestNodeFolderHoldsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a rank process; run without -short")
	}
	dir := t.TempDir()
	ranks := filepath.Join(dir, "ranks.txt")
	if err := os.WriteFile(ranks, []byte(freePorts(t, 1)[0]+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	args := []string{"node", "--rank", "0", "--ranks", ranks, "--insecure", "--out", out,
		"--iters", "4", "--eval-every", "4", "--local-eval", "100", "--grad-samples", "10"}
	if b, err := gtstorm(t, args...).CombinedOutput(); err != nil {
		t.Fatalf("first run: %v\n%s", err, b)
	}
	b, err := gtstorm(t, args...).CombinedOutput()
	msg := string(b)
	if err == nil || !strings.Contains(msg, "--resume --out "+out) || strings.Contains(msg, "gtstorm resume") {
		t.Errorf("second run in the same folder: %v, output %q; want a refusal naming node --resume", err, msg)
	}
}

// faultFlags are the run flags of the fault tests: 40 rounds of batches of
// 16 (so that they fit the time of a test on a CPU without AVX-512),
// checkpoints every 4.
var faultFlags = []string{"--iters", "40", "--batch", "16", "--eval-every", "8", "--checkpoint-every", "4", "--local-eval", "200", "--grad-samples", "20"}

// trainReference runs `gtstorm train` with flags into dir/train, the
// uninterrupted run a fault test compares with, and returns that folder.
func trainReference(t *testing.T, dir string, flags []string) string {
	t.Helper()
	one := filepath.Join(dir, "train")
	if b, err := gtstorm(t, append([]string{"train", "--out", one}, flags...)...).CombinedOutput(); err != nil {
		t.Fatalf("train: %v\n%s", err, b)
	}
	return one
}

// TestStopReason: a rank stopped by a peer names the rank that stopped
// first and its address, also when a third rank told it.
func TestStopReason(t *testing.T) {
	first := &transport.PeerStoppedError{Rank: 1, Addr: "127.0.0.1:7001", Round: 13, Why: "interrupted"}
	relayed := &transport.PeerStoppedError{Rank: 0, Addr: "127.0.0.1:7000", Round: 13, Why: "since rank 1 at 127.0.0.1:7001 stopped"}
	tests := []struct {
		err  error
		want string
	}{
		{nil, "finished"},
		{fmt.Errorf("round 14: %w", train.ErrInterrupted), "interrupted"},
		{fmt.Errorf("gt-storm round 14: %w", first), "since rank 1 at 127.0.0.1:7001 stopped"},
		{fmt.Errorf("gt-storm round 15: %w", relayed), "since rank 1 at 127.0.0.1:7001 stopped"},
		{fmt.Errorf("gt-storm round 3: node 4: loss is NaN\nmore"), "failed: gt-storm round 3: node 4: loss is NaN"},
		{fmt.Errorf("round 5: %w", &transport.PeerTimeoutError{Rank: 2, Addr: "127.0.0.1:7002", What: "x", Timeout: time.Second}),
			"since rank 2 stopped responding (failed: round 5: rank 2 at 127.0.0.1:7002 did not answer within 1s (waiting for x))"},
	}
	for _, tt := range tests {
		if got := stopReason(tt.err); got != tt.want {
			t.Errorf("stopReason(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
