// Package cluster describes the processes ("ranks") of a run spread over
// several: the ranks file that lists their addresses and, optionally, which
// rank runs each node; the assignment of nodes to ranks; and a hash of a
// run's settings, with which ranks started with different settings find
// out before they train. It reads the placement Slurm or a Kubernetes
// StatefulSet gives a rank (FromEnv).
//
// Its subpackages are the rest of the runtime that lets decentral's
// exchange run across processes: transport (gRPC streams between ranks),
// wire (the frames they carry) and certs (the run's mutual TLS).
//
// A ranks file is text. Blank lines and everything from a # to the end of
// a line are ignored. Every other line is either
//
//	host:port   the address of the next rank, numbered from 0 in order
//	node I R    node I runs on rank R
//
// Node lines are optional; if there is any, every node 0..m−1 must have
// exactly one, and every rank must run at least one node. Without them,
// nodes are dealt to ranks in contiguous blocks (see Ranks.Assign).
package cluster

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/gtstorm/gtstorm/internal/inputfile"
)

// Ranks is a parsed ranks file.
type Ranks struct {
	// Name is the file's name, used in error messages.
	Name string
	// Addrs holds each rank's address, "host:port" (IPv6 hosts in
	// brackets), indexed by rank.
	Addrs []string
	// Owner is the explicit table of the file's node lines, node → rank;
	// nil when it has none.
	Owner []int
}

// ParseOptions are the settings of Parse.
type ParseOptions struct {
	// AllowPortZero accepts port 0 ("any free port"), which suits
	// processes started together by one program (tests, gtstorm launch)
	// that tell one another their ports. Repeated addresses with port 0
	// are not duplicates. Off, ports must be 1-65535.
	AllowPortZero bool
}

// ParseRanks reads a ranks file from r with the default options; name
// names it in errors ("name:line: fault").
func ParseRanks(r io.Reader, name string) (*Ranks, error) {
	return ParseOptions{}.Parse(r, name)
}

// ReadRanksFile opens and parses the ranks file at path.
func ReadRanksFile(path string) (*Ranks, error) {
	f, _, err := inputfile.Open(path) // not a FIFO or a device, which never end
	if err != nil {
		return nil, fmt.Errorf("ranks file: %w", err)
	}
	defer f.Close()
	return ParseRanks(f, path)
}

// nodeLine is one node line: node → rank, and where it is.
type nodeLine struct{ node, rank, line int }

// Parse reads a ranks file from r; see the package documentation for its
// form. Errors name name:line and the fault: a malformed line or address,
// a duplicate address, a node line whose rank is out of range, a duplicate
// or missing node, a rank without a node, or no ranks at all.
func (o ParseOptions) Parse(r io.Reader, name string) (*Ranks, error) {
	rk := &Ranks{Name: name}
	seen := map[string]int{} // address → line
	var lines []int          // rank → line
	var nodes []nodeLine
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(text)
		switch {
		case len(f) == 0:
			continue
		case f[0] == "node":
			if len(f) != 3 {
				return nil, fmt.Errorf("%s:%d: malformed node line %q: want \"node I R\"", name, n, strings.TrimSpace(text))
			}
			node, err1 := atoi(f[1])
			rank, err2 := atoi(f[2])
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("%s:%d: malformed node line %q: want \"node I R\" with I and R whole numbers", name, n, strings.TrimSpace(text))
			}
			nodes = append(nodes, nodeLine{node, rank, n})
		case len(f) == 1:
			addr, err := o.address(f[0])
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			if !strings.HasSuffix(addr, ":0") {
				key := sameAddress(addr)
				if first, dup := seen[key]; dup {
					return nil, fmt.Errorf("%s:%d: duplicate address %s (also rank %d, line %d)", name, n, addr, rankAt(lines, first), first)
				}
				seen[key] = n
			}
			rk.Addrs = append(rk.Addrs, addr)
			lines = append(lines, n)
		default:
			return nil, fmt.Errorf("%s:%d: malformed line %q: want host:port or \"node I R\"", name, n, strings.TrimSpace(text))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(rk.Addrs) == 0 {
		return nil, fmt.Errorf("%s: no ranks: want one host:port line per rank", name)
	}
	if len(nodes) > 0 {
		owner, err := table(name, nodes, lines)
		if err != nil {
			return nil, err
		}
		rk.Owner = owner
	}
	return rk, nil
}

