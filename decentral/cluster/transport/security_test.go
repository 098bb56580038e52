package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/graph"
)

// failRound runs one round of topo on every rank of cl, which must fail on
// every rank, and returns the errors.
func failRound(t *testing.T, cl *testRanks, topo graph.Topology) []error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errs := cl.runAll(ctx, topo, 1, 64, 0, 1, nil)
	for r, err := range errs {
		if err == nil {
			t.Errorf("rank %d: the round succeeded, want an error", r)
		}
	}
	return errs
}

func wantIn(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%s does not mention %q:\n%s", what, sub, s)
		}
	}
}

// TestTLSRefusals: a peer with a certificate of another CA, one naming
// another rank, and a plaintext peer are refused, whichever side dials (the
// lower rank opens a link), and the refusing rank logs why.
func TestTLSRefusals(t *testing.T) {
	ca, stranger := newCA(t, "run CA"), newCA(t, "stranger CA")
	topo := static(graph.MetropolisHastings(must(graph.Path(2))))
	// The stranger trusts the run's CA, whose certificate is no secret, but
	// holds a certificate of its own CA.
	strangerTLS := func(r int) *tls.Config {
		sc, sk := stranger.issue(t, r)
		c, err := NewTLS(ca.pem, sc, sk)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := []struct {
		name string
		bad  int // the rank at fault: rank 0 dials rank 1
		tune func(r int, c *Config)
		log  []string // in the other rank's log
	}{
		{"stranger dials", 0, func(r int, c *Config) { c.TLS = strangerTLS(r) }, []string{"rank 1 refused a connection", "unknown authority"}},
		{"stranger is dialed", 1, func(r int, c *Config) { c.TLS = stranger.tls(t, r) }, []string{"rank 0 refused rank 1", "unknown authority"}},
		{"wrong rank dials", 0, func(r int, c *Config) {}, []string{"rank 1 refused a connection", "names rank 1, this rank"}},
		{"wrong rank is dialed", 1, func(r int, c *Config) {}, []string{"rank 0 refused rank 1", "names rank 0, want rank 1"}},
		{"plaintext dials", 0, func(r int, c *Config) { c.Insecure, c.TLS = true, nil }, []string{"rank 1 refused a connection", "tls"}},
		{"plaintext is dialed", 1, func(r int, c *Config) { c.Insecure, c.TLS = true, nil }, []string{"rank 0 refused rank 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each case waits out its own 1 s peer timeout
			good := 1 - tt.bad
			cl := newCluster(t, 2, 2, func(i int) int { return i }, func(r int, c *Config) {
				c.PeerTimeout, c.Insecure, c.TLS = time.Second, false, ca.tls(t, r)
				if r == tt.bad {
					tt.tune(r, c)
				}
			}, func(r int, x *Exchange) {
				if r == tt.bad && strings.HasPrefix(tt.name, "wrong rank") {
					x.cfg.TLS = ca.tls(t, good) // the rank presents its peer's certificate
				}
			})
			errs := failRound(t, cl, topo)
			if errs[good] != nil {
				wantIn(t, "the good rank's error", errs[good].Error(), fmt.Sprintf("rank %d at %s", tt.bad, cl.xs[good].cfg.Addrs[tt.bad]))
			}
			wantIn(t, "the good rank's log", cl.logs[good].String(), tt.log...)
			t.Logf("rank 0: %v\nrank 1: %v\nthe good rank's log:\n%s", errs[0], errs[1], cl.logs[good])
		})
	}
}

// TestTLSCertOfAnotherRankOnStream: a certificate of the run's CA naming a
// rank other than the one opening a link is refused when the link opens:
// rank 0, holding rank 2's certificate, opens its link to rank 1.
func TestTLSCertOfAnotherRankOnStream(t *testing.T) {
	ca := newCA(t, "run CA")
	owner := func(i int) int { return [3]int{1, 0, 2}[i] }
	g, err := graph.New(3, [][2]int{{0, 1}})
	if err != nil {
		t.Fatal(err)
	}
	topo := static(graph.MetropolisHastings(g))
	cl := newCluster(t, 3, 3, owner, func(r int, c *Config) {
		c.PeerTimeout, c.Insecure, c.TLS = time.Second, false, ca.tls(t, r)
	}, func(r int, x *Exchange) {
		if r == 0 {
			x.cfg.TLS = ca.tls(t, 2)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	errs := cl.runAll(ctx, topo, 1, 64, 0, 1, nil)
	if errs[0] == nil || errs[1] == nil {
		t.Fatalf("ranks 0 and 1 did not both fail: %v", errs)
	}
	wantIn(t, "rank 0's error", errs[0].Error(), "rank 1 at", "refused", "certificate of rank 2", "link of rank 0")
	wantIn(t, "rank 1's log", cl.logs[1].String(), "rank 1 refused a link", "certificate of rank 2")
	t.Logf("rank 0: %v\nrank 1: %v\nrank 1's log:\n%s", errs[0], errs[1], cl.logs[1])
}

// TestConfigHashMismatch: ranks with different config hashes refuse each
// other, naming both hashes.
func TestConfigHashMismatch(t *testing.T) {
	topo := static(graph.MetropolisHastings(must(graph.Path(2))))
	cl := newCluster(t, 2, 2, func(i int) int { return i }, func(r int, c *Config) {
		c.PeerTimeout = time.Second
		c.ConfigHash = []string{"sha256:aaaa", "sha256:bbbb"}[r]
	})
	errs := failRound(t, cl, topo)
	if errs[0] != nil {
		wantIn(t, "rank 0's error", errs[0].Error(), "config hash mismatch", "sha256:aaaa", "sha256:bbbb")
	}
	wantIn(t, "rank 1's log", cl.logs[1].String(), "config hash mismatch", "sha256:aaaa", "sha256:bbbb")
	t.Logf("rank 0: %v\nrank 1: %v\nrank 1's log:\n%s", errs[0], errs[1], cl.logs[1])
}

// TestConfigRefused: New refuses insecure transport off loopback, a missing
// TLS configuration and a certificate of another rank.
func TestConfigRefused(t *testing.T) {
	ca := newCA(t, "run CA")
	base := func() Config {
		return Config{Addrs: []string{"127.0.0.1:7000", "localhost:7001", "[::1]:7002"}, Owner: func(i int) int { return i % 3 }, Nodes: 3, Insecure: true}
	}
	tests := []struct {
		name string
		edit func(c *Config)
		want string
	}{
		{"insecure off loopback", func(c *Config) { c.Addrs[1] = "10.1.2.3:7001" }, "not a loopback address"},
		{"insecure on a host name", func(c *Config) { c.Addrs[2] = "node2.example:7002" }, "not a loopback address"},
		{"no TLS", func(c *Config) { c.Insecure = false }, "no TLS configuration"},
		{"another rank's certificate", func(c *Config) { c.Insecure, c.TLS = false, ca.tls(t, 2) }, "the certificate is rank 2's, this is rank 0"},
		{"owner out of range", func(c *Config) { c.Owner = func(int) int { return 3 } }, "owned by rank 3"},
		{"rank out of range", func(c *Config) { c.Rank = 3 }, "rank 3"},
		{"bad address", func(c *Config) { c.Addrs[0] = "127.0.0.1" }, "missing port"},
	}
	for _, tt := range tests {
		c := base()
		tt.edit(&c)
		if _, err := New(c); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: New: %v, want an error with %q", tt.name, err, tt.want)
		}
	}
	if _, err := New(base()); err != nil {
		t.Errorf("insecure on loopback: %v", err)
	}
}

// TestRankOf checks the names a rank certificate must carry.
func TestRankOf(t *testing.T) {
	cert := func(cn string, uris ...string) *x509.Certificate {
		c := &x509.Certificate{}
		c.Subject.CommonName = cn
		for _, s := range uris {
			u, _ := url.Parse(s)
			c.URIs = append(c.URIs, u)
		}
		return c
	}
	tests := []struct {
		c    *x509.Certificate
		want int
	}{
		{cert("gtstorm-rank-3", "gtstorm://rank/3"), 3},
		{cert("gtstorm-rank-0", "spiffe://x/y", "gtstorm://rank/0"), 0},
		{cert("gtstorm-rank-3"), -1},
		{cert("gtstorm-rank-4", "gtstorm://rank/3"), -1},
		{cert("gtstorm-rank-3", "gtstorm://rank/3", "gtstorm://rank/4"), -1},
		{cert("gtstorm-rank-03", "gtstorm://rank/03"), -1},
		{cert("gtstorm-rank--1", "gtstorm://rank/-1"), -1},
	}
	for _, tt := range tests {
		r, err := RankOf(tt.c)
		if r != tt.want || (err == nil) != (tt.want >= 0) {
			t.Errorf("RankOf(%q %v) = %d, %v; want %d", tt.c.Subject.CommonName, tt.c.URIs, r, err, tt.want)
		}
	}
	if _, err := NewTLS([]byte("no pem"), nil, nil); err == nil {
		t.Error("NewTLS without a CA accepted")
	}
}
