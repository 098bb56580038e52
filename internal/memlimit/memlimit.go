// Package memlimit finds how much memory a process may use — a cgroup's
// limit where there is one, else the memory the machine has available — and
// reads and writes byte sizes such as "8GiB".
package memlimit

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// Sources names the files Detect reads. Default returns the real paths;
// tests point them at fake files.
type Sources struct {
	CgroupV2 string // cgroup v2 limit: a byte count or "max"
	CgroupV1 string // cgroup v1 limit: a byte count, huge when unlimited
	Meminfo  string // /proc/meminfo
}

// Default returns the paths of Linux: /sys/fs/cgroup/memory.max,
// /sys/fs/cgroup/memory/memory.limit_in_bytes and /proc/meminfo.
func Default() Sources {
	return Sources{
		CgroupV2: "/sys/fs/cgroup/memory.max",
		CgroupV1: "/sys/fs/cgroup/memory/memory.limit_in_bytes",
		Meminfo:  "/proc/meminfo",
	}
}

// Limit is the memory a process may use and where that figure came from.
type Limit struct {
	Bytes  int64
	Source string // e.g. "cgroup v2 limit /sys/fs/cgroup/memory.max"
}

// cgroupV1Unlimited is the smallest cgroup v1 limit read as "no limit": an
// unlimited v1 group reports a page-rounded 2⁶³−1 (9223372036854771712),
// and any figure above 2⁶² bytes is no limit on a real machine either.
const cgroupV1Unlimited = 1 << 62

// ErrUnknown is returned by Detect when no source gives a figure.
var ErrUnknown = errors.New("memory limit unknown: no cgroup limit and no /proc/meminfo")

// Detect returns the smaller of the cgroup limit (v2, else v1; "max" or the
// v1 sentinel mean none) and the machine's available memory: MemAvailable of
// /proc/meminfo, or MemTotal on kernels without MemAvailable.
//
// MemAvailable rather than MemTotal: it is what can still be allocated
// without swapping, after what other processes hold (page cache it counts
// as reclaimable), and a run that needs more than that fails however much
// the machine has in total. It moves as other processes come and go, so
// the same run may fit at one time and not at another; --max-memory fixes
// the figure.
func (s Sources) Detect() (Limit, error) {
	var best Limit
	take := func(l Limit) {
		if l.Bytes > 0 && (best.Bytes == 0 || l.Bytes < best.Bytes) {
			best = l
		}
	}
	cg, err := s.cgroup()
	if err != nil {
		return Limit{}, err
	}
	take(cg)
	mi, err := s.meminfo()
	if err != nil {
		return Limit{}, err
	}
	take(mi)
	if best.Bytes == 0 {
		return Limit{}, ErrUnknown
	}
	return best, nil
}

// Detect is Default().Detect().
func Detect() (Limit, error) { return Default().Detect() }

// cgroup returns the cgroup v2 limit, else the v1 one; Bytes is 0 when
// neither file exists or neither sets a limit.
func (s Sources) cgroup() (Limit, error) {
	if s.CgroupV2 != "" {
		b, err := os.ReadFile(s.CgroupV2)
		switch {
		case err == nil:
			v := strings.TrimSpace(string(b))
			if v == "max" {
				return Limit{}, nil // v2 present and unlimited: v1 is not mounted alongside
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return Limit{}, fmt.Errorf("%s: %q is not a byte count or \"max\"", s.CgroupV2, v)
			}
			return Limit{n, "cgroup v2 limit " + s.CgroupV2}, nil
		case !errors.Is(err, os.ErrNotExist):
			return Limit{}, fmt.Errorf("memory limit: %w", err)
		}
	}
	if s.CgroupV1 != "" {
		b, err := os.ReadFile(s.CgroupV1)
		switch {
		case err == nil:
			v := strings.TrimSpace(string(b))
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return Limit{}, fmt.Errorf("%s: %q is not a byte count", s.CgroupV1, v)
			}
			if n >= cgroupV1Unlimited {
				return Limit{}, nil
			}
			return Limit{int64(n), "cgroup v1 limit " + s.CgroupV1}, nil
		case !errors.Is(err, os.ErrNotExist):
			return Limit{}, fmt.Errorf("memory limit: %w", err)
		}
	}
	return Limit{}, nil
}

