package data

import (
	"math"
	"slices"
	"testing"
)

// featured returns a dataset of n samples over 5 classes stored as form:
// "bytes" (3 channels of 2 features, normalised per channel), "floats" (4
// features) or "sparse" (rows of 0 to 3 non-zeros among 6 features); every
// feature is a function of the sample's index.
func featured(form string, n int) *Dataset {
	d := &Dataset{Name: form, Classes: 5, Labels: make([]uint8, n)}
	for i := range d.Labels {
		d.Labels[i] = uint8((i * 7) % 5)
	}
	switch form {
	case "bytes":
		d.Shape = []int{3, 1, 2}
		d.Mean, d.Std = []float32{0.1, 0.2, 0.3}, []float32{0.5, 1, 2}
		for i := range n {
			for k := range 6 {
				d.Bytes = append(d.Bytes, byte(i*13+k*31))
			}
		}
	case "floats":
		d.Shape = []int{4}
		for i := range n {
			for k := range 4 {
				d.Floats = append(d.Floats, float32(i)+float32(k)/8)
			}
		}
	case "sparse":
		d.Shape = []int{6}
		d.RowPtr = []int{0}
		for i := range n {
			for k := range i % 4 {
				d.Cols = append(d.Cols, int32((i+2*k)%6))
				d.Vals = append(d.Vals, float32(i)*0.5+float32(k))
			}
			slices.Sort(d.Cols[d.RowPtr[i]:])
			d.RowPtr = append(d.RowPtr, len(d.Cols))
		}
	}
	return d
}

// sameSample fails unless sample a of x and sample b of y have the same
// label and features, bit for bit.
func sameSample(t *testing.T, x *Dataset, a int, y *Dataset, b int) {
	t.Helper()
	if x.Labels[a] != y.Labels[b] {
		t.Fatalf("sample %d of %s has label %d, sample %d of %s %d", a, x.Name, x.Labels[a], b, y.Name, y.Labels[b])
	}
	fa, fb := make([]float32, x.Dim()), make([]float32, y.Dim())
	x.Dense(a, fa)
	y.Dense(b, fb)
	if !slices.EqualFunc(fa, fb, func(u, v float32) bool { return math.Float32bits(u) == math.Float32bits(v) }) {
		t.Fatalf("sample %d of %s is %v, sample %d of %s %v", a, x.Name, fa, b, y.Name, fb)
	}
	if x.IsSparse() {
		ca, va := x.Sparse(a)
		cb, vb := y.Sparse(b)
		if !slices.Equal(ca, cb) || !slices.Equal(va, vb) {
			t.Fatalf("sparse sample %d of %s is %v %v, sample %d of %s %v %v", a, x.Name, ca, va, b, y.Name, cb, vb)
		}
	}
}