// table checks the node lines and returns them as node → rank.
func table(name string, nodes []nodeLine, lines []int) ([]int, error) {
	k := len(lines)
	for _, nl := range nodes {
		if nl.rank >= k {
			return nil, fmt.Errorf("%s:%d: node %d on rank %d, but the file lists %d ranks (0..%d)", name, nl.line, nl.node, nl.rank, k, k-1)
		}
	}
	byNode := append([]nodeLine(nil), nodes...)
	sort.SliceStable(byNode, func(i, j int) bool { return byNode[i].node < byNode[j].node })
	for i, nl := range byNode { // every repeat first: it also leaves a gap
		if i > 0 && byNode[i-1].node == nl.node {
			return nil, fmt.Errorf("%s:%d: node %d listed twice (also line %d)", name, nl.line, nl.node, byNode[i-1].line)
		}
	}
	for i, nl := range byNode {
		if nl.node != i {
			return nil, fmt.Errorf("%s: node %d has no node line (nodes 0..%d are listed by node lines, so each needs one)", name, i, byNode[len(byNode)-1].node)
		}
	}
	owner := make([]int, len(byNode))
	count := make([]int, k)
	for _, nl := range byNode {
		owner[nl.node] = nl.rank
		count[nl.rank]++
	}
	for r, c := range count {
		if c == 0 {
			return nil, fmt.Errorf("%s:%d: rank %d runs no node (every rank needs a node line)", name, lines[r], r)
		}
	}
	return owner, nil
}

// sameAddress returns a key that two addresses of one listener share:
// host names compare without case, and localhost is 127.0.0.1.
func sameAddress(addr string) string {
	host, port, _ := net.SplitHostPort(strings.ToLower(addr))
	if host == "localhost" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// rankAt returns the rank whose address is on line.
func rankAt(lines []int, line int) int {
	return sort.SearchInts(lines, line)
}

// atoi parses a whole number written in decimal digits only.
func atoi(s string) (int, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a whole number", s)
	}
	return strconv.Atoi(s)
}

// address checks a host:port and returns it in canonical form: the port
// without leading zeros, an IP address as net.IP.String writes it.
func (o ParseOptions) address(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("malformed address %q: %w", s, err)
	}
	if host == "" {
		return "", fmt.Errorf("malformed address %q: missing host", s)
	}
	p, err := atoi(port)
	if err != nil || p > 65535 || p == 0 && !o.AllowPortZero {
		want := "1-65535"
		if o.AllowPortZero {
			want = "0-65535"
		}
		return "", fmt.Errorf("malformed address %q: port %q, want %s", s, port, want)
	}
	if ip := net.ParseIP(host); ip != nil {
		host = ip.String()
	} else if strings.ContainsAny(host, "%/ ") {
		return "", fmt.Errorf("malformed address %q: host %q, want a DNS name or an IP address", s, host)
	}
	return net.JoinHostPort(host, strconv.Itoa(p)), nil
}

// Loopback returns k ranks on 127.0.0.1, each with port 0, for gtstorm
// launch and tests; its addresses pass ParseOptions{AllowPortZero: true}.
func Loopback(k int) (*Ranks, error) {
	if k < 1 {
		return nil, fmt.Errorf("%d ranks: want at least 1", k)
	}
	rk := &Ranks{Name: "loopback", Addrs: make([]string, k)}
	for r := range rk.Addrs {
		rk.Addrs[r] = "127.0.0.1:0"
	}
	return rk, nil
}

// Len returns the number of ranks.
func (rk *Ranks) Len() int { return len(rk.Addrs) }

// Marshal returns rk as a ranks file that Parse reads back to rk (with
// AllowPortZero if an address has port 0).
func (rk *Ranks) Marshal() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# gtstorm ranks: %d\n", len(rk.Addrs))
	for r, a := range rk.Addrs {
		fmt.Fprintf(&b, "%s # rank %d\n", a, r)
	}
	for i, r := range rk.Owner {
		fmt.Fprintf(&b, "node %d %d\n", i, r)
	}
	return b.Bytes()
}
