package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/internal/memlimit"
	"github.com/gtstorm/gtstorm/models"
)

// The calibration against real runs' peak resident memory is in
// memory.go's comment; TestEstimateMemoryMeasured and TestGraphEstimates
// compare parts of the estimate with the live heap in-process.

// partOf returns the named part of e, or a zero part.
func partOf(e MemoryEstimate, name string) MemoryPart {
	for _, p := range e.Parts {
		if p.Name == name {
			return p
		}
	}
	return MemoryPart{}
}

func TestEstimateMemoryParts(t *testing.T) {
	cfg := Default()
	cfg.Nodes, cfg.Workers = 1000, 2
	e := cfg.EstimateMemory()
	p := int64(models.NewMNISTCNN().NumParams())
	if e.Phase != "training" {
		t.Errorf("phase %q, want training", e.Phase)
	}
	if got, want := partOf(e, "optimizer state").Bytes, 4*1000*p*4; got != want {
		t.Errorf("GT-STORM state of 1000 nodes: %d bytes, want 4 slabs × 1000 × %d × 4 = %d", got, p, want)
	}
	if got, want := partOf(e, "checkpoint").Bytes, 2*2*1000*p*4; got < want || got > want+want/100 {
		t.Errorf("checkpoint: %d bytes, want about 2 × (x, v) = %d", got, want)
	}
	if got, want := partOf(e, "data").Bytes, int64(70000*785); got != want {
		t.Errorf("MNIST data: %d bytes, want %d", got, want)
	}
	var sum int64
	for _, p := range e.Parts {
		sum += p.Bytes
	}
	if sum != e.Peak {
		t.Errorf("parts sum to %d, peak is %d", sum, e.Peak)
	}
	// A model worker at batch 64 holds about 5 MB (see models/model.go),
	// here sized at the gradient norm's subsets of 100 samples.
	if w := partOf(e, "model workers").Bytes / 2; w < 5e6 || w > 12e6 {
		t.Errorf("a model worker holds %d bytes, want 5–12 MB", w)
	}
}

// TestEstimateMemoryGrows checks the estimate against a table of settings:
// it grows with the nodes, the batch, the workers, the edges and the
// algorithm's slabs, by the amounts the parts say.
func TestEstimateMemoryGrows(t *testing.T) {
	base := Default()
	base.Workers = 2
	with := func(f func(*Config)) Config { c := base; f(&c); return c }
	p := int64(models.NewMNISTCNN().NumParams())
	cases := []struct {
		name         string
		small, large Config
		minGain      int64 // the peak grows by at least this much
		part         string
		factor       float64 // the part grows by at least 0.9 times this factor
	}{
		{"nodes ×10", with(func(c *Config) { c.Nodes = 100 }), with(func(c *Config) { c.Nodes = 1000 }),
			900 * 4 * p * 4 * 2, "optimizer state", 10},
		{"batch 64 → 4096", with(func(c *Config) { c.Nodes = 200 }), with(func(c *Config) { c.Nodes = 200; c.Batch = 4096 }),
			2 * 4000 * 70e3, "model workers", 30},
		{"workers 1 → 2", with(func(c *Config) { c.Workers = 1; c.Batch = 4096 }), with(func(c *Config) { c.Batch = 4096 }),
			250e6, "model workers", 2},
		{"dsgd → gt-storm", with(func(c *Config) { c.Algo = decentral.DSGD; c.Nodes = 500 }), with(func(c *Config) { c.Nodes = 500 }),
			500 * 2 * p * 4 * 2, "optimizer state", 2},
		{"gt-storm → gnsd", with(func(c *Config) { c.Nodes = 500 }), with(func(c *Config) { c.Algo = decentral.GNSD; c.Nodes = 500 }),
			500 * 2 * p * 4 * 2, "optimizer state", 1.5},
		{"ring → er", with(func(c *Config) { c.Nodes = 3000; c.Topology = "ring" }), with(func(c *Config) { c.Nodes = 3000 }),
			0.5 * 3000 * 2999 / 2 * 48, "graph", 300},
		{"pc 0.1 → 0.9", with(func(c *Config) { c.Nodes = 3000; c.PC = 0.1 }), with(func(c *Config) { c.Nodes = 3000; c.PC = 0.9 }),
			0.8 * 3000 * 2999 / 2 * 48, "graph", 8},
	}
	for _, c := range cases {
		s, l := c.small.EstimateMemory(), c.large.EstimateMemory()
		if l.Peak-s.Peak < c.minGain {
			t.Errorf("%s: peak %s → %s, want a gain of at least %s", c.name,
				memlimit.Format(s.Peak), memlimit.Format(l.Peak), memlimit.Format(c.minGain))
		}
		ps, pl := partOf(s, c.part).Bytes, partOf(l, c.part).Bytes
		if ratio := float64(pl) / float64(ps); ps == 0 || ratio < 0.9*c.factor {
			t.Errorf("%s: %s %d → %d bytes (×%.2f), want at least ×%g", c.name, c.part, ps, pl, ratio, 0.9*c.factor)
		}
	}
}

