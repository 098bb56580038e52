// Package certs makes and loads the certificates with which the ranks of a
// multi-process run (one process each, hosting a set of nodes) authenticate
// one another over mutual TLS.
//
// One folder holds a run's material: ca.pem and ca-key.pem, a self-signed
// ECDSA P-256 certificate authority, and for each rank R the pair
// rank-R.pem and rank-R-key.pem, a certificate signed by the CA that names
// the rank twice: its Subject CommonName is "gtstorm-rank-R" and it carries
// the URI SAN "gtstorm://rank/R". A rank needs only ca.pem and its own
// pair; ca-key.pem stays with whoever generated the folder.
//
// A peer is accepted when its certificate chains to the CA and its rank is
// the one expected (see VerifyPeer); host names matter only to the client,
// which checks them against the DNS and IP SANs like any TLS client.
package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gtstorm/gtstorm/internal/atomicfile"
)

// Names of the files in a certificates folder.
const (
	CAFile    = "ca.pem"     // the CA's certificate
	CAKeyFile = "ca-key.pem" // the CA's private key (mode 0600)
)

// Validity periods of what Generate writes. Both start an hour before its
// now, to tolerate clocks that differ a little between machines.
const (
	CAValidity   = 10 * 365 * 24 * time.Hour
	LeafValidity = 365 * 24 * time.Hour
	clockSkew    = time.Hour
)

// DefaultHosts are the host names and addresses every rank's certificate
// carries, so that ranks on one machine can reach one another by any of
// them.
var DefaultHosts = []string{"localhost", "127.0.0.1", "::1"}

// CertFile returns the name of rank's certificate file, rank-R.pem.
func CertFile(rank int) string { return fmt.Sprintf("rank-%d.pem", rank) }

// KeyFile returns the name of rank's private key file, rank-R-key.pem.
func KeyFile(rank int) string { return fmt.Sprintf("rank-%d-key.pem", rank) }

// CommonName returns the Subject CommonName of rank's certificate.
func CommonName(rank int) string { return fmt.Sprintf("gtstorm-rank-%d", rank) }

// RankURI returns the URI SAN of rank's certificate, gtstorm://rank/R.
func RankURI(rank int) *url.URL {
	return &url.URL{Scheme: "gtstorm", Host: "rank", Path: "/" + strconv.Itoa(rank)}
}

// rankFileRE matches the names of rank files, which Overwrite replaces.
var rankFileRE = regexp.MustCompile(`^rank-[0-9]+(-key)?\.pem$`)

// ExistsError is a folder that already holds certificates, which Generate
// does not replace unless Options.Overwrite is set.
type ExistsError struct {
	Dir  string
	File string // the file that shows it
}

func (e *ExistsError) Error() string {
	return fmt.Sprintf("%s already holds certificates (%s)", e.Dir, e.File)
}

// Options are GenerateWith's settings.
type Options struct {
	// Hosts are DNS names or IP addresses added to every rank's
	// certificate, after DefaultHosts.
	Hosts []string
	// Now is the start of the validity periods; zero means time.Now().
	Now time.Time
	// Overwrite replaces the certificates of a folder that holds some;
	// rank files beyond the new rank count are removed.
	Overwrite bool
}

// Generate writes a new CA and ranks certificate pairs into dir (created if
// need be), valid from now, each naming DefaultHosts and hosts. It refuses
// a folder that already holds certificates with an *ExistsError.
func Generate(dir string, ranks int, hosts []string, now time.Time) error {
	return GenerateWith(dir, ranks, Options{Hosts: hosts, Now: now})
}

// MaxRanks bounds the ranks GenerateWith makes certificates for: the
// most ranks a launcher's environment may declare (cluster.MaxRanks), two
// files each. A larger count is refused before anything is written.
const MaxRanks = 1 << 16

