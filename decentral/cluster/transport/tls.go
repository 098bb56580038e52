package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"

	"github.com/gtstorm/gtstorm/decentral/cluster/certs"

	"google.golang.org/grpc/credentials"
)

// A rank's certificate names the rank twice, Subject CommonName
// "gtstorm-rank-R" and URI SAN "gtstorm://rank/R", as package certs issues
// it; RankOf reads it back.

// RankOf returns the rank a certificate names (see [certs.RankOf]), or -1
// and the reason it names none.
func RankOf(cert *x509.Certificate) (int, error) {
	r, err := certs.RankOf(cert)
	if err != nil {
		return -1, err
	}
	return r, nil
}

// TLSOf returns the TLS configuration of the rank whose material m holds:
// its certificate, and the run's CA to check every peer against; the
// Exchange adds the check of the rank.
func TLSOf(m *certs.Material) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{m.Cert},
		RootCAs:      m.Pool,
		ClientCAs:    m.Pool,
	}
}

// NewTLS returns the TLS configuration of a rank from PEM data: the run's CA
// certificate, the rank's certificate (its chain may follow) and its private
// key. Both sides of every connection present a certificate and check the
// other's against the CA; the Exchange adds the check of the rank.
func NewTLS(caPEM, certPEM, keyPEM []byte) (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("tls: no CA certificate in the CA PEM data")
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("tls: rank certificate and key: %w", err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS13,
	}, nil
}

// checkTLS checks that c has a certificate naming rank and a CA.
func checkTLS(c *tls.Config, rank int) error {
	if c.RootCAs == nil {
		return errors.New("TLS configuration without a CA (RootCAs)")
	}
	if len(c.Certificates) == 0 {
		return errors.New("TLS configuration without a certificate")
	}
	leaf := c.Certificates[0].Leaf
	if leaf == nil {
		if len(c.Certificates[0].Certificate) == 0 {
			return errors.New("TLS configuration with an empty certificate")
		}
		var err error
		if leaf, err = x509.ParseCertificate(c.Certificates[0].Certificate[0]); err != nil {
			return fmt.Errorf("TLS certificate: %w", err)
		}
	}
	r, err := RankOf(leaf)
	if err != nil {
		return fmt.Errorf("TLS configuration: %w", err)
	}
	if r != rank {
		return fmt.Errorf("TLS configuration: the certificate is rank %d's, this is rank %d", r, rank)
	}
	return nil
}

// serverTLS returns the server side of c: client certificates required,
// verified against the CA and naming another rank of the run.
func serverTLS(c *tls.Config, self, ranks int) *tls.Config {
	s := c.Clone()
	s.ClientAuth = tls.RequireAndVerifyClientCert
	if s.ClientCAs == nil {
		s.ClientCAs = s.RootCAs
	}
	s.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("client sent no certificate")
		}
		r, err := RankOf(cs.PeerCertificates[0])
		switch {
		case err != nil:
			return err
		case r == self:
			return fmt.Errorf("client certificate names rank %d, this rank", r)
		case r >= ranks:
			return fmt.Errorf("client certificate names rank %d, want a rank of [0, %d)", r, ranks)
		}
		return nil
	}
	return s
}

// clientTLS returns the client side of c for dialing rank want: the server's
// certificate must chain to the CA and name rank want. Host names are not
// checked: ranks are known by their certificates, not their addresses.
func clientTLS(c *tls.Config, want int) *tls.Config {
	s := c.Clone()
	roots := s.RootCAs
	if s.GetClientCertificate == nil && len(s.Certificates) > 0 {
		// Present the rank's certificate even to a server whose CA list does
		// not name its issuer, so that the server's refusal says why.
		cert := &s.Certificates[0]
		s.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	s.InsecureSkipVerify = true // replaced by VerifyConnection's checks
	s.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("server sent no certificate")
		}
		inter := x509.NewCertPool()
		for _, ic := range cs.PeerCertificates[1:] {
			inter.AddCert(ic)
		}
		leaf := cs.PeerCertificates[0]
		if _, err := leaf.Verify(x509.VerifyOptions{
			Roots: roots, Intermediates: inter,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}); err != nil {
			return fmt.Errorf("server certificate: %w", err)
		}
		r, err := RankOf(leaf)
		if err != nil {
			return err
		}
		if r != want {
			return fmt.Errorf("server certificate names rank %d, want rank %d", r, want)
		}
		return nil
	}
	return s
}

// logCreds wraps transport credentials to report refused handshakes: on the
// server through Logf, on the client also as the dialed rank's last error.
type logCreds struct {
	credentials.TransportCredentials
	x    *rankConn
	rank int // the rank dialed, or -1 on the server
}

func (c logCreds) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	out, info, err := c.TransportCredentials.ServerHandshake(conn)
	if err != nil {
		c.x.refusal("server: "+err.Error(), "transport: rank %d refused a connection from %s: %v", c.x.cfg.Rank, conn.RemoteAddr(), err)
	}
	return out, info, err
}

func (c logCreds) ClientHandshake(ctx context.Context, authority string, conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	out, info, err := c.TransportCredentials.ClientHandshake(ctx, authority, conn)
	if err != nil && ctx.Err() == nil {
		c.x.refusal(fmt.Sprintf("client %d: %v", c.rank, err), "transport: rank %d refused rank %d at %s: %v", c.x.cfg.Rank, c.rank, conn.RemoteAddr(), err)
		c.x.peerError(c.rank, fmt.Errorf("handshake: %w", err))
	}
	return out, info, err
}

func (c logCreds) Clone() credentials.TransportCredentials {
	return logCreds{c.TransportCredentials.Clone(), c.x, c.rank}
}

// certRank returns the rank named by the TLS certificate of a stream's peer,
// or -1 without TLS.
func certRank(info credentials.AuthInfo) (int, error) {
	ti, ok := info.(credentials.TLSInfo)
	if !ok {
		return -1, nil
	}
	if len(ti.State.PeerCertificates) == 0 {
		return -1, errors.New("peer sent no certificate")
	}
	return RankOf(ti.State.PeerCertificates[0])
}
