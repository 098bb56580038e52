package data

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
)

// Sampler draws per-node minibatches with replacement from a partition. Each
// node has its own random stream derived from (seed, node), so the batches a
// node sees depend only on the seed and on how many batches it drew before,
// never on goroutine scheduling.
type Sampler struct {
	data  *Dataset
	part  *Partition
	batch int
	seed  uint64
	fp    uint64 // fingerprint of the partition, checked on UnmarshalBinary
	keyed bool   // whether batches carry a draw key (KeyDraws)
	nodes []samplerNode
}

// samplerNode is one node's stream and index buffer, padded so that nodes
// sampled on different cores do not share a cache line.
type samplerNode struct {
	pcg   rand.PCG
	rng   *rand.Rand
	batch Batch // Index is the node's reused buffer
	_     [64]byte
}

// NewSampler returns a sampler of batch indices per draw over the nodes of
// p, whose indices must lie in d. Over a partition that Restrict returned,
// only the nodes it holds may be sampled; each draws the samples it would
// draw over the whole partition, and a state saved by either sampler
// restores into the other.
func NewSampler(d *Dataset, p *Partition, batch int, seed uint64) (*Sampler, error) {
	if batch < 1 {
		return nil, fmt.Errorf("sampler: batch size %d, want at least 1", batch)
	}
	if p == nil || len(p.Nodes) == 0 {
		return nil, errors.New("sampler: empty partition, want at least one node")
	}
	for i, idx := range p.Nodes {
		if !p.Holds(i) {
			continue // dropped by Restrict: never sampled here
		}
		if len(idx) == 0 {
			return nil, fmt.Errorf("sampler: node %d has no samples", i)
		}
		for _, j := range idx {
			if j < 0 || j >= d.Len() {
				return nil, fmt.Errorf("sampler: node %d holds sample %d, outside %s's %d samples", i, j, d.Name, d.Len())
			}
		}
	}
	s := &Sampler{data: d, part: p, batch: batch, seed: seed, fp: p.fingerprint(), nodes: make([]samplerNode, len(p.Nodes))}
	for i := range s.nodes {
		n := &s.nodes[i]
		n.pcg.Seed(pcgSeeds(seed, streamSampler, uint64(i)))
		n.rng = rand.New(&n.pcg)
		if p.Holds(i) {
			n.batch = Batch{Data: d, Index: make([]int, batch)}
		}
	}
	return s, nil
}

// Sample draws node's next batch: BatchSize indices drawn uniformly with
// replacement from the node's share. The returned Index slice belongs to the
// sampler and is overwritten by the next Sample for the same node, so a
// batch may be evaluated any number of times until then without copying.
// Calls for different nodes may run concurrently; calls for one node may not.
func (s *Sampler) Sample(node int) Batch {
	return *s.SampleRef(node)
}

// SampleRef is Sample returning a pointer to the node's batch, which the
// sampler owns and refills on the node's next draw. Stored in an interface
// (such as decentral.Batch, which *Batch satisfies through Len) a pointer
// costs no allocation, where a Batch value would.
func (s *Sampler) SampleRef(node int) *Batch {
	n := &s.nodes[node]
	s.Draw(node, n.batch.Index)
	if s.keyed {
		n.batch.Draw = s.DrawKey(node)
	}
	return &n.batch
}

// KeyDraws makes every later batch carry a draw key (Batch.Draw), taken
// from the node's stream after the batch's indices. A run turns it on when
// something random belongs to the minibatch (augmentation, dropout); runs
// without either draw exactly the indices they always drew. It must be
// called before the first Sample, and on a restored sampler as on the one
// saved.
func (s *Sampler) KeyDraws() { s.keyed = true }

// Keyed reports whether the sampler's batches carry draw keys.
func (s *Sampler) Keyed() bool { return s.keyed }

// DrawKey takes the next draw key from node's stream: never zero, so a
// keyed batch is told from an unkeyed one. SampleRef calls it for keyed
// samplers; a caller drawing indices itself (Draw, for D-GET's large batch)
// calls it once per batch it makes. Calls for one node may not run
// concurrently.
func (s *Sampler) DrawKey(node int) uint64 {
	return s.nodes[node].rng.Uint64() | 1
}

// Data returns the data set the sampler draws from.
func (s *Sampler) Data() *Dataset { return s.data }

