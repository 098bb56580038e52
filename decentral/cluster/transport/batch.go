package transport

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"google.golang.org/grpc/mem"

	"github.com/gtstorm/gtstorm/decentral/cluster/wire"
)

// A link's gRPC messages are of two shapes. A text frame (HELLO, BYE,
// ERROR) travels alone, as decentral/cluster/wire encodes it: its first bytes are
// wire's magic, "GT". Everything else — a round's DATA and ENCODED frames
// and the ACKs — travels in batches, many frames to one message:
//
//	0 'G' 'B'  magic
//	2 version  linkVersion
//	3 0        reserved
//	4 records  each a uint32 little-endian length n ≥ 32, then a wire
//	           frame of n bytes
//
// so that a round's vectors for a peer rank take a few large writes
// instead of one small write per edge.
const (
	batchMagic0  = 'G'
	batchMagic1  = 'B'
	batchHeader  = 4
	recordPrefix = 4
	// linkVersion is the version of the link protocol: one stream per
	// rank pair carrying batches, with multicast frames (version 3). HELLO
	// frames name it in K; a peer of another version is refused.
	linkVersion = 3
	// ackK marks a HELLO frame sent within a batch as an ACK: its Round
	// is the number of rounds the sending rank completed, so that it holds
	// every frame of the rounds before.
	ackK = 3
	// maxMessage is the largest gRPC message a rank sends or accepts.
	maxMessage = 4 << 20
	// minBatchBytes is the least payload a batch may gather before it is
	// sent, whatever the chunk size.
	minBatchBytes = 256 << 10
)

// batchMsg is a sealed batch to send: gRPC writes buf as it is, and buf is
// never written again (it may be sent again, on a new stream).
type batchMsg struct{ buf []byte }

// newBatch returns an empty batch with room for about n bytes.
func newBatch(n int) []byte {
	b := make([]byte, 0, batchHeader+n)
	return append(b, batchMagic0, batchMagic1, linkVersion, 0)
}

// appendFloatRecord appends a DATA frame of h and payload as a record.
func appendFloatRecord(b []byte, h wire.Header, payload []float32) []byte {
	at := len(b)
	b = wire.AppendFloats(append(b, 0, 0, 0, 0), h, payload)
	binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-recordPrefix))
	return b
}

// appendBytesRecord appends an ENCODED frame of h and payload as a record.
func appendBytesRecord(b []byte, h wire.Header, payload []byte) []byte {
	at := len(b)
	b = wire.AppendBytes(append(b, 0, 0, 0, 0), h, payload)
	binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-recordPrefix))
	return b
}

// appendAckRecord appends an ACK naming the rounds this rank completed.
func appendAckRecord(b []byte, from, to int, done int64) []byte {
	at := len(b)
	b = wire.AppendText(append(b, 0, 0, 0, 0), wire.Header{Kind: wire.Hello, K: ackK, Round: uint64(done), From: uint32(from), To: uint32(to)}, "")
	binary.LittleEndian.PutUint32(b[at:], uint32(len(b)-at-recordPrefix))
	return b
}

// msgReader reads a received message's bytes in order, across the buffers
// gRPC received them in, without gathering them first.
type msgReader struct {
	bufs [][]byte
	i    int // the buffer being read
	off  int // the bytes of bufs[i] read
	left int // the bytes not read, in all
}

func (r *msgReader) reset(data mem.BufferSlice) {
	r.bufs = r.bufs[:0]
	r.left = 0
	for _, b := range data {
		if p := b.ReadOnlyData(); len(p) > 0 {
			r.bufs = append(r.bufs, p)
			r.left += len(p)
		}
	}
	r.i, r.off = 0, 0
}

// next calls f with the next n bytes (n ≤ r.left), piece by piece.
func (r *msgReader) next(n int, f func(p []byte)) {
	r.left -= n
	for n > 0 {
		p := r.bufs[r.i][r.off:]
		if len(p) > n {
			p = p[:n]
		}
		f(p)
		n -= len(p)
		if r.off += len(p); r.off == len(r.bufs[r.i]) {
			r.i, r.off = r.i+1, 0
		}
	}
}

