package transport

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math"
	"math/big"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/decentral/cluster/certs"

	"github.com/gtstorm/gtstorm/decentral"
)

// testCA is a throwaway certificate authority.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

var serial atomic.Int64

func nextSerial() *big.Int { return big.NewInt(serial.Add(1)) }

func newCA(t testing.TB, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns the PEM certificate and key of rank r, as decentral/cluster/certs
// issues them: CommonName gtstorm-rank-R, URI SAN gtstorm://rank/R, for
// both server and client authentication.
func (ca *testCA) issue(t testing.TB, r int) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(certs.RankURI(r).String())
	tmpl := &x509.Certificate{
		SerialNumber: nextSerial(), Subject: pkix.Name{CommonName: certs.CommonName(r)},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		URIs:        []*url.URL{u},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
}

// tls returns rank r's TLS configuration.
func (ca *testCA) tls(t testing.TB, r int) *tls.Config {
	t.Helper()
	c, k := ca.issue(t, r)
	cfg, err := NewTLS(ca.pem, c, k)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// logBuf collects Logf lines.
type logBuf struct {
	mu    sync.Mutex
	lines []string
}

func (l *logBuf) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// testRanks is a run's ranks on loopback, with their logs.
type testRanks struct {
	xs   []*Exchange
	logs []*logBuf
}

// newCluster starts ranks Exchanges on 127.0.0.1 ports chosen by the
// kernel; tune adjusts rank r's configuration (TLS, owner, timeouts) and
// defaults to an insecure one; after, if given, runs between New and Start.
// The ranks are closed when the test ends.
func newCluster(t testing.TB, ranks, nodes int, owner func(int) int, tune func(r int, c *Config), after ...func(r int, x *Exchange)) *testRanks {
	t.Helper()
	return newClusterOn(t, listeners(t, ranks), nodes, owner, tune, after...)
}

// listeners returns n listeners on 127.0.0.1 ports chosen by the kernel.
func listeners(t testing.TB, n int) []net.Listener {
	t.Helper()
	lns := make([]net.Listener, n)
	for r := range lns {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns[r] = ln
	}
	return lns
}

// newClusterOn is newCluster with rank r listening on lns[r].
func newClusterOn(t testing.TB, lns []net.Listener, nodes int, owner func(int) int, tune func(r int, c *Config), after ...func(r int, x *Exchange)) *testRanks {
	t.Helper()
	addrs := make([]string, len(lns))
	for r, ln := range lns {
		addrs[r] = ln.Addr().String()
	}
	cl := &testRanks{}
	for r := range lns {
		lb := &logBuf{}
		cfg := Config{
			Rank: r, Addrs: addrs, Owner: owner, Nodes: nodes, Insecure: true,
			PeerTimeout: 10 * time.Second, ConfigHash: "sha256:test", Logf: lb.logf,
		}
		if tune != nil {
			tune(r, &cfg)
		}
		x, err := NewWithListener(cfg, lns[r])
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range after {
			f(r, x)
		}
		if err := x.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { x.Close() })
		cl.xs, cl.logs = append(cl.xs, x), append(cl.logs, lb)
	}
	return cl
}

// vec returns vector k of node i in round t: p floats of every finite bit
// pattern (signs, zeros, subnormals), a function of (i, t, k) alone.
func vec(i, t, k, p int) []float32 {
	v := make([]float32, p)
	s := uint64(i)<<40 ^ uint64(t)<<8 ^ uint64(k) ^ 0x9e3779b97f4a7c15
	for n := range v {
		s += 0x9e3779b97f4a7c15
		z := (s ^ s>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		bits := uint32(z ^ z>>31)
		if bits&0x7f800000 == 0x7f800000 {
			bits &^= 0x00800000 // finite: clear an exponent bit
		}
		v[n] = math.Float32frombits(bits)
	}
	return v
}

// runRank plays rounds [first, first+rounds) of topo on x with shares
// vectors of p floats per node, as the optimizer calls it, and checks that
// every Recv returns, bit for bit, what the sender sent and that Send counts
// bytes as decentral.MemExchange does. delay, if not nil, runs before each
// round.
func runRank(ctx context.Context, x *Exchange, topo graph.Topology, shares, p, first, rounds int, delay func(t int)) error {
	for t := first; t < first+rounds; t++ {
		if delay != nil {
			delay(t)
		}
		w := topo.Mixing(t)
		if err := x.BeginRound(t, w, shares); err != nil {
			return err
		}
		mem := decentral.NewMemExchange(w.Graph())
		for _, i := range x.Local() {
			vecs := make([][]float32, shares)
			for k := range vecs {
				vecs[k] = vec(i, t, k, p)
			}
			n, err := x.Send(i, w.To(i), vecs)
			if err != nil {
				return err
			}
			if want, _ := mem.Send(i, w.To(i), vecs); n != want {
				return fmt.Errorf("rank %d round %d: Send(%d) counted %d bytes, MemExchange %d", x.cfg.Rank, t, i, n, want)
			}
		}
		if err := x.Wait(ctx); err != nil {
			return err
		}
		// Recv from two goroutines, as the optimizer's workers do.
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for g := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n, i := range x.Local() {
					if n%2 != g {
						continue
					}
					for _, j := range w.From(i) {
						if err := sameVecs(x.Recv(i, j), j, t, shares, p); err != nil {
							errs[g] = fmt.Errorf("rank %d round %d: Recv(%d, %d): %w", x.cfg.Rank, t, i, j, err)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func sameVecs(got [][]float32, j, t, shares, p int) error {
	if len(got) != shares {
		return fmt.Errorf("%d vectors, want %d", len(got), shares)
	}
	for k := range got {
		want := vec(j, t, k, p)
		if len(got[k]) != p {
			return fmt.Errorf("vector %d has %d floats, want %d", k, len(got[k]), p)
		}
		for n := range want {
			if math.Float32bits(got[k][n]) != math.Float32bits(want[n]) {
				return fmt.Errorf("vector %d float %d = %#x, want %#x", k, n, math.Float32bits(got[k][n]), math.Float32bits(want[n]))
			}
		}
	}
	return nil
}

// runAll runs every rank of cl as runRank does, concurrently, and returns
// each rank's error.
func (cl *testRanks) runAll(ctx context.Context, topo graph.Topology, shares, p, first, rounds int, delay func(r, t int)) []error {
	errs := make([]error, len(cl.xs))
	var wg sync.WaitGroup
	for r, x := range cl.xs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var d func(int)
			if delay != nil {
				d = func(t int) { delay(r, t) }
			}
			errs[r] = runRank(ctx, x, topo, shares, p, first, rounds, d)
		}()
	}
	wg.Wait()
	return errs
}

// static is the Topology of one mixing matrix; it panics on err.
func static(w *graph.Mixing, err error) graph.Topology {
	if err != nil {
		panic(err)
	}
	return graph.Static{W: w}
}

// must returns v; it panics on err.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
