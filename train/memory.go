package train

import (
	"bufio"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/gtstorm/gtstorm/decentral/robust"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/internal/inputfile"
	"github.com/gtstorm/gtstorm/internal/memlimit"
	"github.com/gtstorm/gtstorm/models"
)

// A run's memory is estimated from its settings and the sizes of its input
// files, before anything large is allocated, as the largest of three
// phases' totals:
//
//   - loading the data: the datasets and the buffers they are read through;
//   - building the graph: what the data, partition and sampler hold, plus
//     the generator's edge list and the transient of the mixing's spectrum;
//   - training: everything kept — data, partition, sampler, graph, mixing,
//     the optimizer's m × p state slabs and one model worker per goroutine
//     at the largest batch it runs — plus a checkpoint's copies of the state.
//
// The estimate is what the run needs: CheckMemory also sets the runtime's
// soft memory limit, so that the collector frees a checkpoint's garbage
// before the heap outgrows the memory available. Peak resident memory of
// `gtstorm train` (2 cores), with --max-memory leaving 1.05× the estimate
// usable, against the estimate:
//
//	MNIST, 10 nodes, batch 64          139 MiB estimated, 132 MiB measured
//	MNIST, 200 nodes                   207 MiB, 230 MiB
//	MNIST, batch 4096                  661 MiB, 669 MiB
//	a8a, 1000 nodes, batch 1            48 MiB,  61 MiB
//	MNIST, 4000 nodes iid              2.5 GiB, 2.8 GiB
//	MNIST, GNSD, 500 nodes iid         518 MiB, 565 MiB
//
// Without a limit near, the collector lets garbage grow to the live heap's
// size: a run's two checkpoints (round 0 and the last) then raise the peak
// of state-heavy runs to about 1.5× the estimate.

// Memory estimate constants.
const (
	// baseMemory is the process before any data: the runtime, the binary's
	// text and data and Gorgonia's tables (16.5 MB measured for gtstorm
	// help), with room for goroutine stacks and small objects.
	baseMemory = 24 << 20

	// The headroom kept free of the memory limit: a tenth of it, between
	// 64 MiB and 2 GiB — for what the estimate leaves out (the page cache of
	// the files written, the allocator's fragmentation) and its error.
	headroomFraction = 0.10
	headroomMin      = 64 << 20
	headroomMax      = 2 << 30
)

// MemoryPart is one item of a memory estimate.
type MemoryPart struct {
	Name   string // what holds the memory, e.g. "optimizer state"
	Bytes  int64
	Detail string // how it is counted, e.g. "4 slabs × 20000 nodes × 18378 parameters × 4 B"
}

// MemoryEstimate is the expected peak memory of a run.
type MemoryEstimate struct {
	Peak  int64        // bytes at the busiest phase
	Phase string       // that phase: "loading the data", "building the graph" or "training"
	Parts []MemoryPart // what that phase holds, largest first; they sum to Peak
}

// String lists the parts, largest first, in one line.
func (e MemoryEstimate) String() string {
	parts := make([]string, 0, len(e.Parts))
	for _, p := range e.Parts {
		s := p.Name + " " + memlimit.Format(p.Bytes)
		if p.Detail != "" {
			s += " (" + p.Detail + ")"
		}
		parts = append(parts, s)
	}
	return fmt.Sprintf("%s at its peak, %s: %s", memlimit.Format(e.Peak), e.Phase, strings.Join(parts, ", "))
}

// phase is when a part is allocated: it is held from then on, unless it is
// transient, in which case only during that phase.
type phase int

const (
	phaseLoad phase = iota
	phaseBuild
	phaseTrain
)

var phaseNames = [...]string{"loading the data", "building the graph", "training"}

type part struct {
	MemoryPart
	from      phase
	transient bool
}

