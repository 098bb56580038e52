package cluster

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseRanks(t *testing.T) {
	const file = `# three machines
10.0.0.1:9000   # rank 0
node-b.example.org:9000

[fe80:0::1]:09001
node 0 0 # comments after node lines too
node 2 1
  node 1 0
node 3 2
`
	rk, err := ParseRanks(strings.NewReader(file), "ranks.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := &Ranks{
		Name:  "ranks.txt",
		Addrs: []string{"10.0.0.1:9000", "node-b.example.org:9000", "[fe80::1]:9001"},
		Owner: []int{0, 0, 1, 2},
	}
	if !reflect.DeepEqual(rk, want) {
		t.Errorf("ParseRanks = %+v, want %+v", rk, want)
	}
	back, err := ParseRanks(bytes.NewReader(rk.Marshal()), "ranks.txt")
	if err != nil || !reflect.DeepEqual(back, want) {
		t.Errorf("Marshal does not read back: %+v, %v\n%s", back, err, rk.Marshal())
	}
	if rk.Len() != 3 {
		t.Errorf("Len = %d", rk.Len())
	}

	plain, err := ParseRanks(strings.NewReader("localhost:1\nlocalhost:2\n"), "p")
	if err != nil || plain.Owner != nil || len(plain.Addrs) != 2 {
		t.Errorf("file without node lines: %+v, %v", plain, err)
	}
}

func TestReadRanksFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ranks")
	if err := os.WriteFile(path, []byte("a:1\nb:2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rk, err := ReadRanksFile(path); err != nil || rk.Name != path || len(rk.Addrs) != 2 {
		t.Errorf("ReadRanksFile: %+v, %v", rk, err)
	}
	if _, err := ReadRanksFile(path + ".none"); err == nil || !strings.Contains(err.Error(), path+".none") {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	os.WriteFile(bad, []byte("a:1\nb\n"), 0o644)
	if _, err := ReadRanksFile(bad); err == nil || !strings.HasPrefix(err.Error(), bad+":2: ") {
		t.Errorf("bad file: %v, want it to start with %s:2: ", err, bad)
	}
}

func TestParseRanksErrors(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		zero       bool // AllowPortZero
		want       string
	}{
		{"empty", "", false, "f: no ranks"},
		{"comments only", "# nothing\n\n   \n", false, "f: no ranks"},
		{"node lines only", "node 0 0\n", false, "f: no ranks"},
		{"no port", "a:1\nlocalhost\n", false, `f:2: malformed address "localhost"`},
		{"no host", ":9000\n", false, `f:1: malformed address ":9000": missing host`},
		{"port too big", "a:65536\n", false, `f:1: malformed address "a:65536": port "65536", want 1-65535`},
		{"port negative", "a:-1\n", false, `port "-1"`},
		{"port name", "a:http\n", false, `port "http"`},
		{"port zero", "a:0\n", false, `f:1: malformed address "a:0": port "0", want 1-65535`},
		{"port empty", "a:\n", false, `port ""`},
		{"unbracketed v6", "::1:80\n", false, `f:1: malformed address "::1:80"`},
		{"bad host", "a/b:80\n", false, `host "a/b"`},
		{"zone", "[fe80::1%eth0]:80\n", false, `host "fe80::1%eth0"`},
		{"two fields", "a:1 b:2\n", false, `f:1: malformed line "a:1 b:2": want host:port or "node I R"`},
		{"duplicate", "a:1\nb:1\nA:1\n", false, "f:3: duplicate address A:1 (also rank 0, line 1)"},
		{"duplicate ip", "x:5\n[::1]:80\n[0::1]:80\n", false, "f:3: duplicate address [::1]:80 (also rank 1, line 2)"},
		{"duplicate port zero form", "a:80\na:080\n", false, "f:2: duplicate address a:80"},
		{"node short", "a:1\nnode 1\n", false, `f:2: malformed node line "node 1": want "node I R"`},
		{"node long", "a:1\nnode 1 0 0\n", false, `f:2: malformed node line`},
		{"node negative", "a:1\nnode -1 0\n", false, `f:2: malformed node line "node -1 0": want "node I R" with I and R whole numbers`},
		{"node word", "a:1\nnode x 0\n", false, `f:2: malformed node line`},
		{"node overflow", "a:1\nnode 99999999999999999999999 0\n", false, `f:2: malformed node line`},
		{"rank out of range", "node 0 0\nnode 1 2\na:1\nb:2\n", false, "f:2: node 1 on rank 2, but the file lists 2 ranks (0..1)"},
		{"duplicate node", "a:1\nnode 0 0\nnode 1 0\nnode 0 0\n", false, "f:4: node 0 listed twice (also line 2)"},
		{"localhost is 127.0.0.1", "127.0.0.1:7000\nLocalhost:7000\n", false, "f:2: duplicate address Localhost:7000 (also rank 0, line 1)"},
		{"duplicate node past a gap", "a:1\nnode 3 0\nnode 1 0\nnode 3 0\n", false, "f:4: node 3 listed twice (also line 2)"},
		{"missing node", "a:1\nnode 0 0\nnode 2 0\n", false, "f: node 1 has no node line (nodes 0..2"},
		{"missing node 0", "a:1\nnode 1 0\n", false, "f: node 0 has no node line"},
		{"rank without node", "a:1\nb:2\nc:3\nnode 0 0\nnode 1 2\n", false, "f:2: rank 1 runs no node"},
		{"long line", strings.Repeat("x", 70000) + ":1\n", false, "read f: bufio.Scanner: token too long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rk, err := ParseOptions{AllowPortZero: tc.zero}.Parse(strings.NewReader(tc.file), "f")
			if err == nil {
				t.Fatalf("parsed: %+v", rk)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want %q", err, tc.want)
			}
		})
	}
}

