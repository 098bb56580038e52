package compress

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
)

// testSpecs is one or more of each compressor, in canonical form.
var testSpecs = []string{"none", "topk:0.01", "topk:0.3", "randk:0.01", "randk:0.3", "qsgd:1", "qsgd:7", "qsgd:8", "qsgd:255", "sign"}

// testSizes are the vector lengths the round-trip tests use.
var testSizes = []int{1, 7, 8, 9, 1000, 62006}

// mustParse returns the compressor spec names or stops the test.
func mustParse(tb testing.TB, spec string) Compressor {
	tb.Helper()
	c, err := Parse(spec)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// randVec returns p normal entries of mixed scales (including +0 and −0)
// drawn from seed.
func randVec(p int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	v := make([]float32, p)
	for i := range v {
		switch r.IntN(8) {
		case 0:
			v[i] = float32(math.Copysign(0, float64(r.IntN(2)*2-1)))
		case 1:
			v[i] = float32(r.NormFloat64() * 100)
		case 2:
			v[i] = float32(r.NormFloat64() * 1e-3)
		default:
			v[i] = float32(r.NormFloat64())
		}
	}
	return v
}

func TestParse(t *testing.T) {
	good := []struct{ spec, canon string }{
		{"none", "none"},
		{"sign", "sign"},
		{"topk:0.01", "topk:0.01"},
		{"topk:0.010", "topk:0.01"},
		{"topk:1", "topk:1"},
		{"topk:1e-3", "topk:0.001"},
		{"randk:0.25", "randk:0.25"},
		{"qsgd:1", "qsgd:1"},
		{"qsgd:7", "qsgd:7"},
		{"qsgd:65535", "qsgd:65535"},
	}
	for _, tt := range good {
		c, err := Parse(tt.spec)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.spec, err)
			continue
		}
		if got := c.String(); got != tt.canon {
			t.Errorf("Parse(%q).String() = %q, want %q", tt.spec, got, tt.canon)
		}
		again, err := Parse(c.String())
		if err != nil || again.String() != c.String() {
			t.Errorf("Parse(%q) = %v, %v: want the canonical spec back", c.String(), again, err)
		}
	}
	bad := []string{"topk:0", "topk:1.5", "topk:x", "topk:-0.1", "topk:NaN", "topk:", "topk",
		"randk:0", "randk:2", "qsgd:0", "qsgd:70000", "qsgd:2.5", "qsgd:", "qsgd:-3",
		"zip", "", "none:1", "Sign", "sign:", "topk:0.1:2"}
	for _, spec := range bad {
		c, err := Parse(spec)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want an error", spec, c)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, `"`+spec+`"`) || strings.Contains(msg, "\n") {
			t.Errorf("Parse(%q) error %q: want one line naming the spec", spec, msg)
		}
	}
}

func TestK(t *testing.T) {
	tests := []struct {
		f    float64
		p, k int
	}{
		{0.01, 62006, 621},
		{0.01, 100, 1},
		{0.01, 101, 2},
		{0.07, 100, 7}, // 0.07·100 = 7.000000000000001 in float64
		{1e-9, 10, 1},
		{0, 5, 1},
		{0.75, 4, 3},
		{0.5, 7, 4},
		{0.5, 8, 4},
		{1, 7, 7},
		{1, 1, 1},
		{0.3, 0, 0},
	}
	for _, tt := range tests {
		if got := K(tt.f, tt.p); got != tt.k {
			t.Errorf("K(%g, %d) = %d, want %d", tt.f, tt.p, got, tt.k)
		}
	}
}

// TestRoundTrip encodes and decodes random vectors with every compressor
// and checks the message length and what each decodes to.
func TestRoundTrip(t *testing.T) {
	for _, spec := range testSpecs {
		c := mustParse(t, spec)
		for _, p := range testSizes {
			v := randVec(p, uint64(p))
			msg := c.Encode(nil, v, 42)
			if len(msg) != c.Size(p) {
				t.Fatalf("%s, p = %d: message of %d bytes, Size says %d", spec, p, len(msg), c.Size(p))
			}
			out := make([]float32, p)
			if err := c.Decode(out, msg); err != nil {
				t.Fatalf("%s, p = %d: %v", spec, p, err)
			}
			checkDecoded(t, c, v, msg, out)
		}
	}
}