// read copies the next len(dst) bytes into dst.
func (r *msgReader) read(dst []byte) {
	r.next(len(dst), func(p []byte) { dst = dst[copy(dst, p):] })
}

// skip passes over the next n bytes.
func (r *msgReader) skip(n int) { r.next(n, func([]byte) {}) }

// same reports whether the next len(want) bytes equal want, reading them.
func (r *msgReader) same(want []byte) bool {
	eq := true
	r.next(len(want), func(p []byte) {
		eq = eq && string(p) == string(want[:len(p)])
		want = want[len(p):]
	})
	return eq
}

// frameIn is a received frame: its header and a reader positioned at its
// payload of n bytes.
type frameIn struct {
	h wire.Header
	r *msgReader
	n int
}

// floats copies the frame's payload, little-endian float32s, into dst,
// which has n/4 floats.
func (f *frameIn) floats(dst []float32) {
	if littleEndian {
		f.r.read(floatBytes(dst))
		return
	}
	buf := make([]byte, 4*len(dst))
	f.r.read(buf)
	wire.CopyFloats(dst, buf)
}

// sameFloats reports whether the frame's payload equals the floats of
// have, bit for bit, reading it.
func (f *frameIn) sameFloats(have []float32) bool {
	if littleEndian {
		return f.r.same(floatBytes(have))
	}
	b := make([]byte, 0, 4*len(have))
	for _, v := range have {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	return f.r.same(b)
}

// records calls f with every frame of the batch m holds, in order, and
// stops at f's first error. A malformed batch is an error that names the
// fault.
func (r *msgReader) records(f func(fr *frameIn) error) error {
	var hdr [batchHeader]byte
	if r.left < batchHeader {
		return fmt.Errorf("%w: a batch of %d bytes", wire.ErrMalformed, r.left)
	}
	r.read(hdr[:])
	if hdr[2] != linkVersion || hdr[3] != 0 {
		return fmt.Errorf("%w: a batch of link protocol version %d, this rank speaks %d", wire.ErrMalformed, hdr[2], linkVersion)
	}
	var fh [recordPrefix + wire.HeaderSize]byte
	fr := frameIn{r: r}
	for r.left > 0 {
		if r.left < len(fh) {
			return fmt.Errorf("%w: a batch record of %d bytes", wire.ErrMalformed, r.left)
		}
		r.read(fh[:])
		n := int(binary.LittleEndian.Uint32(fh[:]))
		if n < wire.HeaderSize || n-wire.HeaderSize > r.left {
			return fmt.Errorf("%w: a batch record of %d bytes with %d left", wire.ErrMalformed, n, r.left+wire.HeaderSize)
		}
		h, err := wire.DecodeHeader(fh[recordPrefix:], n-wire.HeaderSize)
		if err != nil {
			return err
		}
		fr.h, fr.n = h, n-wire.HeaderSize
		left := r.left - fr.n
		if err := f(&fr); err != nil {
			return err
		}
		if r.left > left { // f did not read the payload
			r.skip(r.left - left)
		}
	}
	return nil
}

// littleEndian reports whether float32s are stored as the wire stores
// them, so that a payload is copied straight into its vector.
var littleEndian = func() bool {
	x := uint32(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// floatBytes returns the bytes of v, in the host's order.
func floatBytes(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

// edgeJob is a job of an edge's queue that a batcher sends, from part,
// where a stream that failed left it.
type edgeJob struct {
	e    *edge
	j    job
	part [2]int
}

// mark is how far a batch takes an edge's job of round: to vector and
// offset at.
type mark struct {
	e     *edge
	round int64
	at    [2]int
}

// batcher encodes a link's jobs into batches and hands them to the stream,
// keeping each batch the stream took until the peer acknowledges it.
type batcher struct {
	x     *Exchange
	l     *link
	a     *attachment
	jobs  []edgeJob
	marks []mark // the progress of the batch's jobs, once it is handed over

	buf     []byte // the batch being filled
	round   int64  // the latest round of its DATA and ENCODED frames, -1 for none
	payload int64  // the payload bytes of those frames
	left    int    // bytes of records still to encode, roughly
}

// send sends the jobs' frames, after an ACK of ack rounds unless ack < 0,
// in batches of about Exchange.batchBytes.
func (w *batcher) send(jobs []edgeJob, ack int64) error {
	x := w.x
	clear(w.marks)
	w.marks, w.left = w.marks[:0], 0
	for _, t := range jobs {
		chunk, over := x.chunkOf(t.j), recordPrefix+wire.HeaderSize+4*len(t.j.dests)
		if t.j.encoded {
			w.left += len(t.j.msg) + (len(t.j.msg)/chunk+1)*over
		}
		for _, v := range t.j.vecs {
			w.left += 4*len(v) + (len(v)/chunk+1)*over
		}
	}
	w.start()
	if ack >= 0 {
		w.buf = appendAckRecord(w.buf, x.cfg.Rank, w.l.rank, ack)
	}
	for _, t := range jobs {
		e, j := t.e, t.j
		h := wire.Header{Round: uint64(j.round), From: uint32(e.local), To: uint32(e.remote)}
		chunk, dl := x.chunkOf(j), 4*len(j.dests)
		if j.encoded {
			b := j.msg
			h.Kind, h.Total = wire.Encoded, uint32(len(b))
			if t.part[0] > 0 {
				continue // gRPC took it all before
			}
			for off := t.part[1]; off == 0 || off < len(b); off += chunk {
				n := min(chunk, len(b)-off)
				if err := w.room(wire.HeaderSize + dl + n); err != nil {
					return err
				}
				h.Offset = uint32(off)
				w.buf = appendChunkRecord(w.buf, h, j.dests, nil, b[off:off+n])
				w.note(n, mark{e, j.round, [2]int{0, off + n}})
			}
			continue
		}
		h.Kind = wire.Data
		for k := t.part[0]; k < len(j.vecs); k++ {
			v := j.vecs[k]
			h.K, h.Total = uint8(k), uint32(len(v))
			first := 0
			if k == t.part[0] {
				first = t.part[1]
			}
			for off := first; off == 0 || off < len(v); off += chunk {
				n := min(chunk, len(v)-off)
				if err := w.room(wire.HeaderSize + dl + 4*n); err != nil {
					return err
				}
				h.Offset = uint32(off)
				w.buf = appendChunkRecord(w.buf, h, j.dests, v[off:off+n], nil)
				at := [2]int{k, off + n}
				if off+n == len(v) {
					at = [2]int{k + 1, 0}
				}
				w.note(4*n, mark{e, j.round, at})
			}
		}
	}
	return w.flush()
}

// start begins a batch.
func (w *batcher) start() {
	w.buf = newBatch(min(w.left, w.x.batchBytes) + 64)
	w.round, w.payload = -1, 0
}

// note counts a frame with n payload bytes in the batch, which takes its
// job to m.
func (w *batcher) note(n int, m mark) {
	w.marks = append(w.marks, m)
	w.round = max(w.round, m.round)
	w.payload += int64(n)
	w.left -= recordPrefix + wire.HeaderSize + n // roughly: a multicast frame's list is left out
}

// room sends the batch if a frame of n bytes would take it past its size.
func (w *batcher) room(n int) error {
	if len(w.buf) > batchHeader && len(w.buf)+recordPrefix+n > w.x.batchBytes {
		return w.flush()
	}
	return nil
}

// flush hands the batch to the stream, unless it is empty, and keeps it,
// if it has frames of a round, until the peer acknowledges it.
func (w *batcher) flush() error {
	x, buf := w.x, w.buf
	if len(buf) == batchHeader {
		return nil
	}
	if len(buf) > maxMessage {
		err := fmt.Errorf("transport: rank %d: a batch of %d bytes for rank %d exceeds the limit of %d bytes", x.cfg.Rank, len(buf), w.l.rank, maxMessage)
		x.fail(err)
		return err
	}
	if err := w.a.s.SendMsg(&batchMsg{buf}); err != nil {
		return err
	}
	x.mu.Lock()
	if w.round >= 0 {
		w.l.out = append(w.l.out, sentBatch{w.round, buf})
	}
	for _, m := range w.marks {
		m.e.part, m.e.partRound = m.at, m.round
	}
	x.mu.Unlock()
	clear(w.marks)
	w.marks = w.marks[:0]
	x.bytesSent.Add(w.payload)
	w.start()
	return nil
}
