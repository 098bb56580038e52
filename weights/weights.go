// Package weights reads and writes gtstorm checkpoints: the averaged model x̄
// with its parameter layout and, for resuming a run, the optimizer's full
// state, the data sampler's random streams and the run's own metadata.
//
// A [Checkpoint] holds them: the model's name, its layout (one [Tensor] per
// parameter tensor), the flat parameters, and optionally a
// [decentral.Snapshot] (from [decentral.Optimizer.State], for
// [decentral.Optimizer.Restore]), the sampler's bytes (from
// data.Sampler.MarshalBinary) and the caller's metadata.
// [Write] and [Read] store one in a file, replacing it atomically; [Encode]
// and [Decode] work on a stream or a byte slice. Both directions check the
// checkpoint with [Checkpoint.Validate].
//
// A checkpoint is one binary file, every number little-endian:
//
//	offset  size  field
//	0       8     magic "GTSTCKPT"
//	8       4     format version, uint32 (this package writes 3, reads 1,
//	              2 and 3)
//	12      8     body length n, uint64
//	20      n     body
//	20+n    4     CRC-32C (Castagnoli) of bytes [0, 20+n)
//
// The body holds, in order (str = uint32 length + UTF-8 bytes; vec = one
// presence byte, 0 for nil and 1 for present, then a uint64 element count
// and the elements; floats are stored as their IEEE-754 bits, so NaN and
// signed zeros survive):
//
//	str                model name
//	uint32             tensor count, then per tensor: str name, uint32 rank,
//	                   rank × int64 dims
//	vec float32        parameters x̄
//	byte               1 if optimizer state follows, else 0; the state is:
//	  str              algorithm
//	  4 × float64      schedule Eta0, Decay, Power, Rho
//	  3 × int64        nodes m, dimension p, round
//	  uint32           slab count, then per slab: str name, vec float32
//	                   (m × p), the algorithm's slabs in its order, x first
//	                   (version 1: 3 × vec float32 X, V, G, V and G nil
//	                   where the algorithm has none)
//	  3 × vec int64    Samples, GradEvals, BytesSent (m each)
//	  vec float64      Loss (m)
//	  vec float64      SimTime (m, or nil without a simulated network;
//	                   version 3 on, absent before)
//	vec byte           sampler state (opaque)
//	vec byte           metadata (opaque, JSON by convention)
//
// Reading trusts nothing: every count is checked against the bytes that
// remain before anything is allocated, and a checkpoint that decodes must
// also be consistent (see Checkpoint.Validate). Writing refuses an
// inconsistent checkpoint and replaces the file atomically.
package weights

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/internal/atomicfile"
	"github.com/gtstorm/gtstorm/internal/inputfile"
	"github.com/gtstorm/gtstorm/internal/memlimit"
)

// Magic starts every checkpoint file.
const Magic = "GTSTCKPT"

// Version is the format version this package writes: 3, which adds the
// simulated clock to version 2, where the optimizer state became the
// algorithm's named slabs. Version 1 held fixed X, V and G vectors; Decode
// still reads it, mapping them in order onto the algorithm's slabs
// (decentral.StateSlabs), and reads version 2 without a clock.
const Version uint32 = 3

// supportedVersions lists the format versions Decode reads.
var supportedVersions = []uint32{1, 2, Version}

// Tensor names one parameter tensor of the model and its shape; the tensors
// lie one after another in the flat vector.
type Tensor struct {
	Name  string
	Shape []int
}

// Size returns the number of values in the tensor, the product of its shape
// (1 for a scalar), or -1 if a dimension is negative or the product
// overflows an int.
func (t Tensor) Size() int {
	n := 1
	for _, d := range t.Shape {
		if d < 0 || (d > 0 && n > math.MaxInt/d) {
			return -1
		}
		n *= d
	}
	return n
}

// Checkpoint is a saved model and, optionally, the state to resume its run.
type Checkpoint struct {
	Model   string    // the model's name, e.g. "mnist-cnn"
	Tensors []Tensor  // parameter layout
	Params  []float32 // the averaged model x̄, length Σ sizes of Tensors

	// Resume state; all nil for a model-only checkpoint.
	Optimizer *decentral.Snapshot
	Sampler   []byte // opaque: the data sampler's random streams (data.Sampler.MarshalBinary)
	Meta      []byte // opaque: the run's configuration and progress as JSON, written by the caller
}

