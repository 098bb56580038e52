package certs

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

const ioTimeout = 10 * time.Second

func load(t *testing.T, dir string, rank int, at time.Time) *Material {
	t.Helper()
	m, err := LoadAt(dir, rank, at)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// handshake connects a client with ccfg to a server with scfg over
// loopback TCP. After its handshake the server writes one byte, which the
// client reads: under TLS 1.3 the client's handshake ends before the
// server has checked the client's certificate, so the read is where a
// refusal by the server shows.
func handshake(t *testing.T, scfg, ccfg *tls.Config) (serverErr, clientErr error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(ioTimeout))
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(ioTimeout))
		tc := tls.Server(c, scfg)
		if err = tc.HandshakeContext(ctx); err == nil {
			_, err = tc.Write([]byte{1})
		}
		done <- err
	}()

	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(ioTimeout))
	if ccfg.ServerName == "" {
		ccfg.ServerName = ServerName(ln.Addr().String())
	}
	tc := tls.Client(c, ccfg)
	if clientErr = tc.HandshakeContext(ctx); clientErr == nil {
		_, clientErr = io.ReadFull(tc, make([]byte, 1))
	}
	c.Close()
	return <-done, clientErr
}

func TestHandshake(t *testing.T) {
	now := time.Now()
	dir := generate(t, 3, now)
	r0, r1 := load(t, dir, 0, now), load(t, dir, 1, now)

	var seen []int
	scfg := r0.ServerTLS(func(rank int) error {
		seen = append(seen, rank)
		return nil
	})
	serr, cerr := handshake(t, scfg, r1.ClientTLS(0))
	if serr != nil || cerr != nil {
		t.Fatalf("rank 1 → rank 0: server %v, client %v", serr, cerr)
	}
	if len(seen) != 1 || seen[0] != 1 {
		t.Errorf("server's verify saw ranks %v, want [1]", seen)
	}
	// Any rank, a nil verify, and the host name "localhost".
	ccfg := r0.ClientTLS(AnyRank)
	ccfg.ServerName = "localhost"
	if serr, cerr := handshake(t, r1.ServerTLS(nil), ccfg); serr != nil || cerr != nil {
		t.Fatalf("rank 0 → rank 1 as localhost: server %v, client %v", serr, cerr)
	}
	if cfg := r0.ServerTLS(nil); cfg.MinVersion != tls.VersionTLS13 || cfg.ClientAuth != tls.RequireAndVerifyClientCert || cfg.InsecureSkipVerify {
		t.Errorf("ServerTLS: %+v", cfg)
	}
	if cfg := r0.ClientTLS(1); cfg.MinVersion != tls.VersionTLS13 || cfg.InsecureSkipVerify {
		t.Errorf("ClientTLS: %+v", cfg)
	}
}

// TestHandshakeDialer checks that tls.Dialer fills in the ServerName that
// ClientTLS leaves empty.
func TestHandshakeDialer(t *testing.T) {
	now := time.Now()
	dir := generate(t, 2, now)
	r0, r1 := load(t, dir, 0, now), load(t, dir, 1, now)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ln = tls.NewListener(ln, r0.ServerTLS(nil))
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(ioTimeout))
		c.Write([]byte{1})
	}()
	ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
	defer cancel()
	d := tls.Dialer{Config: r1.ClientTLS(0)}
	c, err := d.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("tls.Dialer: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(ioTimeout))
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		t.Fatalf("read: %v", err)
	}
}

func TestHandshakeWrongRank(t *testing.T) {
	now := time.Now()
	dir := generate(t, 3, now)
	r0, r1 := load(t, dir, 0, now), load(t, dir, 1, now)

	// The client expects rank 2 and finds rank 0.
	serr, cerr := handshake(t, r0.ServerTLS(nil), r1.ClientTLS(2))
	var re *RankError
	if !errors.As(cerr, &re) || re.Got != 0 || re.Want != 2 {
		t.Fatalf("client error %v, want a RankError 0 vs 2", cerr)
	}
	if msg := cerr.Error(); !strings.Contains(msg, "rank 0") || !strings.Contains(msg, "want rank 2") {
		t.Errorf("client error %q does not name both ranks", msg)
	}
	if serr == nil {
		t.Error("the server completed a connection the client refused")
	}

	// The server expects rank 2 and finds rank 1.
	want2 := func(rank int) error {
		if rank != 2 {
			return &RankError{Got: rank, Want: 2}
		}
		return nil
	}
	serr, cerr = handshake(t, r0.ServerTLS(want2), r1.ClientTLS(0))
	if !errors.As(serr, &re) || re.Got != 1 || re.Want != 2 {
		t.Fatalf("server error %v, want a RankError 1 vs 2", serr)
	}
	if msg := serr.Error(); !strings.Contains(msg, "client of rank 1 refused") || !strings.Contains(msg, "want rank 2") {
		t.Errorf("server error %q does not name both ranks", msg)
	}
	if cerr == nil {
		t.Error("the client read from a connection the server refused")
	}
}

