package train

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
)

// lifePeers is memPeers with the control plane of a rank's whole life:
// the agreement picks the round before the latest, and every call is
// recorded.
type lifePeers struct {
	*memPeers
	mu      sync.Mutex
	calls   []string
	reasons []string
}

func (p *lifePeers) note(call string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, call)
}

func (p *lifePeers) AgreeRound(ctx context.Context, rounds []int) (int, error) {
	p.note("agree")
	if len(rounds) < 2 {
		return 0, fmt.Errorf("rounds %v: want two", rounds)
	}
	return rounds[len(rounds)-2], nil
}

func (p *lifePeers) Leave(ctx context.Context, why string) error {
	p.note("leave")
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reasons = append(p.reasons, why)
	return nil
}

func (p *lifePeers) Abort(err error) { p.note("abort") }

// link returns the RankLink over p.
func (p *lifePeers) link() *RankLink {
	return &RankLink{
		Peers: p, Control: p,
		Start: func(context.Context) error { p.note("start"); return nil },
		Stats: func() string { return "stats" },
		Close: func() error { p.note("close"); return nil },
	}
}

// TestRankJobLife: RunRankJob starts the link, runs the rank, leaves with
// "finished" and closes, returning the link's stats; resumed with Agree,
// it resumes every rank from the round the control plane agrees on and
// ends with rank 0's summary of the uninterrupted run.
func TestRankJobLife(t *testing.T) {
	needA8A(t)
	cfg := lrConfig(decentral.GTSTORM)
	cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = 20, 10, 10
	const k = 2
	owner := make([]int, cfg.Nodes)
	for i := range owner {
		owner[i] = i * k / cfg.Nodes
	}
	outs := []string{filepath.Join(t.TempDir(), "rank0"), filepath.Join(t.TempDir(), "rank1")}
	run := func(agree bool) ([]*Summary, []*lifePeers, *bytes.Buffer) {
		bus := newMemBus(k, cfg.Nodes)
		sums, peers := make([]*Summary, k), make([]*lifePeers, k)
		var logs [k]bytes.Buffer
		var wg sync.WaitGroup
		for r := range k {
			peers[r] = &lifePeers{memPeers: &memPeers{bus: bus, rank: r}}
			job := RankJob{
				RankOptions: RankOptions{Options: Options{Out: outs[r], Progress: &logs[r]}, Rank: r, Owner: owner},
				Config:      cfg, Agree: agree, PeerTimeout: 1e9,
				Connect: func() (*RankLink, error) { return peers[r].link(), nil },
			}
			if agree {
				ck, err := ReadRankCheckpoint(outs[r], -1)
				if err != nil {
					t.Fatal(err)
				}
				job.Checkpoint = ck
			}
			wg.Go(func() {
				var stats string
				var err error
				sums[r], stats, err = RunRankJob(context.Background(), job)
				if err != nil || stats != "stats" {
					t.Errorf("rank %d: stats %q, error %v", r, stats, err)
				}
			})
		}
		wg.Wait()
		return sums, peers, &logs[0]
	}
	first, peers, _ := run(false)
	if first[0] == nil || first[1] != nil {
		t.Fatalf("summaries %v: want rank 0's alone", first)
	}
	for r, p := range peers {
		if got := strings.Join(p.calls, " "); got != "start leave close" {
			t.Errorf("rank %d: calls %q, want start, leave, close", r, got)
		}
		if len(p.reasons) != 1 || p.reasons[0] != "finished" {
			t.Errorf("rank %d: left with %q, want finished", r, p.reasons)
		}
	}
	again, peers, log := run(true)
	if got := strings.Join(peers[1].calls, " "); got != "start agree leave close" {
		t.Errorf("resumed rank 1: calls %q, want start, agree, leave, close", got)
	}
	if want := "rank 0: resuming from round 10, the latest all ranks kept\n"; !strings.Contains(log.String(), want) {
		t.Errorf("rank 0's log %q lacks %q", log, want)
	}
	if again[0] == nil || again[0].FinalTestAcc != first[0].FinalTestAcc || again[0].Samples != first[0].Samples {
		t.Fatalf("resumed rank 0's summary %+v, uninterrupted %+v", again[0], first[0])
	}
}

// TestRankJobChecksBeforeConnecting: a checkpoint resumed as another rank
// is refused before the rank connects.
func TestRankJobChecksBeforeConnecting(t *testing.T) {
	dir := t.TempDir()
	ck := &RankCheckpoint{Path: filepath.Join(dir, RankCheckpointFile(0)), Placement: placementOf(1, []int{0, 1})}
	cfg := Default()
	cfg.Nodes = 2
	_, stats, err := RunRankJob(context.Background(), RankJob{
		RankOptions: RankOptions{Options: Options{Out: dir}, Rank: 0, Owner: []int{0, 1}},
		Config:      cfg, Checkpoint: ck,
		Connect: func() (*RankLink, error) { t.Fatal("connected"); return nil, nil },
	})
	var pe *PlacementError
	if !errors.As(err, &pe) || stats != "" {
		t.Fatalf("stats %q, error %v; want a PlacementError", stats, err)
	}
}

// TestRankJobStopReason: without a StopReason of its own, a rank says it
// finished, or failed with its error.
func TestRankJobStopReason(t *testing.T) {
	var j RankJob
	if got := j.stopReason(nil); got != "finished" {
		t.Errorf("stopReason(nil) = %q", got)
	}
	if got := j.stopReason(errors.New("boom")); got != "failed: boom" {
		t.Errorf("stopReason(boom) = %q", got)
	}
}
