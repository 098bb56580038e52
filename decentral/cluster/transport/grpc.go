package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/gtstorm/gtstorm/decentral/cluster/wire"
)

// The service has bidirectional streaming methods: Link, one call per pair
// of ranks, opened by the lower rank, and Gather, one call per rank to rank
// 0. Edge, a call per graph edge, was the first version's and is refused.
const (
	serviceName = "gtstorm.transport.Exchange"
	edgeMethod  = "/" + serviceName + "/Edge"
	linkMethod  = "/" + serviceName + "/Link"
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
	serveLink(ss grpc.ServerStream) error
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
	}, {
		StreamName:    "Link",
		Handler:       func(srv any, ss grpc.ServerStream) error { return srv.(edgeService).serveLink(ss) },
		ServerStreams: true,
		ClientStreams: true,
	}},
	Metadata: "decentral/cluster/transport",
}

func (rc *rankConn) serverOptions() []grpc.ServerOption {
	var creds credentials.TransportCredentials = insecure.NewCredentials()
	if rc.cfg.TLS != nil {
		creds = credentials.NewTLS(serverTLS(rc.cfg.TLS, rc.cfg.Rank, len(rc.cfg.Addrs)))
	}
	return []grpc.ServerOption{
		grpc.Creds(logCreds{creds, rc, -1}),
		grpc.ForceServerCodecV2(codec{}),
		grpc.WaitForHandlers(true),
		grpc.InitialWindowSize(streamWindow),
		grpc.InitialConnWindowSize(connWindow),
		grpc.WriteBufferSize(bufferSize),
		grpc.ReadBufferSize(bufferSize),
		grpc.MaxRecvMsgSize(maxMessage),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: 5 * time.Second, PermitWithoutStream: true}),
	}
}

func (rc *rankConn) dialOptions(rank int) []grpc.DialOption {
	var creds credentials.TransportCredentials = insecure.NewCredentials()
	if rc.cfg.TLS != nil {
		creds = credentials.NewTLS(clientTLS(rc.cfg.TLS, rank))
	}
	return []grpc.DialOption{
		grpc.WithTransportCredentials(logCreds{creds, rc, rank}),
		grpc.WithDefaultCallOptions(grpc.ForceCodecV2(codec{}), grpc.MaxCallRecvMsgSize(maxMessage)),
		grpc.WithNoProxy(),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: maxBackoff},
			MinConnectTimeout: max(rc.timeout, time.Second),
		}),
		grpc.WithInitialWindowSize(streamWindow),
		grpc.WithInitialConnWindowSize(connWindow),
		grpc.WithWriteBufferSize(bufferSize),
		grpc.WithReadBufferSize(bufferSize),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{
			Time: max(10*time.Second, rc.timeout/2), Timeout: rc.timeout, PermitWithoutStream: true,
		}),
	}
}

// linkHello returns the HELLO frame of this rank on its link with rank:
// the link protocol's version, the rounds this rank completed, so that the
// peer drops what it kept for them, and the config hash. x.mu is held.
func (x *Exchange) linkHello(rank int) []byte {
	h := wire.Header{Kind: wire.Hello, K: linkVersion, Round: uint64(x.done), From: uint32(x.cfg.Rank), To: uint32(rank)}
	return wire.AppendText(nil, h, x.cfg.ConfigHash)
}