func TestAllowPortZero(t *testing.T) {
	const file = "127.0.0.1:0\n127.0.0.1:0\n127.0.0.1:00\n"
	rk, err := ParseOptions{AllowPortZero: true}.Parse(strings.NewReader(file), "f")
	if err != nil {
		t.Fatal(err)
	}
	lb, err := Loopback(3)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rk.Addrs, lb.Addrs) || lb.Owner != nil {
		t.Errorf("port-zero file %v, Loopback(3) %+v", rk.Addrs, lb)
	}
	back, err := ParseOptions{AllowPortZero: true}.Parse(bytes.NewReader(lb.Marshal()), "f")
	if err != nil || !reflect.DeepEqual(back.Addrs, lb.Addrs) {
		t.Errorf("Loopback's Marshal: %+v, %v", back, err)
	}
	if _, err := ParseRanks(bytes.NewReader(lb.Marshal()), "f"); err == nil || !strings.Contains(err.Error(), "want 1-65535") {
		t.Errorf("port 0 without AllowPortZero: %v", err)
	}
	if _, err := Loopback(0); err == nil || !strings.Contains(err.Error(), "0 ranks") {
		t.Errorf("Loopback(0): %v", err)
	}
	if _, err := (ParseOptions{AllowPortZero: true}).Parse(strings.NewReader("a:65536\n"), "f"); err == nil || !strings.Contains(err.Error(), "want 0-65535") {
		t.Errorf("AllowPortZero, port 65536: %v", err)
	}
}

// FuzzParseRanks checks that Parse never panics and that what it accepts
// is consistent and reads back from Marshal.
func FuzzParseRanks(f *testing.F) {
	for _, s := range []string{
		"", "a:1\n", "a:1\nb:2\nnode 0 1\nnode 1 0\n", "[::1]:0\n#x\nnode 0 0", "node 5 5\n", "a:1\nnode 0 0\nnode 0 0",
		"x:99999999999999999999", "node 9223372036854775807 0\na:1", ":\n", "[]:1\n", "a:1#b:2\n",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, file string, zero bool) {
		opt := ParseOptions{AllowPortZero: zero}
		rk, err := opt.Parse(strings.NewReader(file), "f")
		if err != nil {
			if rk != nil {
				t.Fatal("a Ranks with an error")
			}
			return
		}
		k := len(rk.Addrs)
		if k == 0 {
			t.Fatal("no ranks accepted")
		}
		if rk.Owner != nil {
			owner, err := rk.Assign(len(rk.Owner))
			if err != nil {
				t.Fatalf("Assign of the file's own table: %v", err)
			}
			for r := 0; r < k; r++ {
				if len(rk.Local(r, owner)) == 0 {
					t.Fatalf("rank %d runs no node", r)
				}
			}
		}
		back, err := opt.Parse(bytes.NewReader(rk.Marshal()), "f")
		if err != nil || !reflect.DeepEqual(back, rk) {
			t.Fatalf("Marshal reads back as %+v, %v; want %+v", back, err, rk)
		}
	})
}

// TestReadRanksFileNotRegular: a ranks file that is a device (or a FIFO,
// which would block) is refused in one line naming it, not read forever.
func TestReadRanksFileNotRegular(t *testing.T) {
	_, err := ReadRanksFile("/dev/zero")
	if err == nil || !strings.Contains(err.Error(), "/dev/zero") || !strings.Contains(err.Error(), "want a regular file") {
		t.Errorf("ReadRanksFile(/dev/zero): %v, want a refusal naming it", err)
	}
}
