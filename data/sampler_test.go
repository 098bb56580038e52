package data

import (
	"slices"
	"sync"
	"testing"
)

// drawAll draws rounds batches for every node, serially, and returns
// batches[node][round] as copies.
func drawAll(s *Sampler, rounds int) [][][]int {
	out := make([][][]int, s.Nodes())
	for r := 0; r < rounds; r++ {
		for i := range out {
			out[i] = append(out[i], slices.Clone(s.Sample(i).Index))
		}
	}
	return out
}

func newTestSampler(t *testing.T, batch int, seed uint64) (*Dataset, *Partition, *Sampler) {
	t.Helper()
	d := skewed(10, 30, 5)
	p, err := PartitionIID(d, 8, 7)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSampler(d, p, batch, seed)
	if err != nil {
		t.Fatal(err)
	}
	return d, p, s
}

func TestSamplerDeterministic(t *testing.T) {
	d, p, a := newTestSampler(t, 16, 99)
	b, _ := NewSampler(d, p, 16, 99)
	c, _ := NewSampler(d, p, 16, 100)
	ba, bb, bc := drawAll(a, 20), drawAll(b, 20), drawAll(c, 20)
	for i := range ba {
		for r := range ba[i] {
			if !slices.Equal(ba[i][r], bb[i][r]) {
				t.Fatalf("same seed: node %d round %d differ", i, r)
			}
			for _, j := range ba[i][r] {
				if _, ok := slices.BinarySearch(p.Nodes[i], j); !ok {
					t.Fatalf("node %d drew sample %d outside its share", i, j)
				}
			}
		}
	}
	if slices.EqualFunc(ba[0], bc[0], slices.Equal) {
		t.Fatal("different seeds gave the same batches")
	}
	// Different nodes draw from different streams: the positions within
	// each share must not coincide.
	pos := func(node int, j int) int { k, _ := slices.BinarySearch(p.Nodes[node], j); return k }
	same := true
	for k := range ba[0][0] {
		same = same && pos(0, ba[0][0][k]) == pos(1, ba[1][0][k])
	}
	if same {
		t.Fatal("nodes 0 and 1 share one random stream")
	}
}

// Drawing for all nodes concurrently (one goroutine per node, as the
// optimizer does) gives exactly the serial batches.
func TestSamplerConcurrentEqualsSerial(t *testing.T) {
	d, p, serial := newTestSampler(t, 8, 5)
	want := drawAll(serial, 50)
	conc, _ := NewSampler(d, p, 8, 5)
	got := make([][][]int, conc.Nodes())
	var wg sync.WaitGroup
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				got[i] = append(got[i], slices.Clone(conc.Sample(i).Index))
			}
		}()
	}
	wg.Wait()
	for i := range want {
		if !slices.EqualFunc(want[i], got[i], slices.Equal) {
			t.Fatalf("node %d: concurrent batches differ from serial ones", i)
		}
	}
}

func TestSamplerUniformWithReplacement(t *testing.T) {
	d := balanced(2, 5) // 10 samples
	p, _ := PartitionIID(d, 1, 1)
	s, _ := NewSampler(d, p, 100, 3)
	counts := make([]int, 10)
	dup := false
	for range 200 {
		b := s.Sample(0)
		if b.Len() != 100 || b.Data != d {
			t.Fatalf("batch of %d from %p, want 100 from the dataset", b.Len(), b.Data)
		}
		seen := map[int]bool{}
		for _, j := range b.Index {
			counts[j]++
			dup = dup || seen[j]
			seen[j] = true
		}
	}
	if !dup {
		t.Fatal("no repeated index in a batch of 100 from 10 samples: not drawing with replacement")
	}
	for j, c := range counts { // expected 2000 each, sd ≈ 42
		if c < 1800 || c > 2200 {
			t.Fatalf("sample %d drawn %d times of 20000, want about 2000", j, c)
		}
	}
}