func TestHandshakeRefused(t *testing.T) {
	now := time.Now()
	dirA, dirB := generate(t, 2, now), generate(t, 2, now)
	a0, a1 := load(t, dirA, 0, now), load(t, dirA, 1, now)
	b0, b1 := load(t, dirB, 0, now), load(t, dirB, 1, now)
	past := now.Add(-2 * LeafValidity)
	dirOld := generate(t, 2, past)
	old0, old1 := load(t, dirOld, 0, past), load(t, dirOld, 1, past)

	// lax is a client that presents m's certificate and trusts pool,
	// with no check of its own; laxServer a server that asks for any
	// client certificate and checks none: peers that do not refuse first,
	// so that the refusal tested is the other side's.
	lax := func(m *Material, pool *Material) *tls.Config {
		return &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{m.Cert}, RootCAs: pool.Pool,
			Time: func() time.Time { return m.Cert.Leaf.NotBefore.Add(time.Hour) }}
	}
	laxServer := func(m *Material) *tls.Config {
		return &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{m.Cert}, ClientAuth: tls.RequireAnyClientCert}
	}
	for _, tc := range []struct {
		name       string
		scfg, ccfg *tls.Config
		refuser    string // "server" or "client": the side that must name the fault
		want       string
	}{
		{"client of another CA", a0.ServerTLS(nil), lax(b1, a1), "server", "unknown authority"},
		{"server of another CA", laxServer(b0), a1.ClientTLS(0), "client", "unknown authority"},
		{"both of another CA", b0.ServerTLS(nil), a1.ClientTLS(0), "client", "unknown authority"},
		{"expired client", old0.ServerTLS(nil), lax(old1, old0), "server", "expired"},
		{"expired server", laxServer(old0), old1.ClientTLS(0), "client", "expired"},
		{"host not in the SANs", a0.ServerTLS(nil), withServerName(a1.ClientTLS(0), "example.org"), "client", "example.org"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			serr, cerr := handshake(t, tc.scfg, tc.ccfg)
			if serr == nil || cerr == nil {
				t.Fatalf("server %v, client %v: want both to fail", serr, cerr)
			}
			err := serr
			if tc.refuser == "client" {
				err = cerr
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s error %q, want %q", tc.refuser, err, tc.want)
			}
		})
	}
}

func withServerName(cfg *tls.Config, name string) *tls.Config {
	cfg.ServerName = name
	return cfg
}

func TestVerifyPeer(t *testing.T) {
	now := time.Now()
	dir := generate(t, 2, now)
	r0, r1 := load(t, dir, 0, now), load(t, dir, 1, now)
	other := load(t, generate(t, 2, now), 1, now)
	for _, tc := range []struct {
		name string
		peer *Material
		want int
		err  string
	}{
		{"match", r1, 1, ""},
		{"any", r0, AnyRank, ""},
		{"mismatch", r0, 1, "peer presented the certificate of rank 0, want rank 1"},
		{"other ca", other, 1, "unknown authority"},
		{"none", nil, 1, "no certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var state tls.ConnectionState
			if tc.peer != nil {
				state.PeerCertificates = append(state.PeerCertificates, tc.peer.Cert.Leaf)
			}
			err := VerifyPeer(r0.Pool, tc.want)(state)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Errorf("VerifyPeer: %v, want %q", err, tc.err)
			}
		})
	}
}

func TestServerName(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:9000": "127.0.0.1", "[::1]:9000": "::1", "node7:1": "node7", "localhost": "localhost", "[::1]": "::1",
	} {
		if got := ServerName(in); got != want {
			t.Errorf("ServerName(%q) = %q, want %q", in, got, want)
		}
	}
}
