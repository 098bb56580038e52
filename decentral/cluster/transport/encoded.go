package transport

import (
	"fmt"

	"github.com/gtstorm/gtstorm/decentral"
)

var _ decentral.EncodedExchange = (*Exchange)(nil)

// maxEncodedBytes bounds the length of an encoded message for p floats that
// a rank accepts: the longest a compressor of decentral/compress writes is
// 8p bytes (top-k keeping every entry), and the bound leaves room for a
// few header bytes.
func maxEncodedBytes(p int) int { return 8*p + 64 }

// SetDecoder makes the Exchange carry a compressing method's messages
// encoded: decode turns a received message into the p floats its sender
// applied. decentral.New calls it, before the first round; every rank of
// the run must, since a rank refuses a DATA frame once it has a decoder and
// an ENCODED frame without one.
func (x *Exchange) SetDecoder(decode func(dst []float32, msg []byte) error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.decode = decode
}

// SendEncoded sends node's encoded message of the round, msg, to the nodes
// of to: to those of other ranks as ENCODED frames over their edges'
// streams, in chunks of at most Config.ChunkBytes; those of this rank read
// dec, the message the sender decoded, in memory. The receiving rank
// decodes the bytes with its decoder, so Recv returns the decoded message
// on every rank. msg and dec must stay unchanged until the round's Recv
// calls are over. It returns len(msg) × len(to), the bytes the
// optimizer counts.
func (x *Exchange) SendEncoded(node int, to []int, msg []byte, dec []float32) (int64, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := x.checkSendLocked("SendEncoded", node, to, 1); err != nil {
		return 0, err
	}
	switch {
	case x.decode == nil:
		return 0, fmt.Errorf("transport: rank %d: SendEncoded before SetDecoder", x.cfg.Rank)
	case x.veclen != 0 && len(dec) != x.veclen:
		return 0, fmt.Errorf("transport: rank %d: node %d's decoded message has %d floats, want %d", x.cfg.Rank, node, len(dec), x.veclen)
	case len(msg) > maxEncodedBytes(len(dec)):
		return 0, fmt.Errorf("transport: rank %d: node %d's message of %d bytes for %d floats, want at most %d", x.cfg.Rank, node, len(msg), len(dec), maxEncodedBytes(len(dec)))
	}
	if x.veclen == 0 {
		x.veclen = len(dec)
		x.cond.Broadcast() // readers holding encoded frames go on
	}
	sent := x.sent[x.round&1]
	sent[node] = append(sent[node][:0], dec)
	x.queueSameLocked(node, to, job{round: x.round, msg: msg, encoded: true})
	return int64(len(msg)) * int64(len(to)), nil
}
