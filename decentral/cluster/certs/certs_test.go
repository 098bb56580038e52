package certs

import (
	"crypto/x509"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func generate(t *testing.T, ranks int, now time.Time, hosts ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := Generate(dir, ranks, hosts, now); err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return dir
}

func TestGenerateLoadRoundTrip(t *testing.T) {
	now := time.Now()
	dir := generate(t, 3, now, "node7.example.org", "10.1.2.3", "[fe80::1]")
	for r := 0; r < 3; r++ {
		m, err := Load(dir, r)
		if err != nil {
			t.Fatalf("Load rank %d: %v", r, err)
		}
		leaf := m.Cert.Leaf
		if m.Rank != r || leaf.Subject.CommonName != CommonName(r) {
			t.Errorf("rank %d: Rank %d, CN %q", r, m.Rank, leaf.Subject.CommonName)
		}
		if got, err := RankOf(leaf); err != nil || got != r {
			t.Errorf("RankOf rank %d = %d, %v", r, got, err)
		}
		if want := []string{"localhost", "node7.example.org"}; strings.Join(leaf.DNSNames, ",") != strings.Join(want, ",") {
			t.Errorf("DNS SANs %v, want %v", leaf.DNSNames, want)
		}
		var ips []string
		for _, ip := range leaf.IPAddresses {
			ips = append(ips, ip.String())
		}
		if got, want := strings.Join(ips, ","), "127.0.0.1,::1,10.1.2.3,fe80::1"; got != want {
			t.Errorf("IP SANs %s, want %s", got, want)
		}
		eku := leaf.ExtKeyUsage
		if len(eku) != 2 || eku[0] != x509.ExtKeyUsageServerAuth || eku[1] != x509.ExtKeyUsageClientAuth {
			t.Errorf("ExtKeyUsage %v, want server and client auth", eku)
		}
		if d := leaf.NotAfter.Sub(now); d < LeafValidity-time.Minute || d > LeafValidity+time.Minute {
			t.Errorf("leaf valid for %v after now, want %v", d, LeafValidity)
		}
		if d := m.CA.NotAfter.Sub(now); d < CAValidity-time.Minute || d > CAValidity+time.Minute {
			t.Errorf("CA valid for %v after now, want %v", d, CAValidity)
		}
		if !m.CA.IsCA || m.CA.Subject.String() != m.CA.Issuer.String() {
			t.Errorf("CA: IsCA %v, subject %s, issuer %s", m.CA.IsCA, m.CA.Subject, m.CA.Issuer)
		}
	}
	for name, want := range map[string]os.FileMode{
		CAFile: 0o644, CAKeyFile: 0o600, CertFile(2): 0o644, KeyFile(2): 0o600,
	} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode().Perm(), want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2+2*3 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("folder holds %v, want ca and 3 pairs only", names)
	}
}

func TestGenerateRefusesExisting(t *testing.T) {
	dir := generate(t, 3, time.Now())
	err := Generate(dir, 2, nil, time.Now())
	var ee *ExistsError
	if !errors.As(err, &ee) || ee.File != filepath.Join(dir, CAFile) {
		t.Fatalf("second Generate: %v, want an ExistsError naming %s", err, CAFile)
	}
	if !strings.Contains(err.Error(), filepath.Join(dir, CAFile)) {
		t.Errorf("error %q does not name the file", err)
	}
	// A folder with one rank file only is refused too.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, KeyFile(4)), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Generate(other, 1, nil, time.Now()); !errors.As(err, &ee) || ee.File != filepath.Join(other, KeyFile(4)) {
		t.Errorf("Generate over a rank file: %v", err)
	}

	old, err := Load(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := GenerateWith(dir, 2, Options{Overwrite: true}); err != nil {
		t.Fatalf("Generate with Overwrite: %v", err)
	}
	m, err := Load(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.CA.Equal(old.CA) {
		t.Error("Overwrite kept the old CA")
	}
	for _, name := range []string{CertFile(2), KeyFile(2)} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stale %s left after overwriting with 2 ranks (%v)", name, err)
		}
	}
}

