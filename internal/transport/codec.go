package transport

import (
	"fmt"
	"sync"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"

	"github.com/gtstorm/gtstorm/internal/wire"
)

// CodecName is the gRPC content subtype of the transport's codec, whose
// messages are internal/wire frames.
const CodecName = "gtstorm-wire"

func init() { encoding.RegisterCodecV2(codec{}) }

// codec marshals wire frames without protobuf: an *outMsg is encoded into a
// buffer of framePool, a *[]byte is sent as it is; an *inMsg or a *[]byte
// receives a frame's bytes.
type codec struct{}

// outMsg is a frame to encode: a header and its float payload, or for an
// ENCODED frame its bytes.
type outMsg struct {
	h       wire.Header
	payload []float32
	raw     []byte
}

// inMsg receives a frame: it holds a reference to gRPC's buffers, which
// free releases, so that a DATA frame's floats are copied once, from the
// received buffers to their destination.
type inMsg struct {
	data mem.BufferSlice
	hdr  [wire.HeaderSize]byte
	w    wire.FloatWriter
}

// header decodes the frame's header.
func (m *inMsg) header() (wire.Header, error) {
	k := 0
	for _, b := range m.data {
		if k += copy(m.hdr[k:], b.ReadOnlyData()); k == wire.HeaderSize {
			break
		}
	}
	return wire.DecodeHeader(m.hdr[:k], m.data.Len()-wire.HeaderSize)
}

// floats copies a float frame's payload into dst, which has its length.
func (m *inMsg) floats(dst []float32) error {
	m.w.Reset(dst)
	skip := wire.HeaderSize
	for _, b := range m.data {
		p := b.ReadOnlyData()
		if skip >= len(p) {
			skip -= len(p)
			continue
		}
		if _, err := m.w.Write(p[skip:]); err != nil {
			return err
		}
		skip = 0
	}
	return nil
}

// bytes copies an ENCODED frame's payload into dst, which has its length.
func (m *inMsg) bytes(dst []byte) {
	skip := wire.HeaderSize
	for _, b := range m.data {
		p := b.ReadOnlyData()
		if skip >= len(p) {
			skip -= len(p)
			continue
		}
		dst = dst[copy(dst, p[skip:]):]
		skip = 0
	}
}

// frame decodes a whole frame, copied out of gRPC's buffers: for HELLO and
// ERROR frames.
func (m *inMsg) frame() (wire.Frame, error) {
	return wire.Decode(m.data.Materialize(), false)
}

// free releases the frame's buffers.
func (m *inMsg) free() {
	m.data.Free()
	m.data = nil
}

func (codec) Name() string { return CodecName }

func (codec) Marshal(v any) (mem.BufferSlice, error) {
	switch m := v.(type) {
	case *outMsg:
		if m.h.Kind == wire.Encoded {
			buf := frames.Get(wire.HeaderSize + len(m.raw))
			*buf = wire.AppendBytes((*buf)[:0], m.h, m.raw)
			return mem.BufferSlice{mem.NewBuffer(buf, frames)}, nil
		}
		buf := frames.Get(wire.HeaderSize + 4*len(m.payload))
		*buf = wire.AppendFloats((*buf)[:0], m.h, m.payload)
		return mem.BufferSlice{mem.NewBuffer(buf, frames)}, nil
	case *[]byte:
		return mem.BufferSlice{mem.SliceBuffer(append([]byte(nil), *m...))}, nil
	}
	return nil, fmt.Errorf("transport codec: cannot marshal %T", v)
}

func (codec) Unmarshal(data mem.BufferSlice, v any) error {
	switch m := v.(type) {
	case *inMsg:
		data.Ref()
		m.data = data
		return nil
	case *[]byte:
		*m = data.Materialize()
		return nil
	}
	return fmt.Errorf("transport codec: cannot unmarshal into %T", v)
}

// framePool is the mem.BufferPool of encoded DATA frames. Unlike gRPC's
// default pool it does not clear a buffer it hands out: every byte of a
// frame is written when it is encoded. Frames of a run have one or two
// sizes, so one sync.Pool serves them; a buffer too small is dropped.
type framePool struct{ p sync.Pool }

// frames holds the buffers of DATA frames gRPC has not written yet.
var frames = &framePool{}

func (fp *framePool) Get(n int) *[]byte {
	if b, ok := fp.p.Get().(*[]byte); ok && cap(*b) >= n {
		*b = (*b)[:n]
		return b
	}
	b := make([]byte, n)
	return &b
}

func (fp *framePool) Put(b *[]byte) { fp.p.Put(b) }
