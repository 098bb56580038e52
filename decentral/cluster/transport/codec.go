package transport

import (
	"fmt"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"

	"github.com/gtstorm/gtstorm/decentral/cluster/wire"
)

// CodecName is the gRPC content subtype of the transport's codec, whose
// messages are decentral/cluster/wire frames.
const CodecName = "gtstorm-wire"

func init() { encoding.RegisterCodecV2(codec{}) }

// codec marshals wire frames and batches without protobuf: a *batchMsg is
// sent as it is, a *[]byte copied; an *inMsg or a *[]byte receives a
// message's bytes.
type codec struct{}

// inMsg receives a message: it holds a reference to gRPC's buffers, which
// free releases, so that a DATA frame's floats are copied once, from the
// received buffers to their destination.
type inMsg struct {
	data mem.BufferSlice
	hdr  [wire.HeaderSize]byte
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
	case *batchMsg:
		// Sent as it is: a batch is never written once sealed.
		return mem.BufferSlice{mem.SliceBuffer(m.buf)}, nil
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