// dialLoop opens l's stream, serves it, and opens it again, with
// exponential backoff, whenever it fails, until Close or a refusal.
func (x *Exchange) dialLoop(l *link, cc *grpc.ClientConn) {
	defer x.wg.Done()
	wait := minBackoff
	timer := time.NewTimer(0)
	defer timer.Stop()
	for x.ctx.Err() == nil && !x.gone(l.rank) {
		a, err := x.openLink(l, cc)
		if err == nil {
			wait = minBackoff
			err = x.serve(l, a)
		}
		if x.ctx.Err() != nil || errors.Is(err, errPeerLeft) || x.gone(l.rank) {
			return
		}
		if c := status.Code(err); c == codes.InvalidArgument || c == codes.PermissionDenied || c == codes.FailedPrecondition || c == codes.Unimplemented {
			x.fail(fmt.Errorf("transport: rank %d: rank %d at %s refused the link: %s",
				x.cfg.Rank, l.rank, x.cfg.Addrs[l.rank], status.Convert(err).Message()))
		}
		x.mu.Lock()
		failed := x.err != nil
		if !errors.Is(err, errDetached) && status.Code(err) != codes.Canceled {
			x.peers[l.rank].lastErr = fmt.Errorf("link: %w", err)
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

// openLink opens l's stream and trades HELLOs on it.
func (x *Exchange) openLink(l *link, cc *grpc.ClientConn) (*attachment, error) {
	ctx, cancel := context.WithCancel(x.ctx)
	cs, err := cc.NewStream(ctx, &serviceDesc.Streams[2], linkMethod, grpc.WaitForReady(true))
	if err != nil {
		cancel()
		return nil, err
	}
	x.mu.Lock()
	hello := x.linkHello(l.rank)
	x.mu.Unlock()
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
	switch {
	case err != nil:
	case f.Kind != wire.Hello || int(f.From) != l.rank || int(f.To) != x.cfg.Rank:
		err = fmt.Errorf("a %s frame from rank %d to rank %d, want rank %d's HELLO", f.Kind, f.From, f.To, l.rank)
	case f.K != linkVersion:
		err = fmt.Errorf("link protocol version %d, this rank speaks %d", f.K, linkVersion)
	case f.Round > math.MaxInt64/2:
		err = fmt.Errorf("a HELLO after round %d", f.Round)
	case string(f.Payload) != x.cfg.ConfigHash:
		err = fmt.Errorf("config hash mismatch: rank %d has %q, rank %d has %q", l.rank, f.Payload, x.cfg.Rank, x.cfg.ConfigHash)
	}
	if err != nil {
		cancel()
		err = fmt.Errorf("transport: rank %d: rank %d at %s answered the link with %w", x.cfg.Rank, l.rank, x.cfg.Addrs[l.rank], err)
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
	x.ackLocked(l, int64(f.Round))
	return x.attachLocked(l, cs, cancel), nil
}

// refuser returns the peer's credentials of a stream another rank opened
// and the refusal of the stream (what it is named in the log): logged once
// per reason and answered with code c.
func (rc *rankConn) refuser(ss grpc.ServerStream, what string) (credentials.AuthInfo, func(c codes.Code, format string, args ...any) error) {
	from := "an unknown peer"
	var auth credentials.AuthInfo
	if p, ok := peer.FromContext(ss.Context()); ok {
		from, auth = p.Addr.String(), p.AuthInfo
	}
	return auth, func(c codes.Code, format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		rc.refusal(msg, "transport: rank %d refused %s from %s: %s", rc.cfg.Rank, what, from, msg)
		return status.Error(c, msg)
	}
}

// serveEdge refuses a stream of the first version of the protocol, one
// per graph edge: a rank of another gtstorm version.
func (x *Exchange) serveEdge(ss grpc.ServerStream) error {
	_, refuse := x.refuser(ss, "a stream")
	return refuse(codes.FailedPrecondition, "a stream of one graph edge (link protocol version 1): this rank speaks version %d, one stream per pair of ranks; run the same gtstorm on every rank", linkVersion)
}

// serveLink serves the link another rank opened: it checks the HELLO, the
// peer's certificate and the config hash, answers, and serves the stream
// until it fails or another replaces it.
func (x *Exchange) serveLink(ss grpc.ServerStream) error {
	auth, refuse := x.refuser(ss, "a link")
	var m inMsg
	if err := ss.RecvMsg(&m); err != nil {
		return err
	}
	f, err := m.frame()
	m.free()
	if err != nil {
		return refuse(codes.InvalidArgument, "HELLO: %v", err)
	}
	from := int(f.From)
	switch {
	case f.Kind != wire.Hello:
		return refuse(codes.InvalidArgument, "a %s frame before HELLO", f.Kind)
	case f.K != linkVersion:
		return refuse(codes.FailedPrecondition, "link protocol version %d: this rank speaks %d; run the same gtstorm on every rank", f.K, linkVersion)
	case int(f.To) != x.cfg.Rank:
		return refuse(codes.InvalidArgument, "HELLO to rank %d, this is rank %d", f.To, x.cfg.Rank)
	case from >= x.cfg.Rank:
		return refuse(codes.InvalidArgument, "HELLO from rank %d: the lower rank of a pair opens its link", from)
	case f.Round > math.MaxInt64/2:
		return refuse(codes.InvalidArgument, "HELLO after round %d", f.Round)
	}
	if r, err := certRank(auth); err != nil {
		return refuse(codes.PermissionDenied, "%v", err)
	} else if r >= 0 && r != from {
		return refuse(codes.PermissionDenied, "certificate of rank %d opening the link of rank %d", r, from)
	}
	if hash := string(f.Payload); hash != x.cfg.ConfigHash {
		return refuse(codes.FailedPrecondition, "config hash mismatch: rank %d has %q, rank %d has %q", from, hash, x.cfg.Rank, x.cfg.ConfigHash)
	}
	if why := x.impostor(from, int64(f.Round)); why != "" {
		return refuse(codes.AlreadyExists, "%s", why)
	}
	x.mu.Lock()
	if x.closed || x.leaving {
		x.mu.Unlock()
		return status.Error(codes.Unavailable, "closing")
	}
	hello := x.linkHello(from)
	x.mu.Unlock()
	if err := ss.SendMsg(&hello); err != nil {
		return err
	}
	x.mu.Lock()
	if x.closed || x.leaving {
		x.mu.Unlock()
		return status.Error(codes.Unavailable, "closing")
	}
	l := x.linkLocked(from)
	x.ackLocked(l, int64(f.Round))
	a := x.attachLocked(l, ss, nil)
	x.mu.Unlock()
	err = x.serve(l, a)
	switch {
	case errors.Is(err, errPeerLeft):
		return nil // the peer's BYE was the stream's last frame
	case errors.Is(err, errDetached):
		return status.Errorf(codes.Aborted, "rank %d took another stream of rank %d's link", x.cfg.Rank, from)
	}
	if _, isStatus := status.FromError(err); !isStatus && err != io.EOF && !errors.Is(err, context.Canceled) {
		return status.Error(codes.InvalidArgument, err.Error()) // a fault of the peer's: tell it
	}
	return err
}