func TestSamplerReusesBuffer(t *testing.T) {
	_, _, s := newTestSampler(t, 32, 1)
	first := s.Sample(3).Index
	second := s.Sample(3).Index
	if &first[0] != &second[0] {
		t.Fatal("Sample allocated a new index slice")
	}
	if allocs := testing.AllocsPerRun(100, func() { s.Sample(2) }); allocs != 0 {
		t.Fatalf("Sample allocates %v times per call, want 0", allocs)
	}
	var sink any
	if allocs := testing.AllocsPerRun(100, func() { sink = s.SampleRef(2) }); allocs != 0 {
		t.Fatalf("SampleRef boxed in an interface allocates %v times per call, want 0", allocs)
	}
	ref := s.SampleRef(4)
	if ref.Len() != 32 || &ref.Index[0] != &s.SampleRef(4).Index[0] || sink.(*Batch).Data != ref.Data {
		t.Fatal("SampleRef does not return the node's reused batch")
	}
}

func TestSamplerMarshalResumes(t *testing.T) {
	d, p, s := newTestSampler(t, 12, 77)
	drawAll(s, 7)
	s.Sample(2) // nodes at different positions
	state, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	want := drawAll(s, 10)

	r, _ := NewSampler(d, p, 12, 77)
	drawAll(r, 3) // whatever it did before is overwritten
	if err := r.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	got := drawAll(r, 10)
	for i := range want {
		if !slices.EqualFunc(want[i], got[i], slices.Equal) {
			t.Fatalf("node %d: resumed batches differ", i)
		}
	}

	// A mismatched or damaged state is refused and leaves the sampler as it was.
	other, _ := PartitionIID(d, 8, 8)
	cases := []struct {
		name   string
		s      func() *Sampler
		state  []byte
		errors []string
	}{
		{"batch size", func() *Sampler { x, _ := NewSampler(d, p, 13, 77); return x }, state, []string{"batch size 12", "13"}},
		{"seed", func() *Sampler { x, _ := NewSampler(d, p, 12, 78); return x }, state, []string{"seed 77"}},
		{"partition", func() *Sampler { x, _ := NewSampler(d, other, 12, 77); return x }, state, []string{"different partition"}},
		{"nodes", func() *Sampler {
			q, _ := PartitionIID(d, 4, 7)
			x, _ := NewSampler(d, q, 12, 77)
			return x
		}, state, []string{"8 nodes", "has 4"}},
		{"magic", func() *Sampler { x, _ := NewSampler(d, p, 12, 77); return x }, append([]byte("x"), state...), []string{"bad magic"}},
		{"truncated", func() *Sampler { x, _ := NewSampler(d, p, 12, 77); return x }, state[:len(state)-3], []string{"truncated at node 7"}},
		{"trailing", func() *Sampler { x, _ := NewSampler(d, p, 12, 77); return x }, append(slices.Clone(state), 0), []string{"trailing"}},
		{"header", func() *Sampler { x, _ := NewSampler(d, p, 12, 77); return x }, state[:30], []string{"truncated header"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := c.s()
			ref := c.s()
			wantErr(t, x.UnmarshalBinary(c.state), c.errors...)
			a, b := drawAll(x, 2), drawAll(ref, 2)
			for i := range a {
				if !slices.EqualFunc(a[i], b[i], slices.Equal) {
					t.Fatal("a refused state changed the sampler")
				}
			}
		})
	}
}

func TestNewSamplerErrors(t *testing.T) {
	d := balanced(2, 5)
	p, _ := PartitionIID(d, 2, 1)
	cases := []struct {
		name   string
		p      *Partition
		batch  int
		errors []string
	}{
		{"batch 0", p, 0, []string{"batch size 0"}},
		{"nil partition", nil, 4, []string{"empty partition"}},
		{"empty node", &Partition{Nodes: [][]int{{0}, {}}}, 4, []string{"node 1 has no samples"}},
		{"index out of range", &Partition{Nodes: [][]int{{0, 10}}}, 4, []string{"node 0 holds sample 10", "10 samples"}},
	}
	for _, c := range cases {
		s, err := NewSampler(d, c.p, c.batch, 1)
		if s != nil {
			t.Fatalf("%s: got a sampler with the error", c.name)
		}
		wantErr(t, err, c.errors...)
	}
}
