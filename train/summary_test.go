package train

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/internal/kernels"
)

// TestSummaryRecordsWhatApplies: summary.json records p_c only for an
// Erdős–Rényi graph and ρ only for GT-STORM, the settings that apply.
func TestSummaryRecordsWhatApplies(t *testing.T) {
	needA8A(t)
	edges := filepath.Join(t.TempDir(), "ring.edges")
	var b strings.Builder
	for i := range 10 {
		fmt.Fprintf(&b, "%d %d\n", i, (i+1)%10)
	}
	if err := os.WriteFile(edges, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		algo, topology string
		pc, rho        bool
	}{
		{decentral.GTSTORM, "er", true, true},
		{decentral.GTSTORM, edges, false, true},
		{decentral.DSGD, "er", true, false},
		{decentral.DSGD, "ring", false, false},
		{decentral.GNSD, edges, false, false},
	} {
		if (tc.algo != decentral.GTSTORM || tc.topology != "er") &&
			raceSkipsVariant(t, tc.algo+" on "+filepath.Base(tc.topology), "gt-storm on er") {
			continue
		}
		cfg := lrConfig(tc.algo)
		cfg.Topology, cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = tc.topology, 4, 2, 0
		out := t.TempDir()
		if _, err := Train(context.Background(), cfg, Options{Out: out}); err != nil {
			t.Fatalf("%s on %s: %v", tc.algo, tc.topology, err)
		}
		js, err := os.ReadFile(filepath.Join(out, SummaryFile))
		if err != nil {
			t.Fatal(err)
		}
		for key, want := range map[string]bool{`"pc":`: tc.pc, `"rho":`: tc.rho} {
			if got := bytes.Contains(js, []byte(key)); got != want {
				t.Errorf("%s on %s: summary.json has %s %v, want %v", tc.algo, filepath.Base(tc.topology), key, got, want)
			}
		}
	}
}

// kernelPeers is memPeers that report every rank's kernel set, as the
// transport's Control does on rank 0.
type kernelPeers struct {
	*memPeers
	sets []string
}

func (p kernelPeers) KernelSets() []string { return p.sets }

// TestRankProgressAndKernels: a rank other than 0, which measures nothing,
// prints a line on its own nodes at each evaluation round and no empty
// progress line; rank 0's summary names every rank's kernel set, "mixed"
// where they differ.
func TestRankProgressAndKernels(t *testing.T) {
	needA8A(t)
	cfg := lrConfig(decentral.GTSTORM)
	cfg.Iters, cfg.EvalEvery, cfg.CheckpointEvery = 20, 10, 0
	const k = 2
	owner := make([]int, cfg.Nodes)
	for i := range owner {
		owner[i] = i * k / cfg.Nodes
	}
	for _, tc := range []struct {
		sets []string // what rank 0's peers report; rank 0's own set replaces sets[0]
		want string
	}{
		{nil, kernels.Name()},
		{[]string{"", kernels.Name()}, kernels.Name()},
		{[]string{"", "other"}, fmt.Sprintf("mixed: %s on rank 0; other on rank 1", kernels.Name())},
	} {
		bus := newMemBus(k, cfg.Nodes)
		var progress [k]bytes.Buffer
		sums := make([]*Summary, k)
		errs := make([]error, k)
		var wg sync.WaitGroup
		for r := range k {
			var peers Peers = &memPeers{bus: bus, rank: r}
			if r == 0 && tc.sets != nil {
				peers = kernelPeers{peers.(*memPeers), tc.sets}
			}
			out := filepath.Join(t.TempDir(), fmt.Sprint(r))
			wg.Go(func() {
				sums[r], errs[r] = RunRank(context.Background(), cfg, RankOptions{
					Options: Options{Out: out, Progress: &progress[r]}, Rank: r, Owner: owner, Peers: peers, Control: peers.(Control),
				})
			})
		}
		wg.Wait()
		for r, err := range errs {
			if err != nil {
				t.Fatalf("rank %d: %v", r, err)
			}
		}
		if got := sums[0].Kernels; got != tc.want {
			t.Errorf("peers' kernel sets %q: summary's kernels %q, want %q", tc.sets, got, tc.want)
		}
		lines := strings.Split(strings.TrimSpace(progress[1].String()), "\n")
		for _, round := range []int{0, 10, 20} {
			if want := fmt.Sprintf("rank 1, round %d: its 5 nodes'", round); !strings.Contains(progress[1].String(), want) {
				t.Errorf("rank 1's progress has no %q:\n%s", want, progress[1].String())
			}
		}
		for _, l := range lines {
			if !strings.HasPrefix(l, "rank 1, round ") {
				t.Errorf("rank 1 prints %q, which is not a line on its nodes", l)
			}
		}
		if !strings.Contains(progress[0].String(), "round 20/20  S(x)") {
			t.Errorf("rank 0's progress has no figures:\n%s", progress[0].String())
		}
	}
}

// TestKernelSetsName: the ranks' kernel sets make one name, "mixed: " and
// each set with its ranks where they differ.
func TestKernelSetsName(t *testing.T) {
	for _, tc := range []struct {
		sets []string
		want string
	}{
		{[]string{"avx2"}, "avx2"},
		{[]string{"avx2", "avx2", "avx2"}, "avx2"},
		{[]string{"avx2", "go"}, "mixed: avx2 on rank 0; go on rank 1"},
		{[]string{"avx512", "avx2", "avx512", "avx2"}, "mixed: avx512 on ranks 0, 2; avx2 on ranks 1, 3"},
		{[]string{"neon", ""}, "mixed: neon on rank 0; unknown on rank 1"},
	} {
		if got := kernelSetsName(tc.sets); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.sets, got, tc.want)
		}
	}
}
