package weights

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/decentral"
)

// layout is a small two-tensor model of p = 2·3 + 3 = 9 parameters.
func layout() []Tensor {
	return []Tensor{{Name: "w", Shape: []int{2, 3}}, {Name: "b", Shape: []int{3}}}
}

func params(p int) []float32 {
	v := make([]float32, p)
	for i := range v {
		v[i] = float32(i)*0.25 - 1
	}
	return v
}

// snapshot returns a consistent snapshot of algo over m nodes of p values.
func snapshot(algo string, m, p int) *decentral.Snapshot {
	s := &decentral.Snapshot{
		Algorithm: algo,
		Schedule:  decentral.Schedule{Eta0: 0.01, Decay: decentral.DefaultDecay, Power: decentral.CbrtPower, Rho: 0},
		Nodes:     m,
		Dim:       p,
		Round:     17,
		Samples:   make([]int64, m),
		GradEvals: make([]int64, m),
		BytesSent: make([]int64, m),
		Loss:      make([]float64, m),
	}
	names, _ := decentral.StateSlabs(algo)
	for k, name := range names {
		v := params(m * p)
		switch k {
		case 1:
			v[0] = float32(math.Copysign(0, -1))
		case 2:
			v[1] = float32(math.Inf(-1))
		}
		s.Slabs = append(s.Slabs, decentral.Slab{Name: name, Data: v})
	}
	for i := range m {
		s.Samples[i] = int64(64 * (i + 1))
		s.GradEvals[i] = int64(i + 1)
		s.BytesSent[i] = math.MaxInt64 - int64(i)
		s.Loss[i] = 2.5 / float64(i+1)
	}
	s.Loss[0] = math.NaN()
	return s
}

func checkpoint(algo string) *Checkpoint {
	c := &Checkpoint{Model: "tiny", Tensors: layout(), Params: params(9)}
	if algo != "" {
		c.Optimizer = snapshot(algo, 3, 9)
		c.Sampler = []byte("gtstorm-sampler/1\n\x00\x01\x02")
		c.Meta = []byte(`{"iters":100,"round":17}`)
	}
	return c
}

// same reports whether a and b are equal bit for bit, nil slices told from
// empty ones.
func same(a, b *Checkpoint) bool {
	f32 := func(x, y []float32) bool {
		return (x == nil) == (y == nil) && slices.EqualFunc(x, y, func(p, q float32) bool { return math.Float32bits(p) == math.Float32bits(q) })
	}
	f64 := func(x, y []float64) bool {
		return (x == nil) == (y == nil) && slices.EqualFunc(x, y, func(p, q float64) bool { return math.Float64bits(p) == math.Float64bits(q) })
	}
	i64 := func(x, y []int64) bool { return (x == nil) == (y == nil) && slices.Equal(x, y) }
	by := func(x, y []byte) bool { return (x == nil) == (y == nil) && bytes.Equal(x, y) }
	if a.Model != b.Model || !f32(a.Params, b.Params) || !by(a.Sampler, b.Sampler) || !by(a.Meta, b.Meta) ||
		!slices.EqualFunc(a.Tensors, b.Tensors, func(s, t Tensor) bool { return s.Name == t.Name && slices.Equal(s.Shape, t.Shape) }) {
		return false
	}
	s, t := a.Optimizer, b.Optimizer
	if s == nil || t == nil {
		return s == t
	}
	return s.Algorithm == t.Algorithm && s.Schedule == t.Schedule && s.Nodes == t.Nodes && s.Dim == t.Dim &&
		s.Round == t.Round && slices.EqualFunc(s.Slabs, t.Slabs, func(a, b decentral.Slab) bool { return a.Name == b.Name && f32(a.Data, b.Data) }) &&
		i64(s.Samples, t.Samples) && i64(s.GradEvals, t.GradEvals) && i64(s.BytesSent, t.BytesSent) && f64(s.Loss, t.Loss) &&
		f64(s.SimTime, t.SimTime)
}

func encoded(t testing.TB, c *Checkpoint) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Encode(&buf, c); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// reseal fixes the body length and checksum of a damaged encoding so that
// the damage reaches the body parser; shorter inputs are returned as they are.
func reseal(b []byte) []byte {
	if len(b) < headerSize+trailerSize {
		return b
	}
	b = slices.Clone(b)
	end := len(b) - trailerSize
	binary.LittleEndian.PutUint64(b[len(Magic)+4:], uint64(end-headerSize))
	binary.LittleEndian.PutUint32(b[end:], crc32.Checksum(b[:end], castagnoli))
	return b
}