// meminfo returns MemAvailable (else MemTotal) of the meminfo file; Bytes
// is 0 when the file does not exist.
func (s Sources) meminfo() (Limit, error) {
	if s.Meminfo == "" {
		return Limit{}, nil
	}
	f, err := os.Open(s.Meminfo)
	if errors.Is(err, os.ErrNotExist) {
		return Limit{}, nil
	}
	if err != nil {
		return Limit{}, fmt.Errorf("memory limit: %w", err)
	}
	defer f.Close()
	var avail, total int64 = -1, -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "MemAvailable" && key != "MemTotal") {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return Limit{}, fmt.Errorf("%s: %s has no value", s.Meminfo, key)
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		unit := int64(1)
		if len(fields) > 1 && strings.EqualFold(fields[1], "kB") {
			unit = 1024 // the kernel's "kB" is KiB
		}
		if err != nil || n < 0 || n > math.MaxInt64/unit {
			return Limit{}, fmt.Errorf("%s: %s value %q is not a byte count", s.Meminfo, key, fields[0])
		}
		if key == "MemAvailable" {
			avail = n * unit
		} else {
			total = n * unit
		}
	}
	if err := sc.Err(); err != nil {
		return Limit{}, fmt.Errorf("memory limit: %s: %w", s.Meminfo, err)
	}
	switch {
	case avail >= 0:
		return Limit{avail, "MemAvailable of " + s.Meminfo}, nil
	case total >= 0:
		return Limit{total, "MemTotal of " + s.Meminfo}, nil
	}
	return Limit{}, nil
}

// units are the suffixes ParseSize accepts, by lower-case name.
var units = map[string]int64{
	"b":   1,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
}

// SizeSyntax describes what ParseSize accepts, for error messages.
const SizeSyntax = "a byte count such as 8GiB, 512MiB, 2GB or 1073741824 (units B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)"

// ParseSize parses a byte size: a non-negative number, optionally with a
// fraction, and an optional unit (B, KiB, MiB, GiB, TiB powers of 1024; KB,
// MB, GB, TB powers of 1000; any case). A bare number is bytes. The empty
// string is 0. A single-letter unit such as "8G" is refused as ambiguous.
func ParseSize(s string) (int64, error) {
	n, err := parseSize(s)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	return n, nil
}

// parseSize is ParseSize with an error that does not repeat s.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, nil
	}
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	bad := func(why string) error {
		if why != "" {
			why = " (" + why + ")"
		}
		return fmt.Errorf("want %s%s", SizeSyntax, why)
	}
	if num == "" || strings.Count(num, ".") > 1 || num == "." {
		return 0, bad("")
	}
	mult := int64(1)
	if unit != "" {
		m, ok := units[unit]
		if !ok {
			if len(unit) == 1 && strings.Contains("kmgt", unit) {
				return 0, bad(fmt.Sprintf("%s is ambiguous: write %sB or %siB", strings.ToUpper(unit), strings.ToUpper(unit), strings.ToUpper(unit)))
			}
			return 0, bad("unknown unit " + strconv.Quote(t[i:]))
		}
		mult = m
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n > math.MaxInt64/mult {
			return 0, bad("too large")
		}
		return n * mult, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, bad("")
	}
	v := math.Round(f * float64(mult))
	if v >= math.MaxInt64 {
		return 0, bad("too large")
	}
	return int64(v), nil
}

// Format writes n bytes in the largest binary unit that keeps the figure at
// least 1, with one decimal: "512 B", "1.5 KiB", "18.4 GiB".
func Format(n int64) string {
	if n < 1<<10 && n > -(1<<10) {
		return fmt.Sprintf("%d B", n)
	}
	v := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB", "PiB"} {
		v /= 1024
		if math.Abs(v) < 1024 || u == "PiB" {
			return fmt.Sprintf("%.1f %s", v, u)
		}
	}
	panic("unreachable")
}

// Flag is a flag.Value for a byte size in ParseSize's syntax, stored in
// *Bytes; 0 means "detect the limit".
type Flag struct{ Bytes *int64 }

// NewFlag returns a Flag writing to p.
func NewFlag(p *int64) *Flag { return &Flag{p} }

// String returns the size as given to Set, in bytes, or "0".
func (f *Flag) String() string {
	if f == nil || f.Bytes == nil || *f.Bytes == 0 {
		return "0"
	}
	return strconv.FormatInt(*f.Bytes, 10)
}

// Set parses s with ParseSize, but refuses spaces around it, as the other
// number flags do; the flag package names s in its error.
func (f *Flag) Set(s string) error {
	if s != strings.TrimSpace(s) {
		return fmt.Errorf("want %s, without spaces around it", SizeSyntax)
	}
	n, err := parseSize(s)
	if err != nil {
		return err
	}
	*f.Bytes = n
	return nil
}