// EstimateMemory returns the expected peak memory of a run of c, from its
// settings and the sizes of its data files, in well under a second: it
// reads a LibSVM file once (its first 256 MiB if longer) to count samples,
// values and features, and builds a worker's graphs for batches of 1 and 2
// samples to size the model's buffers. A missing or unreadable file counts
// as empty: loading it reports the error.
func (c Config) EstimateMemory() MemoryEstimate {
	var parts []part
	add := func(from phase, transient bool, name string, b int64, format string, args ...any) {
		if b > 0 {
			parts = append(parts, part{MemoryPart{name, b, fmt.Sprintf(format, args...)}, from, transient})
		}
	}
	add(phaseLoad, false, "runtime", baseMemory, "")

	// Data.
	ds := c.dataSizes()
	add(phaseLoad, false, "data", ds.bytes, "%s", ds.detail)
	add(phaseLoad, true, "loading buffers", ds.load, "")

	// Model: the dataset's, its size from the data's description alone.
	model, err := NewModel(c, &data.Dataset{Shape: []int{max(ds.features, 1)}, Classes: 2})
	if err != nil {
		return peakOf(parts) // an unknown dataset, which Validate reports
	}
	p := model.NumParams()

	// Partition, sampler and the fixed subsets for ∇f(x̄).
	m, n := int64(c.Nodes), int64(ds.train)
	add(phaseBuild, false, "partition", 2*n*8+m*(3*24+8*int64(ds.classes)+16),
		"%d sample indices, twice (shares and gradient subsets)", n)
	add(phaseBuild, true, "partition draw", n*8, "")
	add(phaseBuild, false, "sampler", m*(176+8*int64(c.Batch)), "%d nodes × batch %d indices", m, c.Batch)

	// Graph and mixing.
	edges := graph.ExpectedEdges(c.Topology, c.Nodes, c.PC)
	if edges < 0 {
		edges = float64(countEdges(c.Topology))
	}
	gKept, gBuild := graph.Bytes(c.Topology, c.Nodes, edges)
	mKept, mSpec := graph.MixingBytes(c.Topology, c.Mixing, c.Nodes, edges)
	add(phaseBuild, false, "graph", gKept, "%d nodes, %.4g edges", c.Nodes, edges)
	add(phaseBuild, true, "graph generation", gBuild-gKept, "")
	add(phaseBuild, false, "mixing weights", mKept, "")
	add(phaseBuild, true, "mixing spectrum", mSpec, "")

	// Optimizer: state slabs and the rest.
	workers := decentral.Config{Workers: c.Workers}.WorkerCount(c.Nodes)
	if f, err := decentral.SlabFloats(c.Algo, p); err == nil {
		state := m * int64(f) * 4
		add(phaseTrain, false, "optimizer state", state,
			"%d slabs × %d nodes × %d parameters × 4 B", f/max(p, 1), c.Nodes, p)
		if all, err := decentral.OptimizerBytes(c.Algo, c.Nodes, p, workers); err == nil {
			add(phaseTrain, false, "optimizer buffers", all-state, "")
		}
	}
	if s, err := c.robustSetting(); err == nil {
		degree := 2 * edges / float64(max(c.Nodes, 1))
		rule := s.Aggregate != nil && s.Aggregate.String() != robust.AggMean
		if b, err := robust.Bytes(c.Algo, len(s.Byzantine), p, workers, degree, s.Attack.Lies(), rule); err == nil && b > 0 {
			add(phaseTrain, false, "Byzantine messages", b,
				"%d liars × 2 rounds × %.3g neighbours × p floats", len(s.Byzantine), degree)
		}
	}
	if ck, err := decentral.CheckpointBytes(c.Algo, c.Nodes, p); err == nil {
		add(phaseTrain, true, "checkpoint", ck+m*40, "a copy of the state and its encoding")
	}

	// Model workers: one per goroutine, each at the largest graphs it runs.
	train, eval, kept := c.graphSizes(ds)
	if wb, err := models.WorkerBytes(model, train, eval); err == nil {
		if len(kept) > 0 {
			extra, _ := models.WorkerBytes(model, kept, nil)
			wb += extra
		}
		add(phaseTrain, false, "model workers", int64(workers)*wb,
			"%d × %s at batch %d", workers, memlimit.Format(wb), slices.Max(train))
	}
	add(phaseTrain, true, "evaluation", int64(ds.eval)*8+m*64, "")

	return peakOf(parts)
}