// sealBody wraps a raw body, consistent or not, as a file of the current
// version.
func sealBody(body []byte) []byte {
	return sealVersion(Version, body)
}

// sealVersion wraps a raw body as a file of format version v.
func sealVersion(v uint32, body []byte) []byte {
	b := append([]byte(Magic), byte(v), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	b = append(b, body...)
	return reseal(append(b, 0, 0, 0, 0))
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not contain %q", err, p)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	emptyExtras := checkpoint(decentral.GTSTORM)
	emptyExtras.Sampler, emptyExtras.Meta = []byte{}, []byte{}
	scalar := &Checkpoint{Model: "scalar", Tensors: []Tensor{{Name: "s"}}, Params: []float32{float32(math.NaN())}}
	clocked := checkpoint(decentral.CHOCO)
	clocked.Optimizer.SimTime = []float64{0.5, 1.25, 3}
	for _, tc := range []struct {
		name string
		c    *Checkpoint
	}{
		{"model only", checkpoint("")},
		{"scalar NaN parameter", scalar},
		{"dsgd", checkpoint(decentral.DSGD)},
		{"gnsd", checkpoint(decentral.GNSD)},
		{"gt-storm", checkpoint(decentral.GTSTORM)},
		{"empty sampler and meta", emptyExtras},
		{"state without sampler", &Checkpoint{Model: "tiny", Tensors: layout(), Params: params(9), Optimizer: snapshot(decentral.DSGD, 1, 9)}},
		{"choco with a simulated clock", clocked},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := encoded(t, tc.c)
			got, err := Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			if !same(got, tc.c) {
				t.Fatalf("decoded %+v, want %+v", got, tc.c)
			}
			if again := encoded(t, got); !bytes.Equal(again, b) {
				t.Fatal("re-encoding the decoded checkpoint changed the bytes")
			}
			path := filepath.Join(t.TempDir(), "model.ckpt")
			if err := Write(path, tc.c); err != nil {
				t.Fatal(err)
			}
			got, err = Read(path)
			if err != nil {
				t.Fatal(err)
			}
			if !same(got, tc.c) {
				t.Fatalf("read %+v, want %+v", got, tc.c)
			}
			if s := got.Optimizer; s != nil && !math.IsNaN(s.Loss[0]) {
				t.Fatalf("loss %v, want NaN", s.Loss[0])
			}
		})
	}
}

