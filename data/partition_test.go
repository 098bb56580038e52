package data

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// balanced returns a dataset of n samples per class with labels interleaved.
func balanced(classes, n int) *Dataset {
	labels := make([]uint8, classes*n)
	for i := range labels {
		labels[i] = uint8(i % classes)
	}
	return labelsOnly(classes, labels)
}

// skewed returns a dataset where class c has base+c*step samples, shuffled
// deterministically.
func skewed(classes, base, step int) *Dataset {
	var labels []uint8
	for c := range classes {
		for range base + c*step {
			labels = append(labels, uint8(c))
		}
	}
	// interleave deterministically so that classes are not contiguous
	for i := range labels {
		j := (i * 7919) % len(labels)
		labels[i], labels[j] = labels[j], labels[i]
	}
	return labelsOnly(classes, labels)
}

// checkPartition asserts the invariants of every partition: m nodes, each
// non-empty and increasing, pairwise disjoint, covering all samples, and
// histograms matching the labels.
func checkPartition(t *testing.T, d *Dataset, p *Partition, m int) {
	t.Helper()
	if p.Len() != m || len(p.Hist) != m {
		t.Fatalf("%d nodes and %d histograms, want %d", p.Len(), len(p.Hist), m)
	}
	seen := make([]int, d.Len())
	for i, idx := range p.Nodes {
		if len(idx) == 0 {
			t.Fatalf("node %d is empty", i)
		}
		if !slices.IsSorted(idx) {
			t.Fatalf("node %d indices are not increasing", i)
		}
		h := make([]int, d.Classes)
		for _, j := range idx {
			seen[j]++
			h[d.Labels[j]]++
		}
		if !slices.Equal(h, p.Hist[i]) {
			t.Fatalf("node %d histogram %v, labels give %v", i, p.Hist[i], h)
		}
	}
	for j, s := range seen {
		if s != 1 {
			t.Fatalf("sample %d is held by %d nodes, want exactly 1", j, s)
		}
	}
}

func TestPartitionIID(t *testing.T) {
	d := skewed(10, 50, 13)
	for _, m := range []int{1, 3, 10, 64} {
		p, err := PartitionIID(d, m, 42)
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, d, p, m)
		sizes := p.Sizes()
		if slices.Max(sizes)-slices.Min(sizes) > 1 {
			t.Fatalf("m=%d: sizes %v differ by more than one", m, sizes)
		}
	}
	a, _ := PartitionIID(d, 10, 1)
	b, _ := PartitionIID(d, 10, 1)
	c, _ := PartitionIID(d, 10, 2)
	if !slices.EqualFunc(a.Nodes, b.Nodes, slices.Equal) {
		t.Fatal("the same seed gave different partitions")
	}
	if slices.EqualFunc(a.Nodes, c.Nodes, slices.Equal) {
		t.Fatal("different seeds gave the same partition")
	}
	// Shuffled, not dealt in order: node 0 must not be the first n/m samples.
	if a.Nodes[0][len(a.Nodes[0])-1] == len(a.Nodes[0])-1 {
		t.Fatal("iid partition is not shuffled")
	}
}

func TestPartitionLabelRule(t *testing.T) {
	d := skewed(10, 20, 3) // class c has 20+3c samples
	counts := d.ClassCounts()

	t.Run("m=10: node i holds exactly class i", func(t *testing.T) {
		p, err := PartitionLabel(d, 10)
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, d, p, 10)
		for i, h := range p.Hist {
			for c, n := range h {
				if (c == i && n != counts[c]) || (c != i && n != 0) {
					t.Fatalf("node %d histogram %v, want all of class %d only", i, h, i)
				}
			}
		}
	})
	t.Run("m=5: node i holds classes i and i+5", func(t *testing.T) {
		p, err := PartitionLabel(d, 5)
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, d, p, 5)
		for i, h := range p.Hist {
			for c, n := range h {
				if (c%5 == i && n != counts[c]) || (c%5 != i && n != 0) {
					t.Fatalf("node %d histogram %v, want all of classes %d and %d", i, h, i, i+5)
				}
			}
		}
	})
	t.Run("m=3: node i holds classes c ≡ i mod 3", func(t *testing.T) {
		p, err := PartitionLabel(d, 3)
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, d, p, 3)
		for i, h := range p.Hist {
			for c, n := range h {
				if (c%3 == i) != (n == counts[c]) || (c%3 != i && n != 0) {
					t.Fatalf("node %d histogram %v", i, h)
				}
			}
		}
	})
	for _, m := range []int{20, 25} {
		t.Run("m>10: class c split evenly over nodes i ≡ c mod 10", func(t *testing.T) {
			p, err := PartitionLabel(d, m)
			if err != nil {
				t.Fatal(err)
			}
			checkPartition(t, d, p, m)
			for c := range 10 {
				var sizes []int
				total := 0
				for i := c; i < m; i += 10 {
					h := p.Hist[i]
					if h[c] != len(p.Nodes[i]) {
						t.Fatalf("m=%d: node %d holds classes %v, want only class %d", m, i, h, c)
					}
					sizes = append(sizes, h[c])
					total += h[c]
				}
				if total != counts[c] || slices.Max(sizes)-slices.Min(sizes) > 1 {
					t.Fatalf("m=%d: class %d (%d samples) split as %v", m, c, counts[c], sizes)
				}
			}
		})
	}
}

