package transport

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/gtstorm/gtstorm/decentral/cluster/wire"
	"github.com/gtstorm/gtstorm/decentral/compress"
)

// TestPeerTimeout: a peer that goes silent, one that closed, and one that
// never started make Wait fail within the peer timeout, naming the rank and
// its address.
func TestPeerTimeout(t *testing.T) {
	const timeout = time.Second
	topo := static(graph.MetropolisHastings(must(graph.Ring(4))))
	for _, how := range []string{"silent", "closed"} {
		t.Run(how, func(t *testing.T) {
			cl := newCluster(t, 2, 4, func(i int) int { return i % 2 }, func(r int, c *Config) { c.PeerTimeout = timeout })
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			checkErrs(t, cl.runAll(ctx, topo, 2, 1000, 0, 2, nil))
			if how == "closed" {
				cl.xs[1].Close()
			}
			start := time.Now()
			err := runRank(ctx, cl.xs[0], topo, 2, 1000, 2, 1, nil)
			elapsed := time.Since(start)
			if err == nil {
				t.Fatal("round 2 without rank 1 succeeded")
			}
			wantIn(t, "the error", err.Error(), "rank 1 at "+cl.xs[0].cfg.Addrs[1], "not answering within 1s")
			if elapsed < timeout || elapsed > timeout+timeout/2 {
				t.Errorf("Wait failed after %v, want the peer timeout, %v", elapsed, timeout)
			}
			t.Log(err)
		})
	}
	t.Run("never started", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dead := ln.Addr().String()
		ln.Close()
		lb := &logBuf{}
		x, err := New(Config{Addrs: []string{"127.0.0.1:0", dead}, Owner: func(i int) int { return i % 2 }, Nodes: 4,
			Insecure: true, PeerTimeout: timeout, Logf: lb.logf})
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close()
		if err := x.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		err = runRank(context.Background(), x, topo, 1, 10, 0, 1, nil)
		if err == nil {
			t.Fatal("a round with a rank that never started succeeded")
		}
		wantIn(t, "the error", err.Error(), "rank 1 at "+dead, "TRANSIENT_FAILURE")
		t.Log(err)
	})
}

// TestLatePeer: a rank that starts after its peer began the round is dialed
// again, with backoff, until it answers.
func TestLatePeer(t *testing.T) {
	topo := static(graph.MetropolisHastings(must(graph.Ring(4))))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Until rank 1 starts, its address answers each dial by hanging up, so
	// that the test sees rank 0's attempts.
	late := ln.Addr().String()
	dialed := make(chan struct{}, 16)
	accepting := make(chan struct{})
	go func() {
		defer close(accepting)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			select {
			case dialed <- struct{}{}:
			default:
			}
		}
	}()
	defer ln.Close()
	addrs := []string{"127.0.0.1:0", late}
	xs := make([]*Exchange, 2)
	for r := range xs {
		if xs[r], err = New(Config{Rank: r, Addrs: addrs, Owner: func(i int) int { return i % 2 }, Nodes: 4, Insecure: true, PeerTimeout: 10 * time.Second}); err != nil {
			t.Fatal(err)
		}
		defer xs[r].Close()
	}
	if err := xs[0].Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	addrs[0] = xs[0].Addr()
	xs[1].cfg.Addrs[0] = addrs[0] // rank 0 listened on port 0
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runRank(ctx, xs[0], topo, 1, 5000, 0, 3, nil) }()
	// Rank 1 starts once rank 0 has dialed it twice: it dialed again after
	// the first attempt failed.
	for n := 0; n < 2; n++ {
		select {
		case <-dialed:
		case <-ctx.Done():
			t.Fatalf("rank 0 dialed rank 1 %d times in 20 s, want 2", n)
		}
	}
	ln.Close()
	<-accepting
	if err := xs[1].Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := runRank(ctx, xs[1], topo, 1, 5000, 0, 3, nil); err != nil {
		t.Errorf("rank 1: %v", err)
	}
	if err := <-done; err != nil {
		t.Errorf("rank 0: %v", err)
	}
}

