package certs

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Faults that a *FileError wraps, for errors.Is.
var (
	ErrMissing     = errors.New("missing")
	ErrNotPEM      = errors.New("not PEM")
	ErrNotCert     = errors.New("not a valid certificate")
	ErrNotKey      = errors.New("not a valid private key")
	ErrWrongKey    = errors.New("wrong key")
	ErrExpired     = errors.New("expired")
	ErrNotYetValid = errors.New("not yet valid")
	ErrNotCA       = errors.New("not a CA certificate")
	ErrNotSignedCA = errors.New("not signed by the CA")
	ErrWrongRank   = errors.New("wrong rank")
	ErrNoRank      = errors.New("no valid rank")
)

// FileError is a file of a certificates folder that Load cannot use: File
// is its path, Err the fault (wrapping one of the Err… values above).
type FileError struct {
	File string
	Err  error
}

func (e *FileError) Error() string { return e.File + ": " + e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// Material is what one rank needs to take part in a run: the CA and the
// rank's own certificate and key.
type Material struct {
	Rank int
	CA   *x509.Certificate
	Pool *x509.CertPool  // holds CA only
	Cert tls.Certificate // the rank's certificate, its Leaf set, and key
}

// Load reads ca.pem and rank's pair from dir and checks them as of now.
// Its errors are *FileError naming the file and the fault: missing, not
// PEM, not a certificate or key, a key that does not match the
// certificate, a certificate expired or not yet valid, not signed by the
// CA, or of another rank.
func Load(dir string, rank int) (*Material, error) {
	return LoadAt(dir, rank, time.Now())
}

// LoadAt is Load with the checks of the validity periods done as of now.
func LoadAt(dir string, rank int, now time.Time) (*Material, error) {
	if rank < 0 {
		return nil, fmt.Errorf("rank %d: want 0 or more", rank)
	}
	caPath := filepath.Join(dir, CAFile)
	ca, err := readCert(caPath, now)
	if err != nil {
		return nil, err
	}
	if !ca.IsCA || !ca.BasicConstraintsValid {
		return nil, &FileError{caPath, fmt.Errorf("%w (its basic constraints do not allow signing)", ErrNotCA)}
	}
	certPath := filepath.Join(dir, CertFile(rank))
	leaf, err := readCert(certPath, now)
	if err != nil {
		return nil, err
	}
	if err := leaf.CheckSignatureFrom(ca); err != nil {
		return nil, &FileError{certPath, fmt.Errorf("%w in %s: %w", ErrNotSignedCA, caPath, err)}
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	if _, err := leaf.Verify(x509.VerifyOptions{
		Roots:       pool,
		CurrentTime: now,
		KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}); err != nil {
		return nil, &FileError{certPath, fmt.Errorf("%w in %s: %w", ErrNotSignedCA, caPath, err)}
	}
	got, err := RankOf(leaf)
	if err != nil {
		return nil, &FileError{certPath, err}
	}
	if got != rank {
		return nil, &FileError{certPath, fmt.Errorf("%w: it is rank %d's certificate, want rank %d's", ErrWrongRank, got, rank)}
	}
	keyPath := filepath.Join(dir, KeyFile(rank))
	key, err := readKey(keyPath)
	if err != nil {
		return nil, err
	}
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(leaf.PublicKey) {
		return nil, &FileError{keyPath, fmt.Errorf("%w: it does not match the certificate in %s", ErrWrongKey, certPath)}
	}
	return &Material{
		Rank: rank,
		CA:   ca,
		Pool: pool,
		Cert: tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf},
	}, nil
}

// readFile reads path, turning its absence into ErrMissing.
func readFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &FileError{path, ErrMissing}
	}
	if err != nil {
		return nil, &FileError{path, fmt.Errorf("read: %w", err)}
	}
	return b, nil
}

// readCert reads the first CERTIFICATE block of path and checks that it is
// valid at now.
func readCert(path string, now time.Time) (*x509.Certificate, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, &FileError{path, fmt.Errorf("%w (want a CERTIFICATE block)", ErrNotPEM)}
	}
	if block.Type != "CERTIFICATE" {
		return nil, &FileError{path, fmt.Errorf("%w (want a CERTIFICATE block, found %s)", ErrNotPEM, block.Type)}
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, &FileError{path, fmt.Errorf("%w: %w", ErrNotCert, err)}
	}
	const day = "2006-01-02 15:04:05 MST"
	if now.After(cert.NotAfter) {
		return nil, &FileError{path, fmt.Errorf("%w on %s (now %s)", ErrExpired, cert.NotAfter.UTC().Format(day), now.UTC().Format(day))}
	}
	if now.Before(cert.NotBefore) {
		return nil, &FileError{path, fmt.Errorf("%w: valid from %s (now %s)", ErrNotYetValid, cert.NotBefore.UTC().Format(day), now.UTC().Format(day))}
	}
	return cert, nil
}

// readKey reads the private key in the first PEM block of path: PKCS #8,
// SEC 1 (EC) or PKCS #1 (RSA).
func readKey(path string) (crypto.Signer, error) {
	b, err := readFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, &FileError{path, fmt.Errorf("%w (want a PRIVATE KEY block)", ErrNotPEM)}
	}
	var key any
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, &FileError{path, fmt.Errorf("%w (want a PRIVATE KEY block, found %s)", ErrNotPEM, block.Type)}
	}
	if err != nil {
		return nil, &FileError{path, fmt.Errorf("%w: %w", ErrNotKey, err)}
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, &FileError{path, fmt.Errorf("%w: a %T cannot sign", ErrNotKey, key)}
	}
	return signer, nil
}