// peakOf sums the parts held in each phase and returns the largest phase.
func peakOf(parts []part) MemoryEstimate {
	var best MemoryEstimate
	for ph := phaseLoad; ph <= phaseTrain; ph++ {
		e := MemoryEstimate{Phase: phaseNames[ph]}
		for _, p := range parts {
			if p.from < ph && !p.transient || p.from == ph {
				e.Parts = append(e.Parts, p.MemoryPart)
				e.Peak += p.Bytes
			}
		}
		if e.Peak >= best.Peak {
			best = e
		}
	}
	slices.SortStableFunc(best.Parts, func(a, b MemoryPart) int {
		switch {
		case a.Bytes > b.Bytes:
			return -1
		case a.Bytes < b.Bytes:
			return 1
		}
		return 0
	})
	return best
}

// graphSizes returns the batch sizes a model worker computes gradients on —
// the minibatch and the fixed subsets of the gradient norm at x̄ — and the
// chunk sizes it evaluates. When the subsets are whole shares of unequal
// sizes (--grad-samples 0, or above a share, and a partition other than
// iid), a worker's buffers grow with the largest share it meets while the
// graphs built for the smaller ones keep theirs: kept counts one more
// share's worth.
func (c Config) graphSizes(ds dataSizes) (train, eval, kept []int) {
	train = []int{c.Batch}
	share := maxShare(c.Partition, ds.train, c.Nodes, ds.classes)
	if c.GradSamples > 0 && c.GradSamples < share {
		train = append(train, c.GradSamples)
	} else {
		train = append(train, share)
		if spec, err := data.ParsePartition(c.Partition); err == nil && spec.Kind != "iid" {
			kept = []int{share}
		}
	}
	for _, n := range []int{ds.eval, min(c.LocalEvalSamples, ds.eval)} {
		if n <= 0 {
			n = ds.eval
		}
		eval = append(eval, min(n, EvalChunk), n%EvalChunk)
	}
	return train, eval, kept
}

// maxShare returns the largest number of training samples a node holds
// under the partition: n/m for iid and shards, the largest class group
// (classes within 15% of the mean) for label, three times n/m for
// Dirichlet, whose shares vary widely, and the largest share of a
// partition file (three times n/m if the file does not fit the data).
func maxShare(partition string, n, m, classes int) int {
	spec, err := data.ParsePartition(partition)
	if err != nil || m < 1 || n < 1 {
		return max(n, 1)
	}
	even := (n + m - 1) / m
	switch spec.Kind {
	case "label":
		classes = max(classes, 1)
		perClass := float64(n) / float64(classes) * 1.15
		if m <= classes {
			return min(n, int(perClass*float64((classes+m-1)/m))+1)
		}
		return min(n, int(perClass/float64(m/classes))+1)
	case "dirichlet":
		return min(n, 3*even)
	case "natural":
		// Shares differ by at most the largest writer (a few hundred
		// samples in FEMNIST), unknown before loading: twice n/m.
		return min(n, 2*even)
	case "file":
		if sizes, err := data.PartitionFileSizes(spec.Path, n, m); err == nil {
			return max(slices.Max(sizes), 1)
		}
		return min(n, 3*even)
	}
	return even
}

// dataSizes is what a run's data holds.
type dataSizes struct {
	train, eval int // samples of the training set and of the evaluated set (test, else train)
	classes     int
	features    int   // LibSVM: the feature count (0 for the images)
	bytes, load int64 // held, and transient while loading
	detail      string
}