// TestEstimateMemoryLarge: the runs of the issue are sized in GiB, within
// milliseconds, and a dense graph is the graph phase's peak.
func TestEstimateMemoryLarge(t *testing.T) {
	cfg := Default()
	cfg.Workers = 2
	cfg.Nodes, cfg.Partition = 20000, "iid"
	e := cfg.EstimateMemory()
	// 4 slabs and a 2-slab checkpoint of 20000 × 18378 floats (11 GiB), 10⁸
	// edges (graph and weights, over 5 GiB).
	if e.Peak < 15<<30 || e.Peak > 20<<30 {
		t.Errorf("20000 nodes: %s", e)
	}
	cfg = Default()
	cfg.Workers, cfg.Batch = 2, 100000
	e = cfg.EstimateMemory()
	if w := partOf(e, "model workers").Bytes; w < 2*100000*70e3 || w > 2*100000*80e3 {
		t.Errorf("batch 100000: workers %s, want 2 × 100000 × 70–80 KB", memlimit.Format(w))
	}
	cfg = Default()
	cfg.Nodes, cfg.PC, cfg.Partition = 40000, 1, "iid"
	if e := cfg.EstimateMemory(); e.Peak < 40000*40000/2*64 {
		t.Errorf("complete 40000-node ER graph: %s", e)
	}
}

// TestCheckMemoryRefuses: a run that does not fit is refused before any
// loading, with a *MemoryError naming the estimate, its largest parts, the
// limit and the flags to change.
func TestCheckMemoryRefuses(t *testing.T) {
	cfg := Default()
	cfg.Nodes, cfg.Topology, cfg.Partition, cfg.Iters = 30000, "ring", "iid", 1
	cfg.MaxMemory = 1 << 30
	cfg.DataDir = filepath.Join(t.TempDir(), "no-such-folder") // refused before loading
	_, err := newSetup(cfg)
	var me *MemoryError
	if !errors.As(err, &me) {
		t.Fatalf("newSetup: %v, want a *MemoryError", err)
	}
	msg := err.Error()
	for _, want := range []string{
		"needs about " + memlimit.Format(me.Estimate.Peak), "optimizer state", "4 slabs × 30000 nodes",
		"--max-memory allows 1.0 GiB", "headroom",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", msg)
	}
	if me.Limit != 1<<30 || me.Estimate.Peak < 10<<30 {
		t.Errorf("limit %d, estimate %d", me.Limit, me.Estimate.Peak)
	}
}

func TestCheckMemoryDetected(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64)) // no limit from earlier runs
	cfg := Default()
	cfg.Nodes = 2000
	detect := func(b int64) func() (memlimit.Limit, error) {
		return func() (memlimit.Limit, error) { return memlimit.Limit{Bytes: b, Source: "cgroup v2 limit /fake"}, nil }
	}
	err := cfg.checkMemory(detect(1 << 30))
	var me *MemoryError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "1.0 GiB is available (cgroup v2 limit /fake)") || me.Given() {
		t.Errorf("1 GiB detected: %v", err)
	}
	// --max-memory overrides the detected limit either way.
	cfg.MaxMemory = 1 << 40
	if err := cfg.checkMemory(detect(1 << 30)); err != nil {
		t.Errorf("--max-memory 1TiB over a detected 1 GiB: %v", err)
	}
	cfg.MaxMemory = 0
	if err := cfg.checkMemory(detect(1 << 40)); err != nil {
		t.Errorf("1 TiB detected: %v", err)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<40-headroomMax {
		t.Errorf("soft memory limit %d after a fitting check, want the usable %d", got, int64(1<<40-headroomMax))
	}
	// Without a known limit nothing is checked.
	if err := cfg.checkMemory(func() (memlimit.Limit, error) { return memlimit.Limit{}, memlimit.ErrUnknown }); err != nil {
		t.Errorf("unknown limit: %v", err)
	}
	// The headroom: a tenth, at least 64 MiB, at most 2 GiB.
	for _, c := range []struct{ limit, want int64 }{{256 << 20, 64 << 20}, {4 << 30, 4 << 30 / 10}, {64 << 30, 2 << 30}} {
		if got := headroom(c.limit); got != c.want {
			t.Errorf("headroom(%d) = %d, want %d", c.limit, got, c.want)
		}
	}
}