// A decoded snapshot restores into an optimizer of the same configuration.
func TestRestoreFromCheckpoint(t *testing.T) {
	g, err := graph.Ring(4)
	if err != nil {
		t.Fatal(err)
	}
	mix, err := graph.LaplacianMixing(g)
	if err != nil {
		t.Fatal(err)
	}
	cfg := decentral.Config{Algorithm: decentral.GNSD, Workers: 1, StepSizes: decentral.StepSizes{Eta0: 0.1}}
	x0 := params(9)
	newOpt := func() *decentral.Optimizer {
		o, err := decentral.New(cfg, mix, nodeSampler{}, quadratic{}, x0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { o.Close() })
		return o
	}
	ctx := context.Background()
	o := newOpt()
	if err := o.Init(ctx); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := o.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s, err := o.State()
	if err != nil {
		t.Fatal(err)
	}
	c := &Checkpoint{Model: "quadratic", Tensors: layout(), Params: make([]float32, 9), Optimizer: s}
	o.Mean(c.Params)
	path := filepath.Join(t.TempDir(), "run.ckpt")
	if err := Write(path, c); err != nil {
		t.Fatal(err)
	}
	back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	r := newOpt()
	if err := r.Restore(back.Optimizer); err != nil {
		t.Fatal(err)
	}
	if err := o.Step(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Step(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		if !slices.Equal(o.Node(i), r.Node(i)) {
			t.Fatalf("node %d: restored run at %v, original at %v", i, r.Node(i), o.Node(i))
		}
	}
}

// nodeBatch is node i's one-sample batch: the centre i of its loss.
type nodeBatch int

func (nodeBatch) Len() int { return 1 }

type nodeSampler struct{}

func (nodeSampler) Sample(node int) decentral.Batch { return nodeBatch(node) }

// quadratic is f_i(x) = ½‖x − i‖².
type quadratic struct{}

func (quadratic) Grad(_ int, x []float32, b decentral.Batch, grad []float32) (float32, error) {
	c := float32(b.(nodeBatch))
	var loss float32
	for k := range x {
		grad[k] = x[k] - c
		loss += grad[k] * grad[k] / 2
	}
	return loss, nil
}

func TestValidateRefuses(t *testing.T) {
	mod := func(f func(c *Checkpoint)) *Checkpoint {
		c := checkpoint(decentral.GNSD)
		f(c)
		return c
	}
	cases := []struct {
		name string
		c    *Checkpoint
		want string
	}{
		{"nil", nil, "no checkpoint"},
		{"no model", mod(func(c *Checkpoint) { c.Model = "" }), "empty model name"},
		{"no tensors", mod(func(c *Checkpoint) { c.Tensors = nil }), "no parameter tensors"},
		{"unnamed tensor", mod(func(c *Checkpoint) { c.Tensors[1].Name = "" }), "tensor 1 has no name"},
		{"duplicate tensor", mod(func(c *Checkpoint) { c.Tensors[1].Name = "w" }), `tensors 0 and 1 are both named "w"`},
		{"negative dim", mod(func(c *Checkpoint) { c.Tensors[0].Shape = []int{-2, -3} }), "dimension 0 is -2"},
		{"zero dim", mod(func(c *Checkpoint) { c.Tensors[1].Shape = []int{0} }), "dimension 0 is 0"},
		{"overflowing shape", mod(func(c *Checkpoint) { c.Tensors[0].Shape = []int{1 << 40, 1 << 40} }), "overflows"},
		{"params short", mod(func(c *Checkpoint) { c.Params = c.Params[:8] }), "tensors hold 9 values but there are 8 parameters"},
		{"unknown algorithm", mod(func(c *Checkpoint) { c.Optimizer.Algorithm = "adam" }), `unknown algorithm "adam"`},
		{"bad schedule", mod(func(c *Checkpoint) { c.Optimizer.Schedule.Eta0 = math.NaN() }), "eta0"},
		{"zero nodes", mod(func(c *Checkpoint) { c.Optimizer.Nodes = 0 }), "0 nodes"},
		{"negative dim p", mod(func(c *Checkpoint) { c.Optimizer.Dim = -9 }), "dimension -9"},
		{"dim not params", mod(func(c *Checkpoint) { c.Optimizer.Dim = 3 }), "dimension 3 but the model has 9 parameters"},
		{"negative round", mod(func(c *Checkpoint) { c.Optimizer.Round = -1 }), "round -1"},
		{"x short", mod(func(c *Checkpoint) { c.Optimizer.Slabs[0].Data = c.Optimizer.Slabs[0].Data[:26] }), `slab "x" has 26 values, want 3 nodes × 9 = 27`},
		{"y missing", mod(func(c *Checkpoint) { c.Optimizer.Slabs = c.Optimizer.Slabs[:1] }), `slabs ["x"], want ["x" "y" "g"] for gnsd`},
		{"g long", mod(func(c *Checkpoint) { c.Optimizer.Slabs[2].Data = append(c.Optimizer.Slabs[2].Data, 1) }), `slab "g" has 28 values`},
		{"g for gt-storm", mod(func(c *Checkpoint) { c.Optimizer.Algorithm = decentral.GTSTORM }), `slabs ["x" "y" "g"], want ["x" "v"] for gt-storm`},
		{"samples short", mod(func(c *Checkpoint) { c.Optimizer.Samples = c.Optimizer.Samples[:2] }), "Samples has 2 values"},
		{"negative bytes", mod(func(c *Checkpoint) { c.Optimizer.BytesSent[2] = -1 }), "BytesSent of node 2 is -1"},
		{"loss missing", mod(func(c *Checkpoint) { c.Optimizer.Loss = nil }), "Loss has 0 values"},
		{"short clock", mod(func(c *Checkpoint) { c.Optimizer.SimTime = []float64{1} }), "SimTime has 1 values, want one per node (3) or none"},
		{"negative clock", mod(func(c *Checkpoint) { c.Optimizer.SimTime = []float64{1, -2, 3} }), "SimTime of node 1 is -2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wantErr(t, tc.c.Validate(), tc.want)
			wantErr(t, Encode(io.Discard, tc.c), "encode checkpoint", tc.want)
			dir := t.TempDir()
			path := filepath.Join(dir, "bad.ckpt")
			wantErr(t, Write(path, tc.c), path, tc.want)
			if names := dirNames(t, dir); len(names) != 0 {
				t.Fatalf("refused write left %v", names)
			}
			// The same inconsistency written raw is refused on reading.
			if tc.c != nil {
				if c, err := Decode(sealBody(appendBody(nil, tc.c))); err == nil || c != nil {
					t.Fatal("a raw inconsistent body decoded")
				}
			}
		})
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestDecodeRefuses(t *testing.T) {
	good := encoded(t, checkpoint(decentral.GTSTORM))
	with := func(f func(b []byte) []byte) []byte { return f(slices.Clone(good)) }
	// body offsets of the first fields of checkpoint(…): model "tiny", then
	// the tensor count.
	const modelLen, tensorCount = headerSize, headerSize + 4 + 4
	cases := []struct {
		name string
		b    []byte
		want []string
	}{
		{"empty", nil, []string{"not a gtstorm checkpoint"}},
		{"wrong magic", with(func(b []byte) []byte { b[0] = 'X'; return b }), []string{"not a gtstorm checkpoint", Magic}},
		{"text file", []byte("hello, world\n"), []string{"not a gtstorm checkpoint"}},
		{"magic only", []byte(Magic), []string{"truncated", "header"}},
		{"unknown version", with(func(b []byte) []byte { b[8] = 7; return b }), []string{"format version 7", "reads version [1 2 3]"}},
		{"version 0", with(func(b []byte) []byte { b[8] = 0; return b }), []string{"format version 0"}},
		{"header only", good[:headerSize], []string{"truncated"}},
		{"truncated", good[:len(good)-1], []string{"truncated", "header announces"}},
		{"trailing garbage", append(slices.Clone(good), 0), []string{"trailing bytes"}},
		{"bad checksum", with(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), []string{"checksum mismatch"}},
		{"flipped body", with(func(b []byte) []byte { b[headerSize+10] ^= 0x40; return b }), []string{"checksum mismatch"}},
		{"huge body length", with(func(b []byte) []byte { binary.LittleEndian.PutUint64(b[12:], math.MaxUint64); return b }), []string{"truncated"}},
		{"model length beyond", reseal(with(func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[modelLen:], 1<<31)
			return b
		})), []string{"model name claims 2147483648 bytes"}},
		{"tensor count beyond", reseal(with(func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[tensorCount:], math.MaxUint32)
			return b
		})), []string{"tensor count 4294967295"}},
		{"garbage after body", reseal(append(good[:len(good)-4:len(good)-4], 9, 9, 0, 0, 0, 0)), []string{"2 bytes of garbage after the body"}},
		{"zero tensors", sealBody(appendBody(nil, &Checkpoint{Model: "m", Params: []float32{}})), []string{"inconsistent", "no parameter tensors"}},
		{"shape mismatch", sealBody(appendBody(nil, &Checkpoint{Model: "m", Tensors: layout(), Params: params(8)})), []string{"inconsistent", "tensors hold 9 values but there are 8"}},
		{"negative dim", sealBody(appendBody(nil, &Checkpoint{Model: "m", Tensors: []Tensor{{"a", []int{-1}}}, Params: params(1)})), []string{"dimension 0 is -1"}},
		{"params absent", sealBody(appendBody(nil, &Checkpoint{Model: "m", Tensors: layout()})), []string{"parameters absent"}},
		{"snapshot nodes × dim", sealBody(appendBody(nil, &Checkpoint{Model: "m", Tensors: layout(), Params: params(9),
			Optimizer: func() *decentral.Snapshot { s := snapshot(decentral.DSGD, 2, 9); s.Nodes = 3; return s }()})),
			[]string{`slab "x" has 18 values, want 3 nodes × 9 = 27`}},
		{"snapshot zero dim", sealBody(appendBody(nil, &Checkpoint{Model: "m", Tensors: layout(), Params: params(9),
			Optimizer: func() *decentral.Snapshot { s := snapshot(decentral.DSGD, 2, 9); s.Dim = 0; return s }()})),
			[]string{"dimension 0, want ≥ 1"}},
		{"negative round", sealBody(appendBody(nil, &Checkpoint{Model: "m", Tensors: layout(), Params: params(9),
			Optimizer: func() *decentral.Snapshot { s := snapshot(decentral.DSGD, 2, 9); s.Round = -5; return s }()})),
			[]string{"round is -5"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Decode(tc.b)
			if c != nil {
				t.Fatal("a checkpoint came back with the error")
			}
			wantErr(t, err, tc.want...)
			path := filepath.Join(t.TempDir(), "damaged.ckpt")
			if err := os.WriteFile(path, tc.b, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = Read(path)
			wantErr(t, err, append([]string{path}, tc.want...)...)
		})
	}
}

func TestReadMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "none.ckpt")
	_, err := Read(path)
	wantErr(t, err, path)
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("error %v does not wrap os.ErrNotExist", err)
	}
}

// Flipping any bit of any byte, or cutting the file anywhere, is detected.
func TestEveryCorruptionDetected(t *testing.T) {
	for _, algo := range []string{"", decentral.GNSD} {
		good := encoded(t, checkpoint(algo))
		for i := range good {
			for _, bit := range []byte{0x01, 0x80} {
				b := slices.Clone(good)
				b[i] ^= bit
				if _, err := Decode(b); err == nil {
					t.Fatalf("%q: flipping bit %02x of byte %d went unnoticed", algo, bit, i)
				}
			}
		}
		for n := range len(good) {
			if _, err := Decode(good[:n]); err == nil {
				t.Fatalf("%q: a checkpoint cut to %d of %d bytes decoded", algo, n, len(good))
			}
			// The body parser meets the cut too when the seal is repaired.
			if _, err := Decode(reseal(good[:n])); err == nil {
				t.Fatalf("%q: a resealed checkpoint cut to %d of %d bytes decoded", algo, n, len(good))
			}
		}
	}
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errors.New("disk full")
	}
	w.n -= len(p)
	return len(p), nil
}

func TestEncodeFailingWriter(t *testing.T) {
	wantErr(t, Encode(&failingWriter{n: 10}, checkpoint(decentral.DSGD)), "encode checkpoint", "disk full")
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.ckpt")
	old := checkpoint(decentral.DSGD)
	if err := Write(path, old); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	// An overwrite that fails half-way through the encoding.
	encode = func(w io.Writer, c *Checkpoint) error {
		b := encoded(t, c)
		w.Write(b[:len(b)/2])
		return errors.New("disk full")
	}
	t.Cleanup(func() { encode = Encode })
	wantErr(t, Write(path, checkpoint(decentral.GTSTORM)), path, "disk full")
	// A failing first write leaves nothing.
	fresh := filepath.Join(dir, "fresh.ckpt")
	wantErr(t, Write(fresh, checkpoint(decentral.GTSTORM)), fresh, "disk full")
	encode = Encode

	// An overwrite refused as inconsistent.
	bad := checkpoint(decentral.GTSTORM)
	bad.Params = bad.Params[:1]
	wantErr(t, Write(path, bad), path, "parameters")
	// An overwrite that fails at the rename: the target is a directory.
	sub := filepath.Join(dir, "sub.ckpt")
	if err := os.MkdirAll(filepath.Join(sub, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantErr(t, Write(sub, old), sub)
	// Into a directory that does not exist.
	wantErr(t, Write(filepath.Join(dir, "no", "such.ckpt"), old), "no such")

	if names := dirNames(t, dir); !slices.Equal(names, []string{"model.ckpt", "sub.ckpt"}) {
		t.Fatalf("after failed writes the directory holds %v, want only model.ckpt and sub.ckpt", names)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("a failed overwrite changed the existing checkpoint")
	}
	got, err := Read(path)
	if err != nil || !same(got, old) {
		t.Fatalf("the old checkpoint reads back as %v, %v", got, err)
	}
}

// FuzzDecode feeds arbitrary bytes to Decode, as they are and with their
// length and checksum repaired so that the body parser sees them: it must
// return an error or a valid checkpoint that re-encodes to the same bytes
// (a version-1 input: to bytes that decode to the same checkpoint), never
// panic, and allocate only in proportion to the input.
func FuzzDecode(f *testing.F) {
	f.Add(encoded(f, checkpoint("")))
	f.Add(encoded(f, checkpoint(decentral.DSGD)))
	f.Add(encoded(f, checkpoint(decentral.GNSD)))
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, in := range [][]byte{b, reseal(b)} {
			c, err := Decode(in)
			if err != nil {
				if c != nil {
					t.Fatal("a checkpoint came back with the error")
				}
				continue
			}
			if err := c.Validate(); err != nil {
				t.Fatalf("decoded an invalid checkpoint: %v", err)
			}
			var buf bytes.Buffer
			if err := Encode(&buf, c); err != nil {
				t.Fatalf("decoded checkpoint does not encode: %v", err)
			}
			if binary.LittleEndian.Uint32(in[len(Magic):]) == 1 {
				if c2, err := Decode(buf.Bytes()); err != nil || !same(c, c2) {
					t.Fatalf("a version-1 checkpoint re-encodes to a different one (%v)", err)
				}
			} else if !bytes.Equal(buf.Bytes(), in) {
				t.Fatal("decoded checkpoint re-encodes to different bytes")
			}
		}
	})
}