// TestRestrict: the dataset Restrict keeps holds exactly the kept nodes'
// samples, their shares name the same samples in the same order, a sampler
// over it draws what one over the whole partition draws for those nodes,
// and their saved states restore each other.
func TestRestrict(t *testing.T) {
	const n, m, batch, seed = 90, 6, 4, 11
	for _, tc := range []struct {
		name  string
		form  string
		part  string
		nodes []int
	}{
		{"one node of bytes", "bytes", "iid", []int{3}},
		{"two nodes of floats", "floats", "label", []int{1, 4}},
		{"unsorted nodes with a repeat, sparse", "sparse", "dirichlet:0.5", []int{5, 0, 5}},
		{"every node", "floats", "shards:2", []int{0, 1, 2, 3, 4, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := featured(tc.form, n)
			spec, err := ParsePartition(tc.part)
			if err != nil {
				t.Fatal(err)
			}
			p, err := spec.Apply(d, m, seed)
			if err != nil {
				t.Fatal(err)
			}
			before := fingerprint(p)
			c, q, err := Restrict(d, p, tc.nodes)
			if err != nil {
				t.Fatal(err)
			}
			if fingerprint(p) != before {
				t.Fatal("Restrict changed the whole partition")
			}
			want := 0
			for i := range m {
				kept := slices.Contains(tc.nodes, i)
				if q.Holds(i) != kept {
					t.Fatalf("Holds(%d) = %v, want %v", i, q.Holds(i), kept)
				}
				if !kept {
					if len(q.Nodes[i]) != 0 {
						t.Fatalf("node %d, not kept, has %d samples", i, len(q.Nodes[i]))
					}
					continue
				}
				want += len(p.Nodes[i])
				if len(q.Nodes[i]) != len(p.Nodes[i]) {
					t.Fatalf("node %d has %d samples, want %d", i, len(q.Nodes[i]), len(p.Nodes[i]))
				}
				for k, j := range q.Nodes[i] {
					sameSample(t, c, j, d, p.Nodes[i][k])
				}
			}
			if c.Len() != want {
				t.Fatalf("the kept dataset has %d samples, want the kept shares' %d", c.Len(), want)
			}
			if c.Dim() != d.Dim() || c.Classes != d.Classes || c.IsSparse() != d.IsSparse() {
				t.Fatalf("kept dataset of dim %d, %d classes, sparse %v; want %d, %d, %v", c.Dim(), c.Classes, c.IsSparse(), d.Dim(), d.Classes, d.IsSparse())
			}

			whole, err := NewSampler(d, p, batch, seed)
			if err != nil {
				t.Fatal(err)
			}
			part, err := NewSampler(c, q, batch, seed)
			if err != nil {
				t.Fatal(err)
			}
			for round := range 10 {
				if round == 5 {
					// Each restores the other's state.
					st, err := whole.MarshalBinary()
					if err != nil {
						t.Fatal(err)
					}
					if err := part.UnmarshalBinary(st); err != nil {
						t.Fatalf("the restricted sampler refused the whole one's state: %v", err)
					}
					if st, err = part.MarshalBinary(); err != nil {
						t.Fatal(err)
					}
					if err := whole.UnmarshalBinary(st); err != nil {
						t.Fatalf("the whole sampler refused the restricted one's state: %v", err)
					}
				}
				for _, i := range tc.nodes {
					a, b := part.Sample(i), whole.Sample(i)
					for k := range a.Index {
						sameSample(t, c, a.Index[k], d, b.Index[k])
					}
				}
			}
		})
	}
}

// TestRestrictBad: Restrict refuses nodes it cannot keep, naming them.
func TestRestrictBad(t *testing.T) {
	d := featured("floats", 20)
	p, err := PartitionIID(d, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, q, err := Restrict(d, p, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		p     *Partition
		nodes []int
		want  string
	}{
		{"no nodes", p, nil, "no nodes"},
		{"node out of range", p, []int{4}, "node 4"},
		{"negative node", p, []int{-1}, "node -1"},
		{"dropped node", q, []int{2}, "node 2's share was dropped"},
		{"empty partition", &Partition{}, []int{0}, "empty partition"},
		{"sample out of range", &Partition{Nodes: [][]int{{3, 25}}}, []int{0}, "sample 25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Restrict(d, tc.p, tc.nodes)
			wantErr(t, err, tc.want)
		})
	}
}

// TestSubsetOwnsStorage: a subset shares no sample storage with its
// dataset, so changing (or freeing) the dataset leaves it unchanged.
func TestSubsetOwnsStorage(t *testing.T) {
	for _, form := range []string{"bytes", "floats", "sparse"} {
		d := featured(form, 12)
		idx := []int{7, 2, 11, 2}
		s := d.Subset(idx)
		ref := featured(form, 12)
		clear(d.Bytes)
		clear(d.Floats)
		clear(d.Vals)
		clear(d.Labels)
		clear(d.Mean)
		if s.Len() != len(idx) {
			t.Fatalf("%s: subset of %d samples, want %d", form, s.Len(), len(idx))
		}
		for k, i := range idx {
			sameSample(t, s, k, ref, i)
		}
	}
}