// Write validates c and atomically replaces path with its encoding: readers
// see the old file or the complete new one, and on error no file and no
// temporary file is left behind.
func Write(path string, c *Checkpoint) error {
	if err := c.Validate(); err != nil {
		return fmt.Errorf("write checkpoint %s: %w", path, err)
	}
	if err := atomicfile.Write(path, func(w io.Writer) error { return encode(w, c) }); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// encode is Encode, replaced by tests to make a write fail half-way.
var encode = Encode

// Read reads and validates the checkpoint at path. It trusts the file no
// more than Decode trusts its bytes: a path that is not a regular file (a
// link to /dev/zero, a named pipe) is refused before anything is read, and
// the header is checked against the file's size before the rest is read,
// so that only a file that is what its header announces is read whole.
func Read(path string) (*Checkpoint, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint: %w", err)
	}
	c, err := Decode(b)
	if err != nil {
		return nil, fmt.Errorf("read checkpoint %s: %w", path, err)
	}
	return c, nil
}

// readFile returns the bytes of the checkpoint file at path after checking
// that it is a regular file whose header (checkHeader) announces the body
// its size leaves room for. Its errors name path.
func readFile(path string) ([]byte, error) {
	f, size, err := inputfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, min(size, int64(headerSize)))
	if _, err := io.ReadFull(f, head); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := checkHeader(head, size); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// A file that is what its header says may still be too large to hold
	// (a sparse file of a terabyte): refuse it rather than fail allocating.
	if lim, err := memlimit.Detect(); err == nil && size > lim.Bytes {
		return nil, fmt.Errorf("%s: a checkpoint of %s, more than the %s this process may use (%s)",
			path, memlimit.Format(size), memlimit.Format(lim.Bytes), lim.Source)
	}
	if size > math.MaxInt {
		return nil, fmt.Errorf("%s: a checkpoint of %d bytes, more than this machine can address", path, size)
	}
	b := make([]byte, size)
	copy(b, head)
	if _, err := io.ReadFull(f, b[len(head):]); err != nil {
		return nil, fmt.Errorf("%s: changed while it was read: %w", path, err)
	}
	// The header fixed the length: a byte beyond it means the file grew.
	if n, _ := f.Read(make([]byte, 1)); n > 0 {
		return nil, fmt.Errorf("%s: changed while it was read: longer than its %d bytes", path, size)
	}
	return b, nil
}

// CheckFinite reports the first parameter of c that is NaN or infinite,
// naming its tensor and index: such a model cannot be evaluated, exported
// or used to predict. It assumes c is valid.
func (c *Checkpoint) CheckFinite() error {
	off := 0
	for _, t := range c.Tensors {
		n := t.Size()
		for i, v := range c.Params[off : off+n] {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("parameter %d of tensor %q is %v: the model holds non-finite parameters", i, t.Name, v)
			}
		}
		off += n
	}
	return nil
}

// Validate reports the first inconsistency in c: a missing model name or
// layout, a tensor without a name, a repeated name or a dimension below 1,
// parameters not matching the layout, or optimizer state whose shapes do not
// match its node count, dimension, algorithm or the parameters.
func (c *Checkpoint) Validate() error {
	if c == nil {
		return errors.New("no checkpoint")
	}
	if c.Model == "" {
		return errors.New("empty model name")
	}
	if len(c.Tensors) == 0 {
		return errors.New("no parameter tensors")
	}
	seen := make(map[string]int, len(c.Tensors))
	total := 0
	for i, t := range c.Tensors {
		if t.Name == "" {
			return fmt.Errorf("tensor %d has no name", i)
		}
		if j, dup := seen[t.Name]; dup {
			return fmt.Errorf("tensors %d and %d are both named %q", j, i, t.Name)
		}
		seen[t.Name] = i
		for k, d := range t.Shape {
			if d < 1 {
				return fmt.Errorf("tensor %q: dimension %d is %d, want ≥ 1", t.Name, k, d)
			}
		}
		n := t.Size()
		if n < 0 || n > math.MaxInt-total {
			return fmt.Errorf("tensor %q: shape %v overflows", t.Name, t.Shape)
		}
		total += n
	}
	if total != len(c.Params) {
		return fmt.Errorf("tensors hold %d values but there are %d parameters", total, len(c.Params))
	}
	if c.Optimizer != nil {
		if err := validateSnapshot(c.Optimizer, len(c.Params)); err != nil {
			return fmt.Errorf("optimizer state: %w", err)
		}
	}
	return nil
}

// validateSnapshot checks s on its own (decentral.Snapshot.Validate) and
// against the model's p parameters.
func validateSnapshot(s *decentral.Snapshot, p int) error {
	if s.Dim >= 1 && s.Dim != p {
		return fmt.Errorf("dimension %d but the model has %d parameters", s.Dim, p)
	}
	return s.Validate()
}