// Share returns node's share of the partition: the indices it samples from.
// The slice belongs to the partition and must not be modified.
func (s *Sampler) Share(node int) []int { return s.part.Nodes[node] }

// Draw fills idx with indices drawn uniformly with replacement from node's
// share, from the node's own stream: the draws count as the node's, so the
// batches it samples afterwards depend on them (and a restored sampler
// draws the same). Calls for one node may not run concurrently.
func (s *Sampler) Draw(node int, idx []int) {
	n := &s.nodes[node]
	share := s.part.Nodes[node]
	for k := range idx {
		idx[k] = share[n.rng.IntN(len(share))]
	}
}

// BatchSize returns the number of indices per batch.
func (s *Sampler) BatchSize() int { return s.batch }

// Nodes returns the number of nodes.
func (s *Sampler) Nodes() int { return len(s.nodes) }

// samplerMagic starts a marshalled sampler state.
const samplerMagic = "gtstorm-sampler/1\n"

// MarshalBinary captures every node's random stream, so that a sampler
// restored with UnmarshalBinary draws exactly the batches this one would
// draw next. It must not run concurrently with Sample.
func (s *Sampler) MarshalBinary() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(samplerMagic)
	var hdr [32]byte
	binary.LittleEndian.PutUint64(hdr[0:], uint64(len(s.nodes)))
	binary.LittleEndian.PutUint64(hdr[8:], uint64(s.batch))
	binary.LittleEndian.PutUint64(hdr[16:], s.seed)
	binary.LittleEndian.PutUint64(hdr[24:], s.fp)
	b.Write(hdr[:])
	for i := range s.nodes {
		st, err := s.nodes[i].pcg.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("sampler: node %d: %w", i, err)
		}
		var l [4]byte
		binary.LittleEndian.PutUint32(l[:], uint32(len(st)))
		b.Write(l[:])
		b.Write(st)
	}
	return b.Bytes(), nil
}

// UnmarshalBinary restores the node streams saved by MarshalBinary. The
// sampler must have been built over the same partition with the same node
// count, batch size and seed; otherwise, or if data is damaged, it returns
// an error and leaves the sampler unchanged.
func (s *Sampler) UnmarshalBinary(data []byte) error {
	rest, ok := bytes.CutPrefix(data, []byte(samplerMagic))
	if !ok {
		return errors.New("sampler state: not a gtstorm sampler state (bad magic)")
	}
	if len(rest) < 32 {
		return errors.New("sampler state: truncated header")
	}
	m := binary.LittleEndian.Uint64(rest[0:])
	batch := binary.LittleEndian.Uint64(rest[8:])
	seed := binary.LittleEndian.Uint64(rest[16:])
	fp := binary.LittleEndian.Uint64(rest[24:])
	switch {
	case m != uint64(len(s.nodes)):
		return fmt.Errorf("sampler state: saved for %d nodes, this sampler has %d", m, len(s.nodes))
	case batch != uint64(s.batch):
		return fmt.Errorf("sampler state: saved with batch size %d, this sampler has %d", batch, s.batch)
	case seed != s.seed:
		return fmt.Errorf("sampler state: saved with seed %d, this sampler has %d", seed, s.seed)
	case fp != s.fp:
		return errors.New("sampler state: saved for a different partition of the data")
	}
	rest = rest[32:]
	states := make([]rand.PCG, len(s.nodes))
	for i := range states {
		if len(rest) < 4 {
			return fmt.Errorf("sampler state: truncated at node %d", i)
		}
		l := int(binary.LittleEndian.Uint32(rest))
		rest = rest[4:]
		if l > len(rest) {
			return fmt.Errorf("sampler state: truncated at node %d", i)
		}
		if err := states[i].UnmarshalBinary(rest[:l]); err != nil {
			return fmt.Errorf("sampler state: node %d: %w", i, err)
		}
		rest = rest[l:]
	}
	if len(rest) != 0 {
		return fmt.Errorf("sampler state: %d unexpected trailing bytes", len(rest))
	}
	for i := range s.nodes {
		s.nodes[i].pcg = states[i]
	}
	return nil
}

// fingerprint hashes a partition's node lists.
func fingerprint(p *Partition) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, idx := range p.Nodes {
		binary.LittleEndian.PutUint64(b[:], uint64(len(idx)))
		h.Write(b[:])
		for _, j := range idx {
			binary.LittleEndian.PutUint64(b[:], uint64(j))
			h.Write(b[:])
		}
	}
	return h.Sum64()
}
