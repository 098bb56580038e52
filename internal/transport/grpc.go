package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/gtstorm/gtstorm/internal/wire"
)

// The service has two bidirectional streaming methods: Edge, one call per
// graph edge between ranks, and Gather, one call per rank to rank 0.
const (
	serviceName = "gtstorm.transport.Exchange"
	edgeMethod  = "/" + serviceName + "/Edge"
)

// HTTP/2 flow-control windows and socket buffers, sized for megabyte
// vectors.
const (
	streamWindow = 8 << 20
	connWindow   = 32 << 20
	bufferSize   = 256 << 10
	minBackoff   = 50 * time.Millisecond
	maxBackoff   = 5 * time.Second
)

// edgeService is what the service's handlers are registered with.
type edgeService interface {
	serveEdge(ss grpc.ServerStream) error
	serveGather(ss grpc.ServerStream) error
}

var serviceDesc = grpc.ServiceDesc{
	ServiceName: serviceName,
	HandlerType: (*edgeService)(nil),
	Streams: []grpc.StreamDesc{{
		StreamName:    "Edge",
		Handler:       func(srv any, ss grpc.ServerStream) error { return srv.(edgeService).serveEdge(ss) },
		ServerStreams: true,
		ClientStreams: true,
	}, {
		StreamName:    "Gather",
		Handler:       func(srv any, ss grpc.ServerStream) error { return srv.(edgeService).serveGather(ss) },
		ServerStreams: true,
		ClientStreams: true,
	}},
	Metadata: "internal/transport",
}

func (x *Exchange) serverOptions() []grpc.ServerOption {
	var creds credentials.TransportCredentials = insecure.NewCredentials()
	if x.cfg.TLS != nil {
		creds = credentials.NewTLS(serverTLS(x.cfg.TLS, x.cfg.Rank, len(x.cfg.Addrs)))
	}
	return []grpc.ServerOption{
		grpc.Creds(logCreds{creds, x, -1}),
		grpc.ForceServerCodecV2(codec{}),
		grpc.WaitForHandlers(true),
		grpc.InitialWindowSize(streamWindow),
		grpc.InitialConnWindowSize(connWindow),
		grpc.WriteBufferSize(bufferSize),
		grpc.ReadBufferSize(bufferSize),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
	}
}

func (x *Exchange) dialOptions(rank int) []grpc.DialOption {
	var creds credentials.TransportCredentials = insecure.NewCredentials()
	if x.cfg.TLS != nil {
		creds = credentials.NewTLS(clientTLS(x.cfg.TLS, rank))
	}
	return []grpc.DialOption{
		grpc.WithTransportCredentials(logCreds{creds, x, rank}),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(codec{})),
		grpc.WithNoProxy(),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: maxBackoff},
			MinConnectTimeout: max(x.timeout, time.Second),
		}),
		grpc.WithInitialWindowSize(streamWindow),
		grpc.WithInitialConnWindowSize(connWindow),
		grpc.WithWriteBufferSize(bufferSize),
		grpc.WithReadBufferSize(bufferSize),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{
			Time: max(10*time.Second, x.timeout/2), Timeout: x.timeout, PermitWithoutStream: true,
		}),
	}
}

// hello returns the HELLO frame of the stream from local to remote.
func (x *Exchange) hello(local, remote int) []byte {
	return wire.AppendText(nil, wire.Header{Kind: wire.Hello, From: uint32(local), To: uint32(remote)}, x.cfg.ConfigHash)
}

// dialLoop opens e's stream, serves it, and opens it again, with
// exponential backoff, whenever it fails, until Close or a refusal.
func (x *Exchange) dialLoop(e *edge, cc *grpc.ClientConn) {
	defer x.wg.Done()
	wait := minBackoff
	timer := time.NewTimer(0)
	defer timer.Stop()
	for x.ctx.Err() == nil && !x.gone(e.rank) {
		a, err := x.openStream(e, cc)
		if err == nil {
			wait = minBackoff
			err = x.readLoop(e, a)
			x.detach(e, a)
		}
		if x.ctx.Err() != nil || errors.Is(err, errPeerLeft) || x.gone(e.rank) {
			return
		}
		if c := status.Code(err); c == codes.InvalidArgument || c == codes.PermissionDenied || c == codes.FailedPrecondition || c == codes.Unimplemented {
			x.fail(fmt.Errorf("transport: rank %d: rank %d at %s refused the stream of nodes %d and %d: %s",
				x.cfg.Rank, e.rank, x.cfg.Addrs[e.rank], e.local, e.remote, status.Convert(err).Message()))
		}
		x.mu.Lock()
		failed := x.err != nil
		if !errors.Is(err, errDetached) && status.Code(err) != codes.Canceled {
			x.peers[e.rank].lastErr = fmt.Errorf("stream of nodes %d and %d: %w", e.local, e.remote, err)
		}
		x.mu.Unlock()
		if failed {
			return
		}
		timer.Reset(wait)
		select {
		case <-x.ctx.Done():
			return
		case <-timer.C:
		}
		wait = min(2*wait, maxBackoff)
	}
}

