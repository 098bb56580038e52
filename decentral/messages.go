package decentral

import (
	"fmt"

	"github.com/gtstorm/gtstorm/decentral/compress"
	"github.com/gtstorm/gtstorm/internal/splitmix"
)

// newCompressor returns the compressor of the method described by d, nil
// for one that sends uncompressed vectors.
func newCompressor(d Description) (compress.Compressor, error) {
	if d.Compress == "" {
		return nil, nil
	}
	return compress.Parse(d.Compress)
}

// allocMessages makes the per-node message buffers of a compressing method:
// node i's encoded message of the round, what it decodes to, and its length.
func (o *Optimizer) allocMessages() {
	size := o.comp.Size(o.p)
	o.dec = make([][]float32, o.m)
	o.enc = make([][]byte, o.m)
	o.msgBytes = make([]int64, o.m)
	for _, i := range o.local {
		o.dec[i] = make([]float32, o.p)
		o.enc[i] = make([]byte, 0, size)
	}
}

// compressRow encodes node i's vector v with the run's compressor and
// decodes the message into the node's message buffer (see decodeMessage),
// which it returns: a neighbour applies exactly what the encoded bytes say.
func (o *Optimizer) compressRow(i int, v []float32) ([]float32, error) {
	if o.comp == nil {
		return nil, fmt.Errorf("%s compresses, but the optimizer has no compressor", o.desc.Name)
	}
	seed := messageSeed(o.cfg.Seed, i, o.round)
	o.enc[i] = o.comp.Encode(o.enc[i][:0], v, seed)
	if err := o.decodeMessage(o.dec[i], o.enc[i]); err != nil {
		return nil, err
	}
	o.msgBytes[i] = int64(len(o.enc[i]))
	return o.dec[i], nil
}

// decodeMessage sets dst, of p floats, to the vector the encoded message
// msg makes a node apply: the decoded message times the compressor's Scale
// (unscaled when Scale is 1). The sender's compressRow and a receiving
// [EncodedExchange] both use it, so that they apply the same bits. It is
// safe for concurrent use.
func (o *Optimizer) decodeMessage(dst []float32, msg []byte) error {
	if len(dst) != o.p {
		return fmt.Errorf("decoding a message into %d floats, want %d", len(dst), o.p)
	}
	if err := o.comp.Decode(dst, msg); err != nil {
		return err
	}
	if s := o.comp.Scale(o.p); s != 1 {
		scale(dst, float32(s))
	}
	return nil
}

// messageSeed is the seed of node i's message of round t: a splitmix64
// hash of the run's seed, a stream constant, the node and the round, so the
// stream does not depend on which worker compresses or on resuming.
func messageSeed(seed uint64, i, t int) uint64 {
	h := splitmix.Hash(seed ^ 0x63686f636f) // "choco"
	h = splitmix.Hash(h ^ uint64(i))
	return splitmix.Hash(h ^ uint64(t)<<1)
}

// CompressionRatio returns how many times fewer bytes a node's message
// takes than its uncompressed float32 vector: 4p over the encoded size for
// a compressing method, 1 for the others.
func (o *Optimizer) CompressionRatio() float64 {
	if o.comp == nil {
		return 1
	}
	return float64(4*o.p) / float64(o.comp.Size(o.p))
}
