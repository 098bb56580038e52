package data

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/gtstorm/gtstorm/internal/detmath"
)

// Partition assigns the samples of a dataset to m nodes.
type Partition struct {
	Nodes [][]int // Nodes[i]: the sample indices of node i, increasing
	Hist  [][]int // Hist[i][c]: how many of node i's samples have class c

	// A partition Restrict returned holds the shares of the nodes kept
	// only; fp is the fingerprint of the whole partition it was cut from.
	kept []bool
	fp   uint64
}

// Len returns the number of nodes.
func (p *Partition) Len() int { return len(p.Nodes) }

// Sizes returns how many samples each node holds (0 for a node whose share
// Restrict dropped).
func (p *Partition) Sizes() []int {
	s := make([]int, len(p.Nodes))
	for i, n := range p.Nodes {
		s[i] = len(n)
	}
	return s
}

// dirichletTries bounds the redraws of a Dirichlet partition that left a
// node empty.
const dirichletTries = 100

// newPartition sorts each node's indices, counts its classes and requires
// every node to hold at least one sample.
func newPartition(d *Dataset, nodes [][]int, what string) (*Partition, error) {
	p := &Partition{Nodes: nodes, Hist: make([][]int, len(nodes))}
	for i, idx := range nodes {
		if len(idx) == 0 {
			return nil, fmt.Errorf("partition %s of %d samples over %d nodes: node %d would get no samples",
				what, d.Len(), len(nodes), i)
		}
		slices.Sort(idx)
		h := make([]int, d.Classes)
		for _, j := range idx {
			h[d.Labels[j]]++
		}
		p.Hist[i] = h
	}
	return p, nil
}

// checkNodes validates the node count against the dataset.
func checkNodes(d *Dataset, m int, what string) error {
	switch {
	case m < 1:
		return fmt.Errorf("partition %s: %d nodes, want at least 1", what, m)
	case d.Len() < m:
		return fmt.Errorf("partition %s of %s: %d samples cannot give each of %d nodes one", what, d.Name, d.Len(), m)
	case d.Classes < 1:
		return fmt.Errorf("partition %s of %s: dataset has %d classes", what, d.Name, d.Classes)
	}
	return nil
}

// byClass returns the sample indices of each class, in increasing order.
func byClass(d *Dataset) [][]int {
	counts := d.ClassCounts()
	out := make([][]int, d.Classes)
	for c := range out {
		out[c] = make([]int, 0, counts[c])
	}
	for i, l := range d.Labels {
		out[l] = append(out[l], i)
	}
	return out
}

// split cuts s into k contiguous parts whose sizes differ by at most one,
// the larger ones first.
func split(s []int, k int) [][]int {
	out := make([][]int, k)
	n := len(s)
	at := 0
	for j := range out {
		size := n / k
		if j < n%k {
			size++
		}
		out[j] = s[at : at+size : at+size]
		at += size
	}
	return out
}

// PartitionIID shuffles the samples with a generator seeded by seed and deals
// them to m nodes in equal shares (sizes differ by at most one).
func PartitionIID(d *Dataset, m int, seed uint64) (*Partition, error) {
	if err := checkNodes(d, m, "iid"); err != nil {
		return nil, err
	}
	perm := rand.New(newPCG(seed, streamPartition, 0)).Perm(d.Len())
	parts := split(perm, m)
	nodes := make([][]int, m)
	for i, s := range parts {
		nodes[i] = slices.Clone(s)
	}
	return newPartition(d, nodes, "iid")
}

// PartitionLabel is the paper's non-IID split by class, with C classes:
// m = C gives node i exactly the samples of class i; m < C gives node i the
// classes c ≡ i (mod m); m > C splits class c evenly (contiguous runs in
// index order, sizes differing by at most one) among the nodes i ≡ c (mod C).
// It is an error if a node would get no sample.
func PartitionLabel(d *Dataset, m int) (*Partition, error) {
	if err := checkNodes(d, m, "label"); err != nil {
		return nil, err
	}
	C := d.Classes
	classes := byClass(d)
	nodes := make([][]int, m)
	if m <= C {
		for c, idx := range classes {
			nodes[c%m] = append(nodes[c%m], idx...)
		}
		return newPartition(d, nodes, "label")
	}
	for c, idx := range classes {
		k := (m - c + C - 1) / C // nodes c, c+C, c+2C, … below m
		if len(idx) < k {
			return nil, fmt.Errorf("partition label of %s over %d nodes: class %d has %d samples for its %d nodes (%d, %d, …); a node would get no samples",
				d.Name, m, c, len(idx), k, c, c+C)
		}
		for j, part := range split(idx, k) {
			nodes[c+j*C] = slices.Clone(part)
		}
	}
	return newPartition(d, nodes, "label")
}