// rawPeer opens, as rank 0, the link to rank 1 at addr and trades HELLOs:
// a hand-driven peer that can send anything.
func rawPeer(t *testing.T, ctx context.Context, addr string) grpc.ClientStream {
	t.Helper()
	cs, err := rawLink(t, ctx, addr, rawHello(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// rawHello returns the link HELLO of rank from to rank to.
func rawHello(from, to int) []byte {
	return wire.AppendText(nil, wire.Header{Kind: wire.Hello, K: linkVersion, From: uint32(from), To: uint32(to)}, "sha256:test")
}

// rawLink opens a link stream to addr, sends hello and returns the stream
// once it is answered, or the answer's error.
func rawLink(t *testing.T, ctx context.Context, addr string, hello []byte) (grpc.ClientStream, error) {
	t.Helper()
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(codec{})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	cs, err := cc.NewStream(ctx, &serviceDesc.Streams[2], linkMethod)
	if err != nil {
		t.Fatal(err)
	}
	var reply []byte
	if err := cs.SendMsg(&hello); err != nil {
		t.Fatal(err)
	}
	if err := cs.RecvMsg(&reply); err != nil {
		return nil, err
	}
	return cs, nil
}

// sendRaw sends frame on a link stream as a peer does: a DATA, ENCODED,
// MULTI or MULTIENC frame in a batch, any other alone.
func sendRaw(cs grpc.ClientStream, frame []byte) error {
	if len(frame) >= 4 && (wire.Kind(frame[3]).Unicast() == wire.Data || wire.Kind(frame[3]).Unicast() == wire.Encoded) {
		b := newBatch(len(frame) + 4)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(frame)))
		frame = append(b, frame...)
		return cs.SendMsg(&batchMsg{frame})
	}
	return cs.SendMsg(&frame)
}

// TestMisbehavingPeer: frames of a past round, of the wrong length, with
// NaN or Inf, out of order, for other nodes or of the wrong kind make Wait
// fail naming the sender, and the sender is told.
func TestMisbehavingPeer(t *testing.T) {
	const p = 8
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	data := func(round uint64, k uint8, off, total uint32, vals ...float32) []byte {
		return wire.AppendFloats(nil, wire.Header{Kind: wire.Data, K: k, Round: round, From: 0, To: 1, Offset: off, Total: total}, vals)
	}
	ok4 := []float32{1, 2, 3, 4}
	tests := []struct {
		name   string
		frames [][]byte
		want   string
	}{
		{"past round", [][]byte{data(3, 0, 0, p, make([]float32, p)...)}, "a past round"},
		{"wrong length", [][]byte{data(5, 0, 0, 5, 1, 2, 3, 4, 5)}, "with 5 floats, want 8"},
		{"NaN", [][]byte{data(5, 0, 0, p, 1, 2, nan, 4)}, "NaN at float 2"},
		{"Inf", [][]byte{data(5, 0, 0, p, ok4...), data(5, 0, 4, p, 1, 2, 3, inf)}, "+Inf at float 7"},
		{"ragged payload", [][]byte{append(data(5, 0, 0, p, ok4...), 0, 0, 0)}, "not a multiple of 4"},
		{"past the end", [][]byte{data(5, 0, 6, p, ok4...)}, "chunk past the vector's end"},
		{"chunk ahead", [][]byte{data(5, 0, 4, p, ok4...)}, "out of order: a chunk at float 4, want 0"},
		{"changed chunk", [][]byte{data(5, 0, 0, p, ok4...), data(5, 0, 0, p, 1, 2, 3, 5)}, "twice, the second time with other values at float 0"},
		{"vector not shared", [][]byte{data(5, 1, 0, p, make([]float32, p)...)}, "vector 1 of round 5 to node 1, which that round does not expect"},
		{"other nodes", [][]byte{wire.AppendFloats(nil, wire.Header{Kind: wire.Data, Round: 5, From: 0, To: 0, Total: p}, make([]float32, p))}, "a frame from node 0 to node 0"},
		{"second HELLO", [][]byte{wire.AppendText(nil, wire.Header{Kind: wire.Hello, From: 0, To: 1}, "x")}, "a HELLO frame alone on the open link"},
		{"ERROR", [][]byte{wire.AppendText(nil, wire.Header{Kind: wire.Error, From: 0, To: 1}, "out of memory")}, "closed its link: out of memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { refusedPeer(t, p, tt.frames, nil, tt.want) })
	}
	// A compressing run's messages travel encoded (qsgd:7, 4 + p/2 bytes).
	q := must(compress.Parse("qsgd:7"))
	decode := func(dst []float32, msg []byte) error { return q.Decode(dst, msg) }
	enc := func(round uint64, off, total uint32, b ...byte) []byte {
		return wire.AppendBytes(nil, wire.Header{Round: round, From: 0, To: 1, Offset: off, Total: total}, b)
	}
	good := q.Encode(nil, vec(0, 5, 0, p), 1)
	badNorm := append([]byte{0, 0, 0xc0, 0x7f}, good[4:]...) // a NaN norm
	for _, tt := range []struct {
		name   string
		decode func([]float32, []byte) error
		frames [][]byte
		want   string
	}{
		{"encoded wrong length", decode, [][]byte{enc(5, 0, 3, 1, 2, 3)}, "does not decode: compress: qsgd:7"},
		{"encoded NaN norm", decode, [][]byte{enc(5, 0, uint32(len(good)), badNorm...)}, "does not decode: compress: qsgd:7"},
		{"encoded too long", decode, [][]byte{enc(5, 0, 1000, 1, 2)}, "of 1000 bytes, want at most 128"},
		{"encoded chunk out of order", decode, [][]byte{enc(5, 2, uint32(len(good)), good[2:]...)}, "out of order: a chunk at byte 2, want 0"},
		{"encoded past round", decode, [][]byte{enc(4, 0, uint32(len(good)), good...)}, "a past round"},
		{"vector to an encoded run", decode, [][]byte{data(5, 0, 0, p, make([]float32, p)...)}, "but this run's messages travel encoded"},
		{"encoded to a vector run", nil, [][]byte{enc(5, 0, uint32(len(good)), good...)}, "but this run's messages travel as vectors"},
	} {
		t.Run(tt.name, func(t *testing.T) { refusedPeer(t, p, tt.frames, tt.decode, tt.want) })
	}
}

// refusedPeer runs node 1 on a rank whose peer, node 0, is played by hand
// and sends frames in round 5: Wait must fail naming node 0 and want, and
// the peer be told. A non-nil decode makes the run's messages travel
// encoded.
func refusedPeer(t *testing.T, p int, frames [][]byte, decode func([]float32, []byte) error, want string) {
	topo := static(graph.MetropolisHastings(must(graph.Path(2))))
	w := topo.Mixing(5)
	// Rank 1 runs node 1; rank 0, node 0, is played by hand.
	cl := newCluster(t, 2, 2, func(i int) int { return i }, func(r int, c *Config) {
		c.VectorLen, c.PeerTimeout = p, 5*time.Second
	})
	x := cl.xs[1]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs := rawPeer(t, ctx, x.cfg.Addrs[1])
	if err := x.BeginRound(5, w, 1); err != nil {
		t.Fatal(err)
	}
	v := vec(1, 5, 0, p)
	if decode != nil {
		x.SetDecoder(decode)
		if _, err := x.SendEncoded(1, w.To(1), []byte{1, 2, 3}, v); err != nil {
			t.Fatal(err)
		}
	} else if _, err := x.Send(1, w.To(1), [][]float32{v}); err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		if err := sendRaw(cs, f); err != nil {
			t.Fatal(err)
		}
	}
	err := x.Wait(ctx)
	if err == nil {
		t.Fatal("Wait succeeded")
	}
	wantIn(t, "the error", err.Error(), "rank 0 at "+x.cfg.Addrs[0], want)
	t.Log(err)
	var got []byte
	for err = nil; err == nil; err = cs.RecvMsg(&got) {
	}
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), want) {
		t.Errorf("the peer was told %v, want InvalidArgument with %q", err, want)
	}
}

