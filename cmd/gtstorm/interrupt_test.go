package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/train"
)

// waitFile waits until path exists, failing the test when ctx ends first.
func waitFile(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// quick is how soon every rank must stop after an interruption: well under
// the peer timeout of 60 s the ranks run with, so that they stopped because
// they learned it, not because a peer went silent.
const quick = 20 * time.Second

// TestInterruptResumes: Ctrl-C stops a run over three ranks cleanly —
// SIGINT to `gtstorm launch`, or to one `gtstorm rank` of three — every rank
// exits within seconds although the peer timeout is 60 s, the advice names
// the command that resumes a run over ranks, and that resume finishes equal
// to the uninterrupted run, number for number.
func TestInterruptResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts rank processes; run without -short")
	}
	flags := faultFlags
	dir := t.TempDir()
	one := trainReference(t, dir, flags)
	same := func(t *testing.T, out string) {
		t.Helper()
		sameModel(t, out, one)
		if got, want := metricsWithoutSeconds(t, out), metricsWithoutSeconds(t, one); got != want {
			t.Errorf("resumed run's metrics\n%s\nwant train's\n%s", got, want)
		}
	}

	t.Run("launch", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		out := filepath.Join(dir, "launch")
		cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"launch", "--ranks", "3", "--insecure", "--peer-timeout", "60s", "--out", out}, flags...)...)
		cmd.Env = append(os.Environ(), "GTSTORM_TEST_MAIN=1")
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFile(t, ctx, filepath.Join(train.RankDir(out, 1), train.RankCheckpointFile(12)))
		cmd.Process.Signal(os.Interrupt)
		start := time.Now()
		err := cmd.Wait()
		took := time.Since(start)
		if err == nil || took > quick {
			t.Fatalf("interrupted launch: %v after %v, want a failure within %v:\n%s", err, took, quick, &log)
		}
		text := log.String()
		for _, bad := range []string{"stopped at once", "not answering", "panic:"} {
			if strings.Contains(text, bad) {
				t.Errorf("interrupted launch says %q:\n%s", bad, text)
			}
		}
		if want := "continue with: gtstorm launch --resume --out " + out; !strings.Contains(text, want) {
			t.Errorf("interrupted launch does not say %q:\n%s", want, text)
		}
		t.Logf("the ranks stopped %v after SIGINT:\n%s", took.Round(time.Millisecond), text)
		if b, err := gtstorm(t, "launch", "--resume", "--out", out).CombinedOutput(); err != nil {
			t.Fatalf("launch --resume: %v\n%s", err, b)
		}
		same(t, out)
	})

	t.Run("one rank", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		sub := filepath.Join(dir, "nodes")
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		const k = 3
		cmds, logs := startRanks(t, ctx, sub, k, func(int) []string { return append([]string{"--peer-timeout", "60s"}, flags...) })
		waitFile(t, ctx, filepath.Join(sub, "rank1", train.RankCheckpointFile(12)))
		cmds[1].Process.Signal(os.Interrupt)
		start := time.Now()
		for r, c := range cmds {
			err := c.Wait()
			took := time.Since(start)
			if err == nil || took > quick {
				t.Fatalf("rank %d after rank 1 was interrupted: %v after %v, want a failure within %v:\n%s", r, err, took, quick, logs[r])
			}
			want := "rank 1 at "
			if r == 1 {
				want = "interrupted after round"
			}
			if !strings.Contains(logs[r].String(), want) {
				t.Errorf("rank %d does not say %q:\n%s", r, want, logs[r])
			}
			next := fmt.Sprintf("continue with: gtstorm rank --rank %d --ranks %s --insecure --resume --out %s", r, filepath.Join(sub, "ranks.txt"), filepath.Join(sub, fmt.Sprint("rank", r)))
			if !strings.Contains(logs[r].String(), next) {
				t.Errorf("rank %d does not say %q:\n%s", r, next, logs[r])
			}
		}
		t.Logf("the ranks stopped %v after SIGINT to rank 1:\n%s\n%s\n%s", time.Since(start).Round(time.Millisecond), logs[0], logs[1], logs[2])
		cmds, logs = startRanks(t, ctx, sub, k, func(int) []string { return []string{"--resume"} })
		for r, c := range cmds {
			if err := c.Wait(); err != nil {
				t.Fatalf("resumed rank %d: %v\n%s", r, err, logs[r])
			}
		}
		same(t, filepath.Join(sub, "rank0"))
	})
}
