package certs

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// AnyRank, as VerifyPeer's wantRank, accepts a peer of any rank.
const AnyRank = -1

// RankError is a peer whose certificate, though signed by the CA, is of
// another rank than the one expected.
type RankError struct {
	Got, Want int
}

func (e *RankError) Error() string {
	return fmt.Sprintf("peer presented the certificate of rank %d, want rank %d", e.Got, e.Want)
}

// RankOf returns the rank a certificate names in its URI SAN
// gtstorm://rank/R, checking that its CommonName, gtstorm-rank-R, agrees.
// Its errors wrap ErrNoRank.
func RankOf(cert *x509.Certificate) (int, error) {
	if cert == nil {
		return 0, fmt.Errorf("%w: no certificate", ErrNoRank)
	}
	rank, found := -1, 0
	for _, u := range cert.URIs {
		if u.Scheme != "gtstorm" {
			continue
		}
		found++
		s, ok := strings.CutPrefix(u.Path, "/")
		n, err := strconv.Atoi(s)
		if u.Host != "rank" || !ok || err != nil || n < 0 || strconv.Itoa(n) != s || u.RawQuery != "" || u.Fragment != "" {
			return 0, fmt.Errorf("%w: malformed URI %q in the certificate of %q (want gtstorm://rank/R)", ErrNoRank, u.String(), cert.Subject.CommonName)
		}
		rank = n
	}
	switch {
	case found == 0:
		return 0, fmt.Errorf("%w: the certificate of %q has no gtstorm://rank/R URI", ErrNoRank, cert.Subject.CommonName)
	case found > 1:
		return 0, fmt.Errorf("%w: the certificate of %q has %d gtstorm URIs, want one", ErrNoRank, cert.Subject.CommonName, found)
	case cert.Subject.CommonName != CommonName(rank):
		return 0, fmt.Errorf("%w: the certificate's CommonName %q disagrees with its URI %s", ErrNoRank, cert.Subject.CommonName, RankURI(rank))
	}
	return rank, nil
}

// peerRank verifies the peer's chain against ca (for server or client
// authentication) as of now and returns the rank of its certificate.
func peerRank(ca *x509.CertPool, cs tls.ConnectionState) (int, error) {
	if len(cs.PeerCertificates) == 0 {
		return 0, errors.New("peer presented no certificate")
	}
	leaf := cs.PeerCertificates[0]
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{
		Roots:         ca,
		Intermediates: inter,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}); err != nil {
		return 0, fmt.Errorf("peer certificate %q: %w", leaf.Subject.CommonName, err)
	}
	rank, err := RankOf(leaf)
	if err != nil {
		return 0, fmt.Errorf("peer certificate: %w", err)
	}
	return rank, nil
}

// VerifyPeer returns a check for tls.Config.VerifyConnection: the peer's
// certificate chain verifies against ca, for server or client
// authentication, and names wantRank, or any rank if wantRank is AnyRank
// (or another negative number). A certificate of another rank gives a
// *RankError naming the rank found and the one expected. Validity periods
// are checked as of time.Now(), whatever tls.Config.Time says.
func VerifyPeer(ca *x509.CertPool, wantRank int) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		rank, err := peerRank(ca, cs)
		if err != nil {
			return err
		}
		if wantRank >= 0 && rank != wantRank {
			return &RankError{Got: rank, Want: wantRank}
		}
		return nil
	}
}

// ServerTLS returns the configuration of m's rank accepting connections:
// TLS 1.3, its own certificate, and a client certificate required and
// verified against the CA. VerifyConnection then verifies the chain again
// and calls verify (if not nil) with the client's rank; an error from
// verify refuses the connection, wrapped in an error naming the rank.
func (m *Material) ServerTLS(verify func(rank int) error) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{m.Cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    m.Pool,
		VerifyConnection: func(cs tls.ConnectionState) error {
			rank, err := peerRank(m.Pool, cs)
			if err != nil {
				return err
			}
			if verify != nil {
				if err := verify(rank); err != nil {
					return fmt.Errorf("client of rank %d refused: %w", rank, err)
				}
			}
			return nil
		},
	}
}

// ClientTLS returns the configuration of m's rank connecting to wantRank
// (or AnyRank): TLS 1.3, its own certificate for the server to verify, the
// CA as the only root, and VerifyConnection = VerifyPeer(CA, wantRank).
//
// Verification is Go's ordinary one (InsecureSkipVerify is false), so the
// server's host name is checked too, against the DNS and IP SANs of its
// certificate (Generate puts localhost, 127.0.0.1 and ::1 there, and any
// hosts given). ServerName is left empty: tls.Dial and tls.Dialer fill it
// from the address they dial; a caller handing its own net.Conn to
// tls.Client must set it, for instance to ServerName(addr).
func (m *Material) ClientTLS(wantRank int) *tls.Config {
	return &tls.Config{
		MinVersion:       tls.VersionTLS13,
		Certificates:     []tls.Certificate{m.Cert},
		RootCAs:          m.Pool,
		VerifyConnection: VerifyPeer(m.Pool, wantRank),
	}
}

// ServerName returns the host of addr ("host:port", "[v6]:port" or a bare
// host), the value of tls.Config.ServerName when dialing it.
func ServerName(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return strings.Trim(addr, "[]")
}