// TestHelloRefused: a link opened by the higher rank, for another rank, of
// another protocol version, or starting with anything but HELLO is refused
// and logged; so is a stream of the first version's Edge method.
func TestHelloRefused(t *testing.T) {
	hello := func(k uint8, from, to uint32) []byte {
		return wire.AppendText(nil, wire.Header{Kind: wire.Hello, K: k, From: from, To: to}, "sha256:test")
	}
	tests := []struct {
		name   string
		method string
		first  []byte
		code   codes.Code
		want   string
	}{
		{"not HELLO", linkMethod, wire.AppendFloats(nil, wire.Header{Kind: wire.Data, From: 0, To: 1, Total: 1}, []float32{1}), codes.InvalidArgument, "a DATA frame before HELLO"},
		{"not my rank", linkMethod, hello(linkVersion, 0, 2), codes.InvalidArgument, "HELLO to rank 2, this is rank 1"},
		{"higher rank opens", linkMethod, hello(linkVersion, 2, 1), codes.InvalidArgument, "the lower rank of a pair opens its link"},
		{"other version", linkMethod, hello(1, 0, 1), codes.FailedPrecondition, "link protocol version 1: this rank speaks 3"},
		{"before multicast", linkMethod, hello(2, 0, 1), codes.FailedPrecondition, "link protocol version 2: this rank speaks 3"},
		{"garbage", linkMethod, []byte("GET / HTTP/1.1"), codes.InvalidArgument, "short frame"},
		{"edge stream", edgeMethod, hello(0, 0, 1), codes.FailedPrecondition, "link protocol version 1): this rank speaks version 3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := newCluster(t, 3, 3, func(i int) int { return i }, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cc, err := grpc.NewClient("passthrough:///"+cl.xs[1].cfg.Addrs[1], grpc.WithTransportCredentials(insecure.NewCredentials()),
				grpc.WithDefaultCallOptions(grpc.ForceCodecV2(codec{})))
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Close()
			desc := &serviceDesc.Streams[2]
			if tt.method == edgeMethod {
				desc = &serviceDesc.Streams[0]
			}
			cs, err := cc.NewStream(ctx, desc, tt.method)
			if err != nil {
				t.Fatal(err)
			}
			var reply []byte
			// A server that refuses the stream at once ends it before the
			// frame goes: SendMsg then says io.EOF, and RecvMsg the status.
			if err := cs.SendMsg(&tt.first); err != nil && !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			err = cs.RecvMsg(&reply)
			if status.Code(err) != tt.code || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %v with %q", err, tt.code, tt.want)
			}
			wantIn(t, "rank 1's log", cl.logs[1].String(), "rank 1 refused a", tt.want)
		})
	}
}