func TestGenerateBadInput(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ranks int
		hosts []string
		want  string
	}{
		{"no ranks", 0, nil, "0 ranks: want 1 to"},
		{"host with port", 1, []string{"example.org:443"}, `host "example.org:443"`},
		{"empty host", 1, []string{""}, `host ""`},
		{"wildcard", 1, []string{"*.example.org"}, `host "*.example.org"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Generate(t.TempDir(), tc.ranks, tc.hosts, time.Now())
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Generate: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestRankOf(t *testing.T) {
	u := func(s string) *url.URL {
		p, err := url.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	cert := func(cn string, uris ...string) *x509.Certificate {
		c := &x509.Certificate{}
		c.Subject.CommonName = cn
		for _, s := range uris {
			c.URIs = append(c.URIs, u(s))
		}
		return c
	}
	for _, tc := range []struct {
		name string
		cert *x509.Certificate
		rank int
		want string // "" = no error
	}{
		{"ok", cert("gtstorm-rank-12", "https://example.org", "gtstorm://rank/12"), 12, ""},
		{"nil", nil, 0, "no certificate"},
		{"no uri", cert("gtstorm-rank-1"), 0, "has no gtstorm://rank/R URI"},
		{"cn disagrees", cert("gtstorm-rank-2", "gtstorm://rank/1"), 0, `CommonName "gtstorm-rank-2" disagrees`},
		{"two uris", cert("gtstorm-rank-1", "gtstorm://rank/1", "gtstorm://rank/2"), 0, "2 gtstorm URIs"},
		{"negative", cert("gtstorm-rank--1", "gtstorm://rank/-1"), 0, "malformed URI"},
		{"leading zero", cert("gtstorm-rank-01", "gtstorm://rank/01"), 0, "malformed URI"},
		{"other host", cert("gtstorm-rank-1", "gtstorm://node/1"), 0, "malformed URI"},
		{"not a number", cert("gtstorm-rank-x", "gtstorm://rank/x"), 0, "malformed URI"},
		{"query", cert("gtstorm-rank-1", "gtstorm://rank/1?x=2"), 0, "malformed URI"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RankOf(tc.cert)
			if tc.want == "" {
				if err != nil || got != tc.rank {
					t.Errorf("RankOf = %d, %v; want %d", got, err, tc.rank)
				}
				return
			}
			if !errors.Is(err, ErrNoRank) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("RankOf: %v, want ErrNoRank containing %q", err, tc.want)
			}
		})
	}
}

// TestGenerateCounts: a rank count out of 1..MaxRanks is refused before
// anything is written, and a set made into a new folder arrives whole (no
// temporary folder left beside it); one made into a folder holding other
// files keeps them.
func TestGenerateCounts(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "certs")
	for _, n := range []int{0, -1, MaxRanks + 1, 1<<31 - 1, 1 << 31, 1<<63 - 1, -1 << 63} {
		err := GenerateWith(dir, n, Options{})
		if err == nil || !strings.Contains(err.Error(), "want 1 to 65536") {
			t.Errorf("%d ranks: %v, want a refusal naming the limit", n, err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%d ranks: the folder was created (%v)", n, err)
		}
	}
	if err := GenerateWith(dir, 2, Options{}); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("beside the certificates folder: %v, want it alone", entries)
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("folder: %v, %v; want mode 0700", info, err)
	}
	if _, err := Load(dir, 1); err != nil {
		t.Error(err)
	}
	mine := filepath.Join(dir, "notes.txt")
	os.WriteFile(mine, []byte("mine"), 0o644)
	if err := GenerateWith(dir, 1, Options{Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(mine); err != nil || string(b) != "mine" {
		t.Errorf("a file of the user's in the folder: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, CertFile(1))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("rank 1's certificate kept after overwriting with 1 rank (%v)", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 1 {
		t.Errorf("beside the certificates folder: %v, want it alone", entries)
	}
}