// checkDecoded checks out is what c may decode from msg, a message of v.
func checkDecoded(t *testing.T, c Compressor, v []float32, msg []byte, out []float32) {
	t.Helper()
	p := len(v)
	spec := c.String()
	switch name, _, _ := strings.Cut(spec, ":"); name {
	case "none":
		for i := range v {
			if math.Float32bits(out[i]) != math.Float32bits(v[i]) {
				t.Fatalf("%s: out[%d] = %g, want %g bit for bit", spec, i, out[i], v[i])
			}
		}
	case "topk":
		// The message's k increasing indices hold v; every other entry is 0.
		k := K(c.(topK).f, p)
		idx := make(map[int]bool, k)
		prev := -1
		for j := range k {
			i := int(binary.LittleEndian.Uint32(msg[4*j:]))
			if i <= prev || i >= p {
				t.Fatalf("%s: index #%d is %d after %d, want increasing and < %d", spec, j, i, prev, p)
			}
			idx[i], prev = true, i
		}
		for i := range v {
			if idx[i] && math.Float32bits(out[i]) != math.Float32bits(v[i]) || !idx[i] && out[i] != 0 {
				t.Fatalf("%s: out[%d] = %g (kept %v), want %g if kept, else 0", spec, i, out[i], idx[i], v[i])
			}
		}
	case "randk":
		// Entries equal to v at K(F, p) places (zeros of v may be among them)
		// and 0 elsewhere.
		k := K(c.(randK).f, p)
		kept, zeros := 0, 0
		for i := range v {
			switch {
			case v[i] == 0:
				zeros++
			case out[i] == v[i]:
				kept++
			case out[i] != 0:
				t.Fatalf("%s: out[%d] = %g, want %g or 0", spec, i, out[i], v[i])
			}
			if v[i] == 0 && out[i] != 0 {
				t.Fatalf("%s: out[%d] = %g, want 0", spec, i, out[i])
			}
		}
		if kept > k || kept < k-zeros {
			t.Fatalf("%s, p = %d: %d nonzero entries kept (v has %d zeros), want %d", spec, p, kept, zeros, k)
		}
	case "sign":
		var l1 float64
		for _, x := range v {
			l1 += math.Abs(float64(x))
		}
		s := l1 / float64(p) // to float32 rounding: Encode may sum in another order
		for i := range v {
			want := s
			if v[i] < 0 {
				want = -s
			}
			if math.Abs(float64(out[i])-want) > 1e-7*s || math.Signbit(float64(out[i])) != (v[i] < 0) {
				t.Fatalf("%s: out[%d] = %g for v = %g, want %g", spec, i, out[i], v[i], want)
			}
		}
		if math.Float32bits(out[0])&^(1<<31) != math.Float32bits(out[p-1])&^(1<<31) {
			t.Fatalf("%s: |out[0]| = %g, |out[%d]| = %g, want one scale", spec, out[0], p-1, out[p-1])
		}
	case "qsgd":
		q := c.(qsgd)
		var sq float64
		for _, x := range v {
			sq += float64(x) * float64(x)
		}
		n := float64(float32(math.Sqrt(sq)))
		for i := range v {
			l := math.Round(math.Abs(float64(out[i])) * float64(q.s) / n)
			if l > float64(q.s) || math.Abs(l*n/float64(q.s)-math.Abs(float64(out[i]))) > 1e-6*n {
				t.Fatalf("%s: out[%d] = %g, want a multiple l·n/S, l ≤ %d, of n = %g", spec, i, out[i], q.s, n)
			}
			if out[i] != 0 && (out[i] < 0) != (v[i] < 0) {
				t.Fatalf("%s: out[%d] = %g has the wrong sign for v = %g", spec, i, out[i], v[i])
			}
		}
	default:
		t.Fatalf("no check for %s", spec)
	}
}

