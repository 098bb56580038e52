package transport

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"time"

	"github.com/gtstorm/gtstorm/decentral/cluster/wire"
)

// DefaultPeerTimeout is how long Wait waits for a silent peer when
// Config.PeerTimeout is 0.
const DefaultPeerTimeout = 60 * time.Second

// maxChunkBytes keeps a DATA frame under gRPC's default 4 MiB message limit.
const maxChunkBytes = 4<<20 - 1024

// Config configures the Exchange of one rank of a run spread over
// len(Addrs) processes.
type Config struct {
	// Rank is this process's rank, in [0, len(Addrs)).
	Rank int
	// Addrs holds one host:port per rank; the Exchange listens on
	// Addrs[Rank] (unless given a listener) and dials the others.
	Addrs []string
	// Owner returns the rank that runs a node, for every node in [0, Nodes).
	Owner func(node int) int
	// Nodes is m, the number of nodes of the run.
	Nodes int
	// TLS holds this rank's certificate and the run's CA (see NewTLS and
	// LoadTLS); the Exchange derives its server and client configurations
	// from it and checks that every peer's certificate names the rank
	// expected of it. It may be nil only when Insecure is set.
	TLS *tls.Config
	// Insecure runs without TLS. It is refused unless every address of
	// Addrs is a loopback address (127.0.0.0/8, ::1 or localhost).
	Insecure bool
	// PeerTimeout is how long Wait waits for a peer that neither sends nor
	// takes anything before it gives up naming that peer; 0 means
	// DefaultPeerTimeout.
	PeerTimeout time.Duration
	// ConfigHash identifies the run's configuration; it is exchanged when an
	// edge's stream opens and a peer with another hash is refused.
	ConfigHash string
	// Logf reports refused connections and streams; nil means log.Printf.
	Logf func(format string, args ...any)
	// VectorLen is p, the length of every shared vector in floats: a vector
	// of another length, sent or received, is an error. 0 means the length
	// of the first vector sent or received.
	VectorLen int
	// ChunkBytes is the payload limit of one DATA frame: a longer vector
	// travels in several. 0 means wire.DefaultChunkBytes (1 MiB).
	ChunkBytes int
}

// check validates c and returns the owner of every node.
func (c *Config) check() ([]int, error) {
	k := len(c.Addrs)
	switch {
	case k == 0:
		return nil, errors.New("no addresses: want one host:port per rank")
	case c.Rank < 0 || c.Rank >= k:
		return nil, fmt.Errorf("rank %d: want a rank of [0, %d)", c.Rank, k)
	case c.Nodes < 1:
		return nil, fmt.Errorf("%d nodes: want at least 1", c.Nodes)
	case c.Nodes > 1<<31:
		return nil, fmt.Errorf("%d nodes: want at most 2^31", c.Nodes)
	case c.Owner == nil:
		return nil, errors.New("no Owner function")
	case c.PeerTimeout < 0:
		return nil, fmt.Errorf("peer timeout %v: want ≥ 0", c.PeerTimeout)
	case c.VectorLen < 0 || int64(c.VectorLen) > 1<<32-1:
		return nil, fmt.Errorf("vector length %d: want a length of [0, 2^32)", c.VectorLen)
	case c.ChunkBytes != 0 && (c.ChunkBytes < 4 || c.ChunkBytes > maxChunkBytes):
		return nil, fmt.Errorf("chunk of %d bytes: want 0 or [4, %d]", c.ChunkBytes, maxChunkBytes)
	case len(c.ConfigHash) > wire.MaxText:
		return nil, fmt.Errorf("config hash of %d bytes: want at most %d", len(c.ConfigHash), wire.MaxText)
	case c.TLS == nil && !c.Insecure:
		return nil, errors.New("no TLS configuration: give one, or set Insecure on loopback addresses")
	case c.TLS != nil && c.Insecure:
		return nil, errors.New("both a TLS configuration and Insecure: choose one")
	}
	for r, a := range c.Addrs {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return nil, fmt.Errorf("rank %d's address %q: %w", r, a, err)
		}
		if c.Insecure && !Loopback(a) {
			return nil, fmt.Errorf("insecure transport refused: rank %d's address %q is not a loopback address", r, a)
		}
	}
	if c.TLS != nil {
		if err := checkTLS(c.TLS, c.Rank); err != nil {
			return nil, err
		}
	}
	owner := make([]int, c.Nodes)
	for i := range owner {
		r := c.Owner(i)
		if r < 0 || r >= k {
			return nil, fmt.Errorf("node %d is owned by rank %d: want a rank of [0, %d)", i, r, k)
		}
		owner[i] = r
	}
	return owner, nil
}

func (c *Config) peerTimeout() time.Duration {
	if c.PeerTimeout == 0 {
		return DefaultPeerTimeout
	}
	return c.PeerTimeout
}

func (c *Config) chunkFloats() int {
	if c.ChunkBytes == 0 {
		return wire.DefaultChunkBytes / 4
	}
	return c.ChunkBytes / 4
}

func (c *Config) logf() func(string, ...any) {
	if c.Logf == nil {
		return log.Printf
	}
	return c.Logf
}

// Loopback reports whether a host:port address names a loopback host:
// "localhost", an address of 127.0.0.0/8 or ::1.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
