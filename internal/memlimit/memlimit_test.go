package memlimit

import (
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const meminfo = `MemTotal:       24683620 kB
MemFree:        23520252 kB
MemAvailable:   20000000 kB
Buffers:            2048 kB
`

// fake writes the given files (name → content; "" leaves the file out) into
// a temp dir and returns Sources pointing at them.
func fake(t *testing.T, v2, v1, mi string) Sources {
	t.Helper()
	dir := t.TempDir()
	s := Sources{
		CgroupV2: filepath.Join(dir, "memory.max"),
		CgroupV1: filepath.Join(dir, "memory.limit_in_bytes"),
		Meminfo:  filepath.Join(dir, "meminfo"),
	}
	for path, content := range map[string]string{s.CgroupV2: v2, s.CgroupV1: v1, s.Meminfo: mi} {
		if content == "" {
			continue
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

func TestDetect(t *testing.T) {
	const avail = 20000000 * 1024
	cases := []struct {
		name       string
		v2, v1, mi string
		want       int64
		source     string
	}{
		{"v2 max", "max\n", "", meminfo, avail, "MemAvailable"},
		{"v2 number below machine", "8589934592\n", "", meminfo, 8 << 30, "cgroup v2"},
		{"v2 number above machine", "109951162777600\n", "", meminfo, avail, "MemAvailable"},
		{"v2 max hides v1", "max\n", "1073741824\n", meminfo, avail, "MemAvailable"},
		{"v1 sentinel", "", "9223372036854771712\n", meminfo, avail, "MemAvailable"},
		{"v1 number", "", "4294967296\n", meminfo, 4 << 30, "cgroup v1"},
		{"no cgroup", "", "", meminfo, avail, "MemAvailable"},
		{"old kernel: MemTotal", "", "", "MemTotal: 1000 kB\nMemFree: 10 kB\n", 1000 * 1024, "MemTotal"},
		{"cgroup only", "", "4294967296\n", "", 4 << 30, "cgroup v1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, err := fake(t, c.v2, c.v1, c.mi).Detect()
			if err != nil {
				t.Fatal(err)
			}
			if l.Bytes != c.want || !strings.Contains(l.Source, c.source) {
				t.Errorf("Detect = %d from %q, want %d from %s", l.Bytes, l.Source, c.want, c.source)
			}
		})
	}
}

func TestDetectErrors(t *testing.T) {
	if _, err := fake(t, "", "", "").Detect(); err != ErrUnknown {
		t.Errorf("no files: err %v, want ErrUnknown", err)
	}
	for _, c := range []struct{ v2, v1, mi, want string }{
		{"lots\n", "", meminfo, "memory.max"},
		{"", "-5\n", meminfo, "memory.limit_in_bytes"},
		{"", "", "MemAvailable: many kB\n", "MemAvailable"},
	} {
		_, err := fake(t, c.v2, c.v1, c.mi).Detect()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Detect on %q/%q/%q: err %v, want one naming %s", c.v2, c.v1, c.mi, err, c.want)
		}
	}
}

// TestDetectReal only checks that this machine gives some figure.
func TestDetectReal(t *testing.T) {
	l, err := Detect()
	if err == ErrUnknown {
		t.Skip(err)
	}
	if err != nil || l.Bytes <= 0 {
		t.Fatalf("Detect = %+v, %v", l, err)
	}
	t.Logf("limit %s from %s", Format(l.Bytes), l.Source)
}

func TestParseSize(t *testing.T) {
	good := []struct {
		in   string
		want int64
	}{
		{"", 0},
		{"0", 0},
		{"1073741824", 1 << 30},
		{"8GiB", 8 << 30},
		{"8gib", 8 << 30},
		{"8 GiB", 8 << 30},
		{"512MiB", 512 << 20},
		{"4KiB", 4096},
		{"2TiB", 2 << 40},
		{"3KB", 3000},
		{"5MB", 5e6},
		{"2GB", 2e9},
		{"1.5GiB", 3 << 29},
		{"100B", 100},
		{" 7MiB ", 7 << 20},
	}
	for _, c := range good {
		got, err := ParseSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	bad := []struct{ in, why string }{
		{"-1", "want a byte count"},
		{"8G", "ambiguous"},
		{"8m", "ambiguous"},
		{"8XB", "unknown unit"},
		{"GiB", "want a byte count"},
		{"1.2.3GB", "want a byte count"},
		{"eight", "want a byte count"},
		{"99999999999999999999", "too large"},
		{"9000000000TiB", "too large"},
		{"1e9", "unknown unit"},
	}
	for _, c := range bad {
		_, err := ParseSize(c.in)
		if err == nil {
			t.Errorf("ParseSize(%q) succeeded, want an error", c.in)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, `"`+c.in+`"`) || !strings.Contains(msg, c.why) || !strings.Contains(msg, "GiB") || strings.Contains(msg, "\n") {
			t.Errorf("ParseSize(%q): %q, want one line naming the value, %q and the units", c.in, msg, c.why)
		}
	}
}

func TestFlag(t *testing.T) {
	var n int64
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(NewFlag(&n), "max-memory", "limit")
	if err := fs.Parse([]string{"--max-memory", "2GiB"}); err != nil || n != 2<<30 {
		t.Fatalf("parse 2GiB: n = %d, %v", n, err)
	}
	err := fs.Parse([]string{"--max-memory", "2G"})
	if err == nil || !strings.Contains(err.Error(), `"2G"`) || strings.Count(err.Error(), `"2G"`) != 1 || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("parse 2G: %v, want one error naming the value once and why", err)
	}
	for _, v := range []string{" 1GiB", "1GiB ", "\t1GiB"} {
		if err := fs.Parse([]string{"--max-memory", v}); err == nil || !strings.Contains(err.Error(), "without spaces") {
			t.Errorf("parse %q: %v, want a refusal of the spaces", v, err)
		}
	}
	if s := (&Flag{}).String(); s != "0" {
		t.Errorf("zero Flag prints %q, want 0", s)
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{{0, "0 B"}, {512, "512 B"}, {1536, "1.5 KiB"}, {8 << 30, "8.0 GiB"}, {3 << 40, "3.0 TiB"}} {
		if got := Format(c.n); got != c.want {
			t.Errorf("Format(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