// GenerateWith is Generate with every setting, Overwrite among them. The
// set is made in a temporary folder beside dir and renamed into place when
// dir does not exist; otherwise its files are moved into dir once all are
// written, the rank files first and ca.pem last, so that an interrupted
// call leaves dir as it was, or holding every new rank pair before its CA
// (which Load refuses, naming the mismatch). ranks must be 1 to MaxRanks.
func GenerateWith(dir string, ranks int, opt Options) error {
	if ranks < 1 || ranks > MaxRanks {
		return fmt.Errorf("%d ranks: want 1 to %d", ranks, MaxRanks)
	}
	dns, ips, err := sans(opt.Hosts)
	if err != nil {
		return err
	}
	now := opt.Now
	if now.IsZero() {
		now = time.Now()
	}
	var stale []string
	_, statErr := os.Stat(dir)
	switch {
	case statErr == nil:
		if stale, err = existing(dir); err != nil {
			return err
		}
		if len(stale) > 0 && !opt.Overwrite {
			return &ExistsError{Dir: dir, File: filepath.Join(dir, stale[0])}
		}
	case errors.Is(statErr, fs.ErrNotExist):
	default:
		return fmt.Errorf("the certificates folder: %w", statErr)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return fmt.Errorf("create the certificates folder: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(filepath.Clean(dir))+".tmp-")
	if err != nil {
		return fmt.Errorf("create the certificates folder: %w", err)
	}
	defer os.RemoveAll(tmp) // gone once renamed into place, else the partial set
	if err := writeSet(tmp, ranks, dns, ips, now); err != nil {
		return err
	}
	if statErr != nil { // dir did not exist: the whole set at once
		if err := os.Rename(tmp, dir); err != nil {
			return fmt.Errorf("move the certificates into place: %w", err)
		}
		return nil
	}
	// dir exists, perhaps with other files: the new files over the old,
	// the CA last, then the rank files past the new count removed.
	names := make([]string, 0, 2*ranks+2)
	for r := range ranks {
		names = append(names, CertFile(r), KeyFile(r))
	}
	for _, name := range append(names, CAKeyFile, CAFile) {
		if err := os.Rename(filepath.Join(tmp, name), filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("move the certificates into place: %w", err)
		}
	}
	for _, name := range stale {
		if n, ok := rankOfFile(name); ok && n >= ranks {
			if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove a stale rank file: %w", err)
			}
		}
	}
	return nil
}

// writeSet writes a new CA and ranks certificate pairs, each naming the
// DNS names dns and addresses ips and valid from now, into dir: the rank
// files first, the CA last.
func writeSet(dir string, ranks int, dns []string, ips []net.IP, now time.Time) error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("generate the CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "gtstorm CA", Organization: []string{"gtstorm"}},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(CAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, ca, err := sign(caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return fmt.Errorf("sign the CA certificate: %w", err)
	}
	for r := 0; r < ranks; r++ {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return fmt.Errorf("generate rank %d's key: %w", r, err)
		}
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: CommonName(r), Organization: []string{"gtstorm"}},
			NotBefore:   now.Add(-clockSkew),
			NotAfter:    now.Add(LeafValidity),
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
			DNSNames:    dns,
			IPAddresses: ips,
			URIs:        []*url.URL{RankURI(r)},
		}
		der, _, err := sign(tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			return fmt.Errorf("sign rank %d's certificate: %w", r, err)
		}
		if err := writePair(dir, CertFile(r), der, KeyFile(r), key); err != nil {
			return err
		}
	}
	return writePair(dir, CAFile, caDER, CAKeyFile, caKey)
}

// sign creates the certificate tmpl signed by parent's key, with a random
// 128-bit serial number.
func sign(tmpl, parent *x509.Certificate, pub *ecdsa.PublicKey, priv *ecdsa.PrivateKey) ([]byte, *x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, priv)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return der, cert, err
}

// sans splits DefaultHosts and hosts into DNS names and IP addresses,
// dropping repeats.
func sans(hosts []string) ([]string, []net.IP, error) {
	var dns []string
	var ips []net.IP
	seen := map[string]bool{}
	for _, h := range append(append([]string(nil), DefaultHosts...), hosts...) {
		h = strings.TrimSpace(h)
		if ip := net.ParseIP(strings.Trim(h, "[]")); ip != nil {
			if !seen[ip.String()] {
				seen[ip.String()] = true
				ips = append(ips, ip)
			}
			continue
		}
		if h == "" || strings.ContainsAny(h, ":/ \t*") {
			return nil, nil, fmt.Errorf("host %q: want a DNS name or an IP address, without a port", h)
		}
		h = strings.ToLower(strings.TrimSuffix(h, "."))
		if !seen[h] {
			seen[h] = true
			dns = append(dns, h)
		}
	}
	return dns, ips, nil
}

// existing lists the certificate files in dir: ca.pem first if present,
// then ca-key.pem and rank files, sorted by name.
func existing(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read the certificates folder: %w", err)
	}
	var names []string
	for _, e := range entries {
		switch n := e.Name(); {
		case n == CAFile:
			names = append([]string{n}, names...)
		case n == CAKeyFile || rankFileRE.MatchString(n):
			names = append(names, n)
		}
	}
	return names, nil
}

// rankOfFile returns the rank a rank file belongs to.
func rankOfFile(name string) (int, bool) {
	if !rankFileRE.MatchString(name) {
		return 0, false
	}
	s := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(name, "rank-"), ".pem"), "-key")
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// writePair writes a certificate (mode 0644) and its key (mode 0600).
func writePair(dir, certName string, der []byte, keyName string, key *ecdsa.PrivateKey) error {
	pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("encode %s: %w", keyName, err)
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8})
	if err := atomicfile.WriteBytesMode(filepath.Join(dir, keyName), keyPEM, 0o600); err != nil {
		return err
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return atomicfile.WriteBytes(filepath.Join(dir, certName), certPEM)
}