// PartitionDirichlet draws, for every class, the proportions of its samples
// going to each of the m nodes from a symmetric Dirichlet(α) distribution and
// deals the class's shuffled samples accordingly. Small α gives few classes
// per node; large α approaches an IID split, and a huge α (beyond about
// 10³², where the draws become equal) is the IID-by-class split: every class
// cut into m shares whose sizes differ by at most one. A draw that leaves a
// node empty is redrawn, up to 100 times, after which it is an error.
func PartitionDirichlet(d *Dataset, m int, alpha float64, seed uint64) (*Partition, error) {
	what := "dirichlet:" + strconv.FormatFloat(alpha, 'g', -1, 64)
	if !(alpha > 0) || math.IsInf(alpha, 0) {
		return nil, fmt.Errorf("partition %s: α must be a positive finite number", what)
	}
	if err := checkNodes(d, m, what); err != nil {
		return nil, err
	}
	src := newPCG(seed, streamPartition, 0)
	rng := rand.New(src)
	classes := byClass(d)
	prop := make([]float64, m)
	for try := 0; try < dirichletTries; try++ {
		nodes := make([][]int, m)
		for _, idx := range classes {
			if len(idx) == 0 {
				continue
			}
			idx = slices.Clone(idx)
			rng.Shuffle(len(idx), func(a, b int) { idx[a], idx[b] = idx[b], idx[a] })
			sum := 0.0
			for j := range prop {
				prop[j] = detmath.Gamma(rng, alpha) // gonum distuv.Gamma{Beta: 1}'s draws, on every architecture
				sum += prop[j]
			}
			if math.IsInf(sum, 1) {
				// Each draw is about α: for α near the largest float64 their
				// sum overflows. Only the ratios matter, so scale them to at
				// most 1.
				sum = rescale(prop)
			}
			if !(sum > 0) { // all draws underflowed
				k := rng.IntN(m)
				clear(prop)
				prop[k], sum = 1, 1
			}
			deal(nodes, idx, prop, sum)
		}
		if !slices.ContainsFunc(nodes, func(s []int) bool { return len(s) == 0 }) {
			return newPartition(d, nodes, what)
		}
	}
	// A larger α only brings the draws closer to equal shares; if equal
	// shares too leave a node empty, the classes are too small for m nodes.
	even := make([]float64, m)
	for j := range even {
		even[j] = 1
	}
	nodes := make([][]int, m)
	for _, idx := range classes {
		deal(nodes, idx, even, float64(m))
	}
	advice := "use a larger α or fewer nodes"
	if slices.ContainsFunc(nodes, func(s []int) bool { return len(s) == 0 }) {
		advice = "even equal shares of every class (the limit of a large α) leave a node empty: use fewer nodes or the iid partition"
	}
	return nil, fmt.Errorf("partition %s of %s over %d nodes: some node got no samples in each of %d draws; %s",
		what, d.Name, m, dirichletTries, advice)
}

// rescale divides the non-negative prop by their largest value (an infinite
// one counts 1, the finite ones 0) and returns their new sum.
func rescale(prop []float64) float64 {
	top := slices.Max(prop)
	sum := 0.0
	for j, p := range prop {
		switch {
		case math.IsInf(top, 1) && math.IsInf(p, 1):
			prop[j] = 1
		case math.IsInf(top, 1):
			prop[j] = 0
		default:
			prop[j] = p / top
		}
		sum += prop[j]
	}
	return sum
}

// deal appends consecutive runs of idx to the nodes, node j's run in
// proportion to prop[j] (sum is their total), the last node taking the rest.
func deal(nodes [][]int, idx []int, prop []float64, sum float64) {
	cum, at := 0.0, 0
	for j := range prop {
		cum += prop[j]
		end := int(math.Round(cum / sum * float64(len(idx))))
		if j == len(prop)-1 {
			end = len(idx)
		}
		end = min(max(end, at), len(idx))
		nodes[j] = append(nodes[j], idx[at:end]...)
		at = end
	}
}

