// Package netlab builds a small network out of Linux network namespaces,
// for tests that run ranks over real network stacks: each rank gets a
// namespace of its own, with one interface, eth0, at 10.77.0.R+1/24, joined
// by a veth link to a bridge in a further namespace. A test can then cut a
// rank's link (its bridge port down), kill a rank's TCP connections (ss -K)
// or pace its outgoing traffic with a token bucket (tc tbf).
//
// It needs root and the ip, tc and ss commands. Namespaces and links are
// named after the process and a counter, so labs of concurrent tests do not
// meet; Close removes them, and New removes those of processes that died
// without closing theirs.
package netlab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// prefix begins the name of every namespace a lab makes:
// gtsnl-PID-N-br for the bridge and gtsnl-PID-N-rR for rank R.
const prefix = "gtsnl-"

// netnsDir is where ip keeps the names of namespaces.
const netnsDir = "/run/netns"

// cmdTimeout bounds each ip, tc or ss command.
const cmdTimeout = 10 * time.Second

// labs counts the labs this process made, for their names.
var labs atomic.Int64

// A Lab is a bridge namespace and one namespace per rank.
type Lab struct {
	name  string   // gtsnl-PID-N
	ranks int      // number of rank namespaces
	made  []string // namespaces made so far, for Close
}

// Available returns nil if this process can build labs, or an error that
// says why not: not root, or no ip, tc or ss command.
func Available() error {
	if os.Geteuid() != 0 {
		return errors.New("netlab: needs root to make network namespaces")
	}
	for _, c := range []string{"ip", "tc", "ss"} {
		if _, err := exec.LookPath(c); err != nil {
			return fmt.Errorf("netlab: no %s command: %w", c, err)
		}
	}
	return nil
}

// New makes a lab of k rank namespaces joined through a bridge. On error
// it removes whatever it made.
func New(k int) (*Lab, error) {
	if k < 1 || k > 250 {
		return nil, fmt.Errorf("netlab: %d ranks, want 1 to 250", k)
	}
	if err := Available(); err != nil {
		return nil, err
	}
	sweep()
	l := &Lab{name: fmt.Sprintf("%s%d-%d", prefix, os.Getpid(), labs.Add(1)), ranks: k}
	if err := l.build(); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// build makes the namespaces, the bridge and the links.
func (l *Lab) build() error {
	br := l.bridgeNS()
	if err := l.addNS(br); err != nil {
		return err
	}
	steps := [][]string{
		{"ip", "-n", br, "link", "set", "lo", "up"},
		{"ip", "-n", br, "link", "add", "br0", "type", "bridge"},
		{"ip", "-n", br, "link", "set", "br0", "up"},
	}
	for r := range l.ranks {
		ns := l.NS(r)
		if err := l.addNS(ns); err != nil {
			return err
		}
		port := l.port(r)
		steps = append(steps,
			[]string{"ip", "link", "add", "eth0", "netns", ns, "type", "veth", "peer", "name", port, "netns", br},
			[]string{"ip", "-n", br, "link", "set", port, "master", "br0"},
			[]string{"ip", "-n", br, "link", "set", port, "up"},
			[]string{"ip", "-n", ns, "addr", "add", l.Addr(r) + "/24", "dev", "eth0"},
			[]string{"ip", "-n", ns, "link", "set", "eth0", "up"},
			[]string{"ip", "-n", ns, "link", "set", "lo", "up"},
		)
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			return err
		}
	}
	return nil
}

// addNS makes the namespace ns and remembers it for Close.
func (l *Lab) addNS(ns string) error {
	if err := run("ip", "netns", "add", ns); err != nil {
		return err
	}
	l.made = append(l.made, ns)
	return nil
}

// Close removes the lab's namespaces, and with them its links. Processes
// still running in a namespace keep it alive until they exit.
func (l *Lab) Close() error {
	var errs []error
	for _, ns := range l.made {
		errs = append(errs, run("ip", "netns", "del", ns))
	}
	l.made = nil
	return errors.Join(errs...)
}

// Ranks returns the number of rank namespaces.
func (l *Lab) Ranks() int { return l.ranks }

// NS returns the name of rank r's namespace.
func (l *Lab) NS(r int) string { return l.name + "-r" + strconv.Itoa(r) }

func (l *Lab) bridgeNS() string { return l.name + "-br" }

// port returns the name of rank r's link at the bridge.
func (l *Lab) port(r int) string { return "r" + strconv.Itoa(r) }

// Addr returns rank r's IPv4 address.
func (l *Lab) Addr(r int) string { return "10.77.0." + strconv.Itoa(r+1) }

// Command returns a command that runs name with args in rank r's
// namespace (ip netns exec, which execs name: the process is name's).
func (l *Lab) Command(ctx context.Context, r int, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", l.NS(r), name}, args...)...)
}

// SetLink takes rank r's link up or down at the bridge: down, every packet
// to and from the rank is dropped, and its connections see silence, not a
// reset.
func (l *Lab) SetLink(r int, up bool) error {
	state := "down"
	if up {
		state = "up"
	}
	return run("ip", "-n", l.bridgeNS(), "link", "set", l.port(r), state)
}

// KillSockets resets rank r's TCP connections with rank peer, as seen from
// rank r (ss -K: the kernel closes them and sends the peer a reset).
func (l *Lab) KillSockets(r, peer int) error {
	return run("ip", "netns", "exec", l.NS(r), "ss", "-K", "-t", "dst", l.Addr(peer))
}

// Pace limits what rank r sends to rate (tc's units: 1gbit, 100mbit) with
// a token bucket of burst bytes (64kb) that holds a packet at most 50 ms.
func (l *Lab) Pace(r int, rate, burst string) error {
	return run("ip", "netns", "exec", l.NS(r), "tc", "qdisc", "replace", "dev", "eth0", "root",
		"tbf", "rate", rate, "burst", burst, "latency", "50ms")
}

// Unpace removes rank r's pacing.
func (l *Lab) Unpace(r int) error {
	return run("ip", "netns", "exec", l.NS(r), "tc", "qdisc", "del", "dev", "eth0", "root")
}

// run runs a command within cmdTimeout and returns an error naming it and
// its output when it fails.
func run(args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("netlab: %s: %v: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return nil
}

// sweep removes the namespaces of labs whose process has died.
func sweep() {
	entries, err := os.ReadDir(netnsDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		pid, _, _ := strings.Cut(rest, "-")
		if n, err := strconv.Atoi(pid); err != nil || n == os.Getpid() {
			continue
		}
		if _, err := os.Stat("/proc/" + pid); errors.Is(err, os.ErrNotExist) {
			run("ip", "netns", "del", e.Name())
		}
	}
}