// openStream opens e's stream and trades HELLOs on it.
func (x *Exchange) openStream(e *edge, cc *grpc.ClientConn) (*attachment, error) {
	ctx, cancel := context.WithCancel(x.ctx)
	cs, err := cc.NewStream(ctx, &serviceDesc.Streams[0], edgeMethod, grpc.WaitForReady(true))
	if err != nil {
		cancel()
		return nil, err
	}
	hello := x.hello(e.local, e.remote)
	var m inMsg
	if err = cs.SendMsg(&hello); err == nil {
		err = cs.RecvMsg(&m)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	f, err := m.frame()
	m.free()
	if err == nil && (f.Kind != wire.Hello || int(f.From) != e.remote || int(f.To) != e.local) {
		err = fmt.Errorf("a %s frame from node %d to node %d, want node %d's HELLO", f.Kind, f.From, f.To, e.remote)
	}
	if err == nil && string(f.Payload) != x.cfg.ConfigHash {
		err = fmt.Errorf("config hash mismatch: rank %d has %q, rank %d has %q", e.rank, f.Payload, x.cfg.Rank, x.cfg.ConfigHash)
	}
	if err != nil {
		cancel()
		err = fmt.Errorf("transport: rank %d: rank %d at %s answered the stream of nodes %d and %d with %w", x.cfg.Rank, e.rank, x.cfg.Addrs[e.rank], e.local, e.remote, err)
		x.refusal(err.Error(), "%v", err)
		x.fail(err)
		return nil, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		cancel()
		return nil, context.Canceled
	}
	return x.attachLocked(e, cs, cancel), nil
}

// refuser returns the peer's credentials of a stream another rank opened
// and the refusal of the stream (what it is named in the log): logged once
// per reason and answered with code c.
func (x *Exchange) refuser(ss grpc.ServerStream, what string) (credentials.AuthInfo, func(c codes.Code, format string, args ...any) error) {
	from := "an unknown peer"
	var auth credentials.AuthInfo
	if p, ok := peer.FromContext(ss.Context()); ok {
		from, auth = p.Addr.String(), p.AuthInfo
	}
	return auth, func(c codes.Code, format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		x.refusal(msg, "transport: rank %d refused %s from %s: %s", x.cfg.Rank, what, from, msg)
		return status.Error(c, msg)
	}
}

// serveEdge serves a stream another rank opened: it checks the HELLO, the
// peer's certificate and the config hash, answers, and reads the stream.
func (x *Exchange) serveEdge(ss grpc.ServerStream) error {
	auth, refuse := x.refuser(ss, "a stream")
	var m inMsg
	if err := ss.RecvMsg(&m); err != nil {
		return err
	}
	f, err := m.frame()
	m.free()
	if err != nil {
		return refuse(codes.InvalidArgument, "HELLO: %v", err)
	}
	src, dst := int(f.From), int(f.To)
	switch {
	case f.Kind != wire.Hello:
		return refuse(codes.InvalidArgument, "a %s frame before HELLO", f.Kind)
	case dst >= x.cfg.Nodes || x.owner[dst] != x.cfg.Rank:
		return refuse(codes.InvalidArgument, "HELLO to node %d, which rank %d does not run", dst, x.cfg.Rank)
	case src >= x.cfg.Nodes || x.owner[src] == x.cfg.Rank:
		return refuse(codes.InvalidArgument, "HELLO from node %d, which no other rank runs", src)
	case src > dst:
		return refuse(codes.InvalidArgument, "HELLO from node %d to node %d: the lower node's rank opens an edge", src, dst)
	}
	if r, err := certRank(auth); err != nil {
		return refuse(codes.PermissionDenied, "%v", err)
	} else if r >= 0 && r != x.owner[src] {
		return refuse(codes.PermissionDenied, "certificate of rank %d opening a stream for node %d, which rank %d runs", r, src, x.owner[src])
	}
	if hash := string(f.Payload); hash != x.cfg.ConfigHash {
		return refuse(codes.FailedPrecondition, "config hash mismatch: rank %d has %q, rank %d has %q", x.owner[src], hash, x.cfg.Rank, x.cfg.ConfigHash)
	}
	hello := x.hello(dst, src)
	if err := ss.SendMsg(&hello); err != nil {
		return err
	}
	x.mu.Lock()
	if x.closed || x.leaving {
		x.mu.Unlock()
		return status.Error(codes.Unavailable, "closing")
	}
	e := x.edgeLocked(dst, src)
	a := x.attachLocked(e, ss, nil)
	x.mu.Unlock()
	err = x.readLoop(e, a)
	x.detach(e, a)
	if errors.Is(err, errPeerLeft) {
		return nil // the peer's BYE was the stream's last frame
	}
	if _, isStatus := status.FromError(err); !isStatus && err != io.EOF && !errors.Is(err, context.Canceled) && !errors.Is(err, errDetached) {
		return status.Error(codes.InvalidArgument, err.Error()) // a fault of the peer's: tell it
	}
	return err
}