// PartitionShards sorts the samples by label (ties by index), cuts them into
// m·k contiguous shards of equal size (differing by at most one) and gives
// each node k shards chosen by a seeded shuffle, as in McMahan et al. It is
// an error if there are fewer samples than shards.
func PartitionShards(d *Dataset, m, k int, seed uint64) (*Partition, error) {
	what := "shards:" + strconv.Itoa(k)
	if k < 1 {
		return nil, fmt.Errorf("partition %s: want at least 1 shard per node", what)
	}
	if err := checkNodes(d, m, what); err != nil {
		return nil, err
	}
	if m > d.Len()/k {
		return nil, fmt.Errorf("partition %s of %s over %d nodes: %d shards but only %d samples; use a smaller k",
			what, d.Name, m, m*k, d.Len())
	}
	var sorted []int
	for _, idx := range byClass(d) {
		sorted = append(sorted, idx...)
	}
	shards := split(sorted, m*k)
	perm := rand.New(newPCG(seed, streamPartition, 0)).Perm(m * k)
	nodes := make([][]int, m)
	for i := range nodes {
		for _, s := range perm[i*k : (i+1)*k] {
			nodes[i] = append(nodes[i], shards[s]...)
		}
	}
	return newPartition(d, nodes, what)
}

// PartitionSpec is a parsed --partition flag: iid, label, dirichlet:α,
// shards:k, natural or file:PATH.
type PartitionSpec struct {
	Kind  string  // "iid", "label", "dirichlet", "shards", "natural" or "file"
	Alpha float64 // Dirichlet concentration α (dirichlet)
	K     int     // shards per node (shards)
	Path  string  // the partition file (file; see PartitionFile)
}

// PartitionKinds lists the partition flag forms for messages.
const PartitionKinds = "iid, label, dirichlet:α (α > 0), shards:k (k ≥ 1), natural (whole writers to nodes: femnist) or file:PATH (one line per training sample: the node that holds it)"

// ParsePartition parses a partition flag value.
func ParsePartition(spec string) (PartitionSpec, error) {
	kind, arg, hasArg := strings.Cut(spec, ":")
	bad := func(why string) (PartitionSpec, error) {
		return PartitionSpec{}, fmt.Errorf("partition %q: %s (want %s)", spec, why, PartitionKinds)
	}
	switch kind {
	case "iid", "label", "natural":
		if hasArg {
			return bad(kind + " takes no argument")
		}
		return PartitionSpec{Kind: kind}, nil
	case "dirichlet":
		a, err := strconv.ParseFloat(arg, 64)
		if !hasArg || err != nil || !(a > 0) || math.IsInf(a, 0) {
			return bad("α must be a positive number")
		}
		return PartitionSpec{Kind: kind, Alpha: a}, nil
	case "shards":
		k, err := strconv.Atoi(arg)
		if !hasArg || err != nil || k < 1 {
			return bad("k must be a whole number of at least 1")
		}
		return PartitionSpec{Kind: kind, K: k}, nil
	case "file":
		if arg == "" {
			return bad("file: wants the partition file's path")
		}
		return PartitionSpec{Kind: kind, Path: arg}, nil
	}
	return bad("unknown kind")
}

// String returns the flag form of the spec, which ParsePartition accepts.
func (s PartitionSpec) String() string {
	switch s.Kind {
	case "dirichlet":
		return "dirichlet:" + strconv.FormatFloat(s.Alpha, 'g', -1, 64)
	case "shards":
		return "shards:" + strconv.Itoa(s.K)
	case "file":
		return "file:" + s.Path
	}
	return s.Kind
}

// Apply partitions d over m nodes as the spec says; seed drives the random
// kinds (label is deterministic).
func (s PartitionSpec) Apply(d *Dataset, m int, seed uint64) (*Partition, error) {
	switch s.Kind {
	case "iid":
		return PartitionIID(d, m, seed)
	case "label":
		return PartitionLabel(d, m)
	case "dirichlet":
		return PartitionDirichlet(d, m, s.Alpha, seed)
	case "shards":
		return PartitionShards(d, m, s.K, seed)
	case "natural":
		return PartitionNatural(d, m, seed)
	case "file":
		return PartitionFile(d, m, s.Path)
	}
	return nil, errors.New("partition: empty or unknown kind " + strconv.Quote(s.Kind) + " (want " + PartitionKinds + ")")
}