// appendBodyV1 is the version-1 body of c: the optimizer's slabs as fixed X,
// V and G vectors, absent ones nil.
func appendBodyV1(c *Checkpoint) []byte {
	v2 := appendBody(nil, &Checkpoint{Model: c.Model, Tensors: c.Tensors, Params: c.Params})
	b := v2[:len(v2)-1-2*1] // up to the optimizer flag: drop flag, sampler, meta (all absent)
	s := c.Optimizer
	b = append(b, 1)
	b = appendString(b, s.Algorithm)
	for _, f := range []float64{s.Schedule.Eta0, s.Schedule.Decay, s.Schedule.Power, s.Schedule.Rho} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
	}
	for _, i := range []int{s.Nodes, s.Dim, s.Round} {
		b = binary.LittleEndian.AppendUint64(b, uint64(i))
	}
	for k := range 3 {
		var v []float32
		if k < len(s.Slabs) {
			v = s.Slabs[k].Data
		}
		b = appendFloat32s(b, v)
	}
	b = appendInt64s(b, s.Samples)
	b = appendInt64s(b, s.GradEvals)
	b = appendInt64s(b, s.BytesSent)
	b = appendFloat64s(b, s.Loss)
	b = appendBytes(b, c.Sampler)
	return appendBytes(b, c.Meta)
}

