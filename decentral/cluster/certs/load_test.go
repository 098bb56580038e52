package certs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func writeText(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLoadErrors(t *testing.T) {
	now := time.Now()
	other := generate(t, 2, now) // another CA
	past := now.Add(-2 * LeafValidity)
	expired := generate(t, 2, past)
	ancient := generate(t, 1, now.Add(-CAValidity-LeafValidity))
	const garbage = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
	const garbageKey = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"

	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the folder to load
		rank  int
		at    time.Time // zero: now
		file  string    // the file the error names
		fault error
		text  string // more of the message
	}{
		{"missing ca", func(t *testing.T, dir string) string {
			os.Remove(filepath.Join(dir, CAFile))
			return dir
		}, 0, time.Time{}, CAFile, ErrMissing, "missing"},
		{"missing cert", func(t *testing.T, dir string) string { return dir }, 5, time.Time{}, CertFile(5), ErrMissing, "missing"},
		{"missing key", func(t *testing.T, dir string) string {
			os.Remove(filepath.Join(dir, KeyFile(1)))
			return dir
		}, 1, time.Time{}, KeyFile(1), ErrMissing, "missing"},
		{"ca not pem", func(t *testing.T, dir string) string {
			writeText(t, filepath.Join(dir, CAFile), "hello\n")
			return dir
		}, 0, time.Time{}, CAFile, ErrNotPEM, "want a CERTIFICATE block"},
		{"cert holds a key", func(t *testing.T, dir string) string {
			copyFile(t, filepath.Join(dir, KeyFile(0)), filepath.Join(dir, CertFile(0)))
			return dir
		}, 0, time.Time{}, CertFile(0), ErrNotPEM, "found PRIVATE KEY"},
		{"key holds a cert", func(t *testing.T, dir string) string {
			copyFile(t, filepath.Join(dir, CertFile(0)), filepath.Join(dir, KeyFile(0)))
			return dir
		}, 0, time.Time{}, KeyFile(0), ErrNotPEM, "found CERTIFICATE"},
		{"key not pem", func(t *testing.T, dir string) string {
			writeText(t, filepath.Join(dir, KeyFile(0)), "")
			return dir
		}, 0, time.Time{}, KeyFile(0), ErrNotPEM, "want a PRIVATE KEY block"},
		{"cert garbage", func(t *testing.T, dir string) string {
			writeText(t, filepath.Join(dir, CertFile(1)), garbage)
			return dir
		}, 1, time.Time{}, CertFile(1), ErrNotCert, "not a valid certificate"},
		{"key garbage", func(t *testing.T, dir string) string {
			writeText(t, filepath.Join(dir, KeyFile(1)), garbageKey)
			return dir
		}, 1, time.Time{}, KeyFile(1), ErrNotKey, "not a valid private key"},
		{"wrong key", func(t *testing.T, dir string) string {
			copyFile(t, filepath.Join(dir, KeyFile(1)), filepath.Join(dir, KeyFile(0)))
			return dir
		}, 0, time.Time{}, KeyFile(0), ErrWrongKey, "does not match the certificate in"},
		{"wrong rank", func(t *testing.T, dir string) string {
			copyFile(t, filepath.Join(dir, CertFile(1)), filepath.Join(dir, CertFile(0)))
			copyFile(t, filepath.Join(dir, KeyFile(1)), filepath.Join(dir, KeyFile(0)))
			return dir
		}, 0, time.Time{}, CertFile(0), ErrWrongRank, "it is rank 1's certificate, want rank 0's"},
		{"other ca", func(t *testing.T, dir string) string {
			copyFile(t, filepath.Join(other, CertFile(0)), filepath.Join(dir, CertFile(0)))
			copyFile(t, filepath.Join(other, KeyFile(0)), filepath.Join(dir, KeyFile(0)))
			return dir
		}, 0, time.Time{}, CertFile(0), ErrNotSignedCA, "not signed by the CA in"},
		{"ca not a ca", func(t *testing.T, dir string) string {
			copyFile(t, filepath.Join(dir, CertFile(1)), filepath.Join(dir, CAFile))
			return dir
		}, 0, time.Time{}, CAFile, ErrNotCA, "not a CA certificate"},
		{"cert expired", func(t *testing.T, dir string) string { return expired }, 1, time.Time{}, CertFile(1), ErrExpired, "expired on"},
		{"ca expired", func(t *testing.T, dir string) string { return ancient }, 0, time.Time{}, CAFile, ErrExpired, "expired on"},
		{"not yet valid", func(t *testing.T, dir string) string { return dir }, 0, now.Add(-2 * clockSkew), CAFile, ErrNotYetValid, "valid from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.setup(t, generate(t, 2, now))
			at := tc.at
			if at.IsZero() {
				at = time.Now()
			}
			m, err := LoadAt(dir, tc.rank, at)
			if err == nil {
				t.Fatalf("LoadAt succeeded (rank %d)", m.Rank)
			}
			var fe *FileError
			want := filepath.Join(dir, tc.file)
			if !errors.As(err, &fe) || fe.File != want {
				t.Fatalf("error %v: want a FileError naming %s", err, want)
			}
			if !errors.Is(err, tc.fault) {
				t.Errorf("error %v: want fault %v", err, tc.fault)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, want+": ") || !strings.Contains(msg, tc.text) {
				t.Errorf("error %q: want %q, then %q", msg, want+": ", tc.text)
			}
		})
	}

	t.Run("negative rank", func(t *testing.T) {
		if _, err := Load(t.TempDir(), -1); err == nil || !strings.Contains(err.Error(), "rank -1") {
			t.Errorf("Load rank -1: %v", err)
		}
	})
	t.Run("expired loads at its time", func(t *testing.T) {
		if _, err := LoadAt(expired, 1, past.Add(time.Hour)); err != nil {
			t.Errorf("LoadAt within the validity period: %v", err)
		}
	})
}