// TestRandKIndices checks rand-k keeps K distinct indices, the same for the
// same seed and others for another seed, spread over the whole vector.
func TestRandKIndices(t *testing.T) {
	const p = 1000
	c := mustParse(t, "randk:0.05")
	k := K(0.05, p)
	v := make([]float32, p)
	for i := range v {
		v[i] = float32(i + 1) // every entry nonzero and distinct
	}
	kept := func(seed uint64) map[int]bool {
		out := make([]float32, p)
		if err := c.Decode(out, c.Encode(nil, v, seed)); err != nil {
			t.Fatal(err)
		}
		m := map[int]bool{}
		for i, x := range out {
			if x != 0 {
				m[i] = true
			}
		}
		if len(m) != k {
			t.Fatalf("seed %d: %d distinct indices kept, want %d", seed, len(m), k)
		}
		return m
	}
	a, b := kept(7), kept(7)
	for i := range a {
		if !b[i] {
			t.Fatalf("seed 7 kept index %d once and not again", i)
		}
	}
	c8 := kept(8)
	same := 0
	for i := range a {
		if c8[i] {
			same++
		}
	}
	if same == k {
		t.Fatalf("seeds 7 and 8 keep the same %d indices", k)
	}
	// Every index is drawn with probability k/p: count over many seeds.
	const seeds = 2000
	hits := make([]int, p)
	for s := range uint64(seeds) {
		for i := range kept(s) {
			hits[i]++
		}
	}
	mean := float64(seeds*k) / p
	sd := math.Sqrt(mean * (1 - float64(k)/p))
	for i, h := range hits {
		if math.Abs(float64(h)-mean) > 6*sd {
			t.Fatalf("index %d drawn %d times in %d seeds, want %.0f ± %.0f", i, h, seeds, mean, 6*sd)
		}
	}
}

// TestEncodeAppends checks Encode keeps dst's bytes, gives the same message
// for the same seed, and does not allocate when dst has room.
func TestEncodeAppends(t *testing.T) {
	const p = 1000
	v := randVec(p, 3)
	for _, spec := range testSpecs {
		c := mustParse(t, spec)
		prefix := []byte("head")
		msg := c.Encode(bytes.Clone(prefix), v, 9)
		if !bytes.HasPrefix(msg, prefix) || len(msg) != len(prefix)+c.Size(p) {
			t.Fatalf("%s: Encode did not append a %d-byte message to dst", spec, c.Size(p))
		}
		if again := c.Encode(nil, v, 9); !bytes.Equal(again, msg[len(prefix):]) {
			t.Fatalf("%s: two messages for the same v and seed differ", spec)
		}
		dst := make([]byte, 0, c.Size(p))
		out := make([]float32, p)
		if n := testing.AllocsPerRun(20, func() { dst = c.Encode(dst[:0], v, 9) }); n != 0 {
			t.Errorf("%s: Encode allocates %v times", spec, n)
		}
		if n := testing.AllocsPerRun(20, func() { _ = c.Decode(out, dst) }); n != 0 {
			t.Errorf("%s: Decode allocates %v times", spec, n)
		}
	}
}

// TestConcurrent encodes and decodes from several goroutines with one
// compressor each and checks every message against a serial one.
func TestConcurrent(t *testing.T) {
	const p, workers, rounds = 5000, 8, 20
	for _, spec := range testSpecs {
		c := mustParse(t, spec)
		vs := make([][]float32, workers)
		want := make([][]byte, workers)
		for w := range vs {
			vs[w] = randVec(p, uint64(w))
			want[w] = c.Encode(nil, vs[w], uint64(w))
		}
		var wg sync.WaitGroup
		errs := make([]string, workers)
		for w := range workers {
			wg.Go(func() {
				dst := make([]byte, 0, c.Size(p))
				out := make([]float32, p)
				for range rounds {
					dst = c.Encode(dst[:0], vs[w], uint64(w))
					if !bytes.Equal(dst, want[w]) {
						errs[w] = "message differs from the serial one"
						return
					}
					if err := c.Decode(out, dst); err != nil {
						errs[w] = err.Error()
						return
					}
				}
			})
		}
		wg.Wait()
		for w, e := range errs {
			if e != "" {
				t.Errorf("%s, goroutine %d: %s", spec, w, e)
			}
		}
	}
}