// TestReadsVersion2 decodes a version-2 file, which has no simulated clock.
func TestReadsVersion2(t *testing.T) {
	want := checkpoint(decentral.GTSTORM)
	want.Sampler, want.Meta = nil, nil
	body := appendBody(nil, want) // ends with the clock, sampler and meta, each nil: one 0 byte
	if !bytes.Equal(body[len(body)-3:], []byte{0, 0, 0}) {
		t.Fatalf("the body ends with %v, want three absent vectors", body[len(body)-3:])
	}
	c, err := Decode(sealVersion(2, body[:len(body)-1]))
	if err != nil {
		t.Fatal(err)
	}
	if !same(c, want) || c.Optimizer.SimTime != nil {
		t.Fatalf("version 2 decodes to %+v, want %+v", c.Optimizer, want.Optimizer)
	}
}

// TestReadsVersion1 decodes version-1 files, whose X, V and G become each
// algorithm's named slabs, and re-encodes them as the current version.
func TestReadsVersion1(t *testing.T) {
	for _, algo := range decentral.Algorithms() {
		want := checkpoint(algo)
		c, err := Decode(sealVersion(1, appendBodyV1(want)))
		if err != nil {
			t.Fatalf("%s: %v", algo, err)
		}
		if !same(c, want) {
			t.Fatalf("%s: version 1 decodes to %+v, want %+v", algo, c.Optimizer, want.Optimizer)
		}
		c2, err := Decode(encoded(t, c))
		if err != nil || !same(c2, want) {
			t.Fatalf("%s: re-encoded as version %d: %v", algo, Version, err)
		}
	}
	// An empty V of DSGD, as version 1 allowed, is no slab.
	want := checkpoint(decentral.DSGD)
	dsgdEmptyV := checkpoint(decentral.DSGD)
	dsgdEmptyV.Optimizer.Slabs = append(dsgdEmptyV.Optimizer.Slabs, decentral.Slab{Name: "V", Data: []float32{}})
	if c, err := Decode(sealVersion(1, appendBodyV1(dsgdEmptyV))); err != nil || !same(c, want) {
		t.Fatalf("dsgd with an empty V: %v", err)
	}
	// Version 1 of GT-STORM holding a G is refused.
	gt := checkpoint(decentral.GTSTORM)
	gt.Optimizer.Slabs = append(gt.Optimizer.Slabs, decentral.Slab{Name: "G", Data: params(27)})
	_, err := Decode(sealVersion(1, appendBodyV1(gt)))
	wantErr(t, err, `slabs ["x" "v" "G"], want ["x" "v"] for gt-storm`)
}
