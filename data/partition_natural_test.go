package data

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// writerData returns a dataset of writers with the given sample counts,
// their samples interleaved (sample i of the set belongs to a writer drawn
// at random), labels i%62.
func writerData(sizes []int, seed uint64) *Dataset {
	var owners []int32
	for w, n := range sizes {
		for range n {
			owners = append(owners, int32(w))
		}
	}
	r := rand.New(rand.NewPCG(seed, 1))
	r.Shuffle(len(owners), func(a, b int) { owners[a], owners[b] = owners[b], owners[a] })
	d := &Dataset{Name: "writers", Shape: []int{1}, Classes: 62, Writers: owners, Labels: make([]uint8, len(owners))}
	d.Floats = make([]float32, len(owners))
	for i := range d.Labels {
		d.Labels[i] = uint8(i % 62)
	}
	return d
}

// TestPartitionNatural checks that every writer is whole on one node, the
// nodes' sizes lie within the largest writer of each other, and a seed
// gives the same partition every time.
func TestPartitionNatural(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	var many []int
	for range 300 {
		many = append(many, 1+r.IntN(400))
	}
	cases := []struct {
		name  string
		sizes []int
		nodes int
	}{
		{"odd sizes", []int{5, 1, 3, 7, 2, 9, 4, 4, 4, 1}, 3},
		{"one writer a node", []int{3, 8, 1}, 3},
		{"equal writers", []int{2, 2, 2, 2, 2, 2, 2}, 4},
		{"one giant", []int{100, 1, 1, 1, 1}, 2},
		{"many writers", many, 17},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := writerData(c.sizes, 3)
			for _, seed := range []uint64{1, 2, 99} {
				p, err := PartitionNatural(d, c.nodes, seed)
				if err != nil {
					t.Fatal(err)
				}
				checkNatural(t, d, p, slices.Max(c.sizes))
				again, err := mustParsePartition(t, "natural").Apply(d, c.nodes, seed)
				if err != nil || !slices.EqualFunc(p.Nodes, again.Nodes, slices.Equal) {
					t.Fatalf("seed %d: a second partition differs (%v)", seed, err)
				}
			}
		})
	}
}

// mustParsePartition parses spec, which must print back as itself, or fails t.
func mustParsePartition(t *testing.T, spec string) PartitionSpec {
	t.Helper()
	s, err := ParsePartition(spec)
	if err != nil || s.String() != spec {
		t.Fatalf("parse %q: %+v, %v", spec, s, err)
	}
	return s
}

// checkNatural checks that p holds every sample of d once, each writer's
// on one node, with node sizes within largest of each other.
func checkNatural(t *testing.T, d *Dataset, p *Partition, largest int) {
	t.Helper()
	node := map[int32]int{}
	seen := make([]bool, d.Len())
	for i, idx := range p.Nodes {
		for _, j := range idx {
			if seen[j] {
				t.Fatalf("sample %d twice", j)
			}
			seen[j] = true
			if n, ok := node[d.Writers[j]]; ok && n != i {
				t.Fatalf("writer %d on nodes %d and %d", d.Writers[j], n, i)
			}
			node[d.Writers[j]] = i
		}
	}
	if slices.Contains(seen, false) {
		t.Fatal("a sample on no node")
	}
	sizes := p.Sizes()
	if spread := slices.Max(sizes) - slices.Min(sizes); spread > largest {
		t.Fatalf("sizes %v spread %d, more than the largest writer's %d", sizes, spread, largest)
	}
}

// TestPartitionNaturalRefused: data without writers and fewer writers than
// nodes are refused in one line; an argument is a parse error.
func TestPartitionNaturalRefused(t *testing.T) {
	noWriters := writerData([]int{3, 3}, 1)
	noWriters.Writers = nil
	cases := []struct {
		name  string
		d     *Dataset
		nodes int
		want  string
	}{
		{"no writers", noWriters, 2, "has no writers"},
		{"fewer writers than nodes", writerData([]int{3, 3}, 1), 3, "2 writers for 3 nodes"},
	}
	for _, c := range cases {
		_, err := PartitionNatural(c.d, c.nodes, 1)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := ParsePartition("natural:2"); err == nil {
		t.Error("natural:2 parsed")
	}
	train, _, err := Load("mnist", "")
	if err != nil {
		t.Skip("no MNIST:", err)
	}
	if _, err := mustParsePartition(t, "natural").Apply(train.Head(100), 2, 1); err == nil || !strings.Contains(err.Error(), "no writers") {
		t.Errorf("mnist: %v", err)
	}
}

// TestWritersKept: Head and Subset keep the samples' writers.
func TestWritersKept(t *testing.T) {
	d := writerData([]int{2, 3, 4}, 5)
	d.WriterNames = []string{"a", "b", "c"}
	if h := d.Head(4); !slices.Equal(h.Writers, d.Writers[:4]) {
		t.Errorf("head writers %v", h.Writers)
	}
	s := d.Subset([]int{8, 0, 3})
	if want := []int32{d.Writers[8], d.Writers[0], d.Writers[3]}; !slices.Equal(s.Writers, want) || !slices.Equal(s.WriterNames, d.WriterNames) {
		t.Errorf("subset writers %v %v, want %v", s.Writers, s.WriterNames, want)
	}
	if n := d.WritersIn([]int{0, 1, 2, 3, 4, 5, 6, 7, 8}); n != 3 {
		t.Errorf("writers in all: %d", n)
	}
}