func TestPartitionDirichlet(t *testing.T) {
	d := balanced(10, 600)
	m := 10
	t.Run("huge α is close to IID", func(t *testing.T) {
		p, err := PartitionDirichlet(d, m, 1e7, 3)
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, d, p, m)
		for i, h := range p.Hist {
			for c, n := range h {
				if math.Abs(float64(n)-60) > 2 {
					t.Fatalf("node %d class %d: %d samples, want 60 ± 2 (IID share)", i, c, n)
				}
			}
		}
	})
	t.Run("small α is skewed", func(t *testing.T) {
		p, err := PartitionDirichlet(d, m, 0.1, 3)
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, d, p, m)
		// Mean share of each node's largest class: 0.1 under IID, far more here.
		share := 0.0
		for i, h := range p.Hist {
			share += float64(slices.Max(h)) / float64(len(p.Nodes[i]))
		}
		if share /= float64(m); share < 0.4 {
			t.Fatalf("mean largest-class share %.2f, want a skewed split (> 0.4)", share)
		}
	})
	a, _ := PartitionDirichlet(d, m, 0.5, 9)
	b, _ := PartitionDirichlet(d, m, 0.5, 9)
	if !slices.EqualFunc(a.Nodes, b.Nodes, slices.Equal) {
		t.Fatal("the same seed gave different partitions")
	}
}

// TestPartitionDirichletHugeAlpha: α up to the largest float64 gives the
// IID-by-class split (every class cut into equal shares, within one sample)
// instead of overflowing into whole classes on single nodes; and when the
// classes are too small for the nodes, the error does not ask for a larger α.
func TestPartitionDirichletHugeAlpha(t *testing.T) {
	d := skewed(10, 40, 7)
	counts := d.ClassCounts()
	for _, alpha := range []float64{1e33, 1e300, 1e307, 1e308, math.MaxFloat64} {
		for _, m := range []int{7, 10, 13} {
			for _, seed := range []uint64{1, 2} {
				p, err := PartitionDirichlet(d, m, alpha, seed)
				if err != nil {
					t.Fatalf("α %g, %d nodes, seed %d: %v", alpha, m, seed, err)
				}
				checkPartition(t, d, p, m)
				for i, h := range p.Hist {
					for c, n := range h {
						if share := float64(counts[c]) / float64(m); math.Abs(float64(n)-share) >= 1 {
							t.Fatalf("α %g, %d nodes, seed %d: node %d has %d of class %d's %d samples, want %.2f ± 1",
								alpha, m, seed, i, n, c, counts[c], share)
						}
					}
				}
			}
		}
	}

	for _, c := range []struct {
		name    string
		d       *Dataset
		m       int
		alpha   float64
		advice  string
		notSaid string
	}{
		{"huge α, classes smaller than the nodes", balanced(10, 1), 5, 1e308, "use fewer nodes or the iid partition", "larger α"},
		{"moderate α, classes smaller than the nodes", balanced(10, 1), 5, 2, "use fewer nodes or the iid partition", "larger α"},
		{"tiny α, equal shares would do", balanced(10, 10), 10, 1e-4, "use a larger α or fewer nodes", "iid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := PartitionDirichlet(c.d, c.m, c.alpha, 1)
			if p != nil {
				t.Fatal("got a partition along with the error")
			}
			wantErr(t, err, "no samples in each of 100 draws", c.advice)
			if strings.Contains(err.Error(), c.notSaid) {
				t.Fatalf("error %q advises %q", err, c.notSaid)
			}
		})
	}
}

func TestPartitionShards(t *testing.T) {
	for _, k := range []int{1, 2, 5} {
		m := 10
		sk := skewed(10, 40, 7)
		p, err := PartitionShards(sk, m, k, 5)
		if err != nil {
			t.Fatal(err)
		}
		checkPartition(t, sk, p, m)
		sizes := p.Sizes()
		if slices.Max(sizes)-slices.Min(sizes) > k {
			t.Fatalf("k=%d: node sizes %v differ by more than k", k, sizes)
		}
		// A shard is a run of the label-sorted order no longer than a
		// class here, so it spans at most two classes.
		d := balanced(10, 60)
		if p, err = PartitionShards(d, m, k, 5); err != nil {
			t.Fatal(err)
		}
		checkPartition(t, d, p, m)
		for i, h := range p.Hist {
			classes := 0
			for _, n := range h {
				if n > 0 {
					classes++
				}
			}
			if classes > 2*k {
				t.Fatalf("k=%d: node %d holds %d classes %v, want at most %d", k, i, classes, h, 2*k)
			}
		}
	}
}