func TestEstimateA8A(t *testing.T) {
	needA8A(t)
	cfg := Default()
	cfg.Dataset, cfg.DataDir, cfg.Nodes, cfg.Batch = "libsvm", a8a, 1000, 1
	ds := cfg.dataSizes()
	if ds.train != 22696 || ds.eval != 9865 || ds.features != 123 {
		t.Errorf("a8a: %d training and %d test samples, %d features; want 22696, 9865, 123", ds.train, ds.eval, ds.features)
	}
	if e := cfg.EstimateMemory(); e.Peak < 32<<20 || e.Peak > 96<<20 {
		t.Errorf("a8a on 1000 nodes: %s", e)
	}
}

// TestEstimateMemoryMeasured builds and runs a small LibSVM setup and
// compares the live heap with the estimate's parts held while training
// (without the runtime and the transients), and the snapshot's length with
// SnapshotFloats.
func TestEstimateMemoryMeasured(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "synthetic")
	var b strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&b, "%d", 2*(i%2)-1)
		for k := 1; k <= 3000; k += 1 + (i*7+k)%97 {
			fmt.Fprintf(&b, " %d:0.%d", k, (i+k)%9+1)
		}
		b.WriteByte('\n')
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
	// The heap is shared with what the test binary still frees: the workers
	// of a closed setup, exiting, keep it alive. settled waits, up to a
	// deadline, until the goroutines are no more than before the first setup.
	base := runtime.NumGoroutine()
	settled := func() {
		n := runtime.NumGoroutine()
		for end := time.Now().Add(10 * time.Second); n > base && time.Now().Before(end); n = runtime.NumGoroutine() {
			time.Sleep(time.Millisecond)
		}
		if n > base {
			t.Logf("%d goroutines 10 s after closing the setup, %d before it", n, base)
		}
	}
	for _, algo := range decentral.Algorithms() {
		cfg := Default()
		cfg.Dataset, cfg.DataDir, cfg.Algo = "libsvm", path, algo
		cfg.Nodes, cfg.Topology, cfg.Partition, cfg.Workers = 400, "ring", "iid", 2
		e := cfg.EstimateMemory()
		var kept int64
		for _, name := range []string{"data", "partition", "sampler", "graph", "mixing weights",
			"optimizer state", "optimizer buffers", "model workers"} {
			kept += partOf(e, name).Bytes
		}
		// Measure up to three times, each once the setup before has ended.
		var (
			s    *setup
			live int64
		)
		for try := range 3 {
			if s != nil {
				s.opt.Close()
				s = nil
			}
			settled()
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var err error
			if s, err = newSetup(cfg); err != nil {
				t.Fatal(err)
			}
			if err := s.opt.Init(context.Background()); err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			live = int64(after.HeapAlloc) - int64(before.HeapAlloc)
			if r := float64(kept) / float64(live); r >= 0.75 && r <= 1.33 {
				break
			} else if try == 2 {
				t.Errorf("%s: estimated %s held, measured %s (×%.2f)", algo, memlimit.Format(kept), memlimit.Format(live), r)
			} else {
				t.Logf("%s: try %d: estimated %s held, measured %s (×%.2f); measuring again", algo, try, memlimit.Format(kept), memlimit.Format(live), r)
			}
		}
		snap, err := s.opt.State()
		if err != nil {
			t.Fatal(err)
		}
		p := s.model.NumParams()
		want, _ := decentral.SnapshotFloats(algo, p)
		got := 0
		for _, sl := range snap.Slabs {
			got += len(sl.Data)
		}
		if got != cfg.Nodes*want {
			t.Errorf("%s: snapshot of %d floats, SnapshotFloats says %d × %d", algo, got, cfg.Nodes, want)
		}
		t.Logf("%s: estimated %s held, measured %s", algo, memlimit.Format(kept), memlimit.Format(live))
		s.opt.Close()
		runtime.KeepAlive(s)
	}
}