// TrainSamples returns the number of training samples of c's data: known
// for the images, counted in a LibSVM file (its first 256 MiB, the rest
// extrapolated; 0 for a missing file).
func (c Config) TrainSamples() int { return c.dataSizes().train }

// dataSizes returns the sizes of the data, as its registry entry knows
// them (data.Spec.Sizes: known for the images, scanned in LibSVM files);
// zero for an unknown dataset.
func (c Config) dataSizes() dataSizes {
	s, ok := c.dataset()
	if !ok {
		return dataSizes{}
	}
	sz := s.Sizes(c.DataDir, c.loadOptions())
	ds := dataSizes{train: sz.Train, eval: sz.Test, classes: sz.Classes, bytes: sz.Bytes, load: sz.Load, detail: sz.Detail}
	if ds.eval == 0 {
		ds.eval = ds.train
	}
	if s.LogReg && len(sz.Shape) == 1 {
		ds.features = sz.Shape[0]
	}
	return ds
}

// countEdges counts the edge lines of an edge-list file (0 if unreadable,
// or not a regular file: a named pipe would block its open).
func countEdges(path string) int64 {
	f, _, err := inputfile.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var n int64
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if strings.TrimSpace(line) != "" {
			n++
		}
	}
	return n
}

// MemoryError is a run that cannot fit in the memory it may use.
type MemoryError struct {
	Estimate MemoryEstimate
	Limit    int64  // the memory the run may use
	Source   string // where Limit comes from: "--max-memory" or the detected limit's source
	Headroom int64  // kept free of Limit
}

func (e *MemoryError) Error() string {
	avail := fmt.Sprintf("%s is available (%s)", memlimit.Format(e.Limit), e.Source)
	if e.Source == maxMemoryFlag {
		avail = fmt.Sprintf("--max-memory allows %s", memlimit.Format(e.Limit))
	}
	return fmt.Sprintf("not enough memory: the run needs about %s, but %s, less %s of headroom",
		e.Estimate, avail, memlimit.Format(e.Headroom))
}

// Given reports whether the limit is the max-memory setting rather than a
// detected one.
func (e *MemoryError) Given() bool { return e.Source == maxMemoryFlag }

const maxMemoryFlag = "--max-memory"

// headroom returns the memory kept free of limit.
func headroom(limit int64) int64 {
	return min(max(int64(float64(limit)*headroomFraction), headroomMin), headroomMax)
}

// CheckMemory estimates the run's peak memory (EstimateMemory) and returns
// a *MemoryError if it exceeds the memory the run may use, less headroom:
// Config.MaxMemory when set, else the detected limit (memlimit.Detect: the
// cgroup limit or the machine's available memory, the smaller). Without a
// known limit it checks nothing.
//
// When the run fits, CheckMemory also sets the Go runtime's soft memory
// limit (debug.SetMemoryLimit) to that usable memory, unless one is set
// already (GOMEMLIMIT, or a lower one): the collector then runs harder
// near the limit instead of letting garbage grow to twice the live heap,
// which the estimate does not count.
func (c Config) CheckMemory() error {
	return c.checkMemory(memlimit.Detect)
}

func (c Config) checkMemory(detect func() (memlimit.Limit, error)) error {
	lim := memlimit.Limit{Bytes: c.MaxMemory, Source: maxMemoryFlag}
	if c.MaxMemory <= 0 {
		var err error
		if lim, err = detect(); err != nil {
			return nil
		}
	}
	est := c.EstimateMemory()
	room := headroom(lim.Bytes)
	usable := lim.Bytes - room
	if est.Peak > usable {
		return &MemoryError{Estimate: est, Limit: lim.Bytes, Source: lim.Source, Headroom: room}
	}
	if cur := debug.SetMemoryLimit(-1); usable < cur {
		debug.SetMemoryLimit(usable)
	}
	return nil
}