func TestPartitionErrors(t *testing.T) {
	d := balanced(10, 3) // 30 samples, 3 per class
	gap := labelsOnly(10, []uint8{0, 1, 2, 4, 5, 6, 7, 8, 9, 0, 1})
	one := labelsOnly(10, []uint8{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	cases := []struct {
		name   string
		run    func() (*Partition, error)
		errors []string
	}{
		{"iid no nodes", func() (*Partition, error) { return PartitionIID(d, 0, 1) }, []string{"0 nodes"}},
		{"iid too many nodes", func() (*Partition, error) { return PartitionIID(d, 31, 1) }, []string{"30 samples", "31 nodes"}},
		{"label too many nodes for a class", func() (*Partition, error) { return PartitionLabel(one, 20) }, []string{"class 0 has 1 samples for its 2 nodes", "no samples"}},
		{"label empty class", func() (*Partition, error) { return PartitionLabel(gap, 10) }, []string{"node 3 would get no samples"}},
		{"label empty class m>C", func() (*Partition, error) { return PartitionLabel(gap, 11) }, []string{"class 3 has 0 samples"}},
		{"label negative", func() (*Partition, error) { return PartitionLabel(d, -2) }, []string{"-2 nodes"}},
		{"dirichlet α 0", func() (*Partition, error) { return PartitionDirichlet(d, 3, 0, 1) }, []string{"dirichlet:0", "positive"}},
		{"dirichlet α<0", func() (*Partition, error) { return PartitionDirichlet(d, 3, -1, 1) }, []string{"positive"}},
		{"dirichlet α NaN", func() (*Partition, error) { return PartitionDirichlet(d, 3, math.NaN(), 1) }, []string{"positive"}},
		{"dirichlet α Inf", func() (*Partition, error) { return PartitionDirichlet(d, 3, math.Inf(1), 1) }, []string{"finite"}},
		{"dirichlet empty node", func() (*Partition, error) { return PartitionDirichlet(d, 30, 0.01, 1) }, []string{"no samples in each of 100 draws"}},
		{"shards k 0", func() (*Partition, error) { return PartitionShards(d, 3, 0, 1) }, []string{"shards:0", "at least 1"}},
		{"shards k too large", func() (*Partition, error) { return PartitionShards(d, 4, 8, 1) }, []string{"shards:8", "32 shards but only 30 samples"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := c.run()
			if p != nil {
				t.Fatal("got a partition along with the error")
			}
			wantErr(t, err, c.errors...)
		})
	}
}

func TestParsePartition(t *testing.T) {
	good := map[string]PartitionSpec{
		"iid":           {Kind: "iid"},
		"label":         {Kind: "label"},
		"dirichlet:0.5": {Kind: "dirichlet", Alpha: 0.5},
		"dirichlet:100": {Kind: "dirichlet", Alpha: 100},
		"shards:2":      {Kind: "shards", K: 2},
	}
	for s, want := range good {
		got, err := ParsePartition(s)
		if err != nil || got != want {
			t.Fatalf("ParsePartition(%q) = %+v, %v; want %+v", s, got, err, want)
		}
		if got.String() != s {
			t.Fatalf("String() = %q, want %q", got.String(), s)
		}
	}
	for _, s := range []string{"", "IID", "iid:3", "label:1", "dirichlet", "dirichlet:", "dirichlet:0", "dirichlet:-1", "dirichlet:x", "dirichlet:inf", "shards", "shards:0", "shards:1.5", "shards:-2", "random"} {
		if _, err := ParsePartition(s); err == nil {
			t.Fatalf("ParsePartition(%q) succeeded, want an error", s)
		} else {
			wantErr(t, err, `"`+s+`"`, "want iid, label")
		}
	}
	// Apply dispatches to the named kind.
	d := balanced(10, 20)
	for s, check := range map[string]func(p *Partition) bool{
		"label":    func(p *Partition) bool { return p.Hist[3][3] == 20 && len(p.Nodes[3]) == 20 },
		"iid":      func(p *Partition) bool { return len(p.Nodes[3]) == 20 },
		"shards:1": func(p *Partition) bool { return len(p.Nodes[3]) == 20 && slices.Max(p.Hist[3]) == 20 },
	} {
		spec, _ := ParsePartition(s)
		p, err := spec.Apply(d, 10, 1)
		if err != nil || !check(p) {
			t.Fatalf("%s: partition %v, %v", s, p.Hist, err)
		}
	}
	if _, err := (PartitionSpec{}).Apply(d, 10, 1); err == nil {
		t.Fatal("empty spec applied")
	}
}

func TestPartitionRealMNIST(t *testing.T) {
	if testing.Short() {
		t.Skip("loads MNIST")
	}
	train, _, err := LoadMNIST("")
	if err != nil {
		t.Fatal(err)
	}
	p, err := PartitionLabel(train, 10)
	if err != nil {
		t.Fatal(err)
	}
	checkPartition(t, train, p, 10)
	for i := range 10 {
		if len(p.Nodes[i]) != mnistTrainCounts[i] {
			t.Fatalf("node %d holds %d samples, want the %d of digit %d", i, len(p.Nodes[i]), mnistTrainCounts[i], i)
		}
	}
	q, err := PartitionIID(train, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkPartition(t, train, q, 10)
}