// TestGraphEstimates checks the edge counts of the generators and the
// memory of a graph and its mixing against what building them holds.
func TestGraphEstimates(t *testing.T) {
	if raceEnabled {
		t.Skip("edge counts and heap sizes of graphs built on one goroutine (dense eigenvalues of 800 nodes): 5 to 10 times slower under -race, which finds nothing there; the plain go test ./... runs it")
	}
	for _, name := range []string{"ring", "path", "star", "complete", "torus"} {
		for _, m := range []int{1, 2, 3, 4, 12, 30, 49, 97} {
			g, err := graph.Generate(name, m, 0, 1)
			if err != nil {
				t.Fatal(err)
			}
			if got := graph.ExpectedEdges(name, m, 0); got != float64(len(g.Edges)) {
				t.Errorf("%s on %d nodes: ExpectedEdges %v, the graph has %d", name, m, got, len(g.Edges))
			}
		}
	}
	for _, c := range []struct {
		topology string
		m        int
		pc       float64
	}{{"er", 800, 0.5}, {"er", 300, 0.3}, {"torus", 5000, 0}} {
		e := graph.ExpectedEdges(c.topology, c.m, c.pc)
		gk, _ := graph.Bytes(c.topology, c.m, e)
		mk, _ := graph.MixingBytes(c.topology, graph.MixLaplacian, c.m, e)
		// The heap is shared with whatever else the test binary still runs
		// (an earlier test's workers finishing): measure up to three times.
		var live int64
		for range 3 {
			live = graphHeap(t, c.topology, c.m, c.pc)
			if r := float64(gk+mk) / float64(live); r >= 0.75 && r <= 1.33 {
				break
			}
		}
		if r := float64(gk+mk) / float64(live); r < 0.75 || r > 1.33 {
			t.Errorf("%s m=%d: estimated %s for graph and mixing, measured %s (×%.2f)", c.topology, c.m,
				memlimit.Format(gk+mk), memlimit.Format(live), r)
		}
		t.Logf("%s m=%d: estimated %s for graph and mixing, measured %s", c.topology, c.m,
			memlimit.Format(gk+mk), memlimit.Format(live))
	}
}

// graphHeap returns the heap that building a graph and its mixing holds.
func graphHeap(t *testing.T, topology string, m int, pc float64) int64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	g, err := graph.Generate(topology, m, pc, 1)
	if err != nil {
		t.Fatal(err)
	}
	mx, err := graph.NewMixing(graph.MixLaplacian, g)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(mx)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// TestEstimateMemoryByzantine: liars keep two rounds of a message to every
// neighbour, so their buffers grow with B and the degree, and a robust rule
// alone costs each worker only its two p-float sums.
func TestEstimateMemoryByzantine(t *testing.T) {
	base := Default()
	base.Workers, base.Nodes, base.PC = 2, 200, 0.5
	p := int64(models.NewMNISTCNN().NumParams())
	degree := int64(100) // 0.5 × 199, rounded
	liars := func(b, pc float64) int64 {
		c := base
		c.Byzantine, c.Attack, c.PC = fmt.Sprint(b), "signflip", pc
		return partOf(c.EstimateMemory(), "Byzantine messages").Bytes
	}
	// 20 liars × 2 rounds × ~100 neighbours × 2 shared slabs (GT-STORM's x
	// and v) × p floats.
	want := 20 * 2 * degree * 2 * p * 4
	if got := liars(20, 0.5); got < want*9/10 || got > want*11/10 {
		t.Errorf("20 liars on ER(200, 0.5): %s, want about %s", memlimit.Format(got), memlimit.Format(want))
	}
	if a, b := liars(10, 0.5), liars(20, 0.5); b < 19*a/10 {
		t.Errorf("10 → 20 liars: %d → %d bytes, want about twice", a, b)
	}
	if a, b := liars(20, 0.1), liars(20, 0.5); b < 4*a {
		t.Errorf("p_c 0.1 → 0.5: %d → %d bytes, want about 5 times", a, b)
	}
	clip := base
	clip.Aggregate = "clip"
	if got := partOf(clip.EstimateMemory(), "Byzantine messages").Bytes; got < 2*p*16 || got > 2*p*16+4096 {
		t.Errorf("clip alone: %d bytes, want 2 workers × 16p = %d", got, 2*p*16)
	}
	if got := partOf(base.EstimateMemory(), "Byzantine messages").Bytes; got != 0 {
		t.Errorf("no attack, plain gossip: %d bytes of Byzantine messages", got)
	}
}
