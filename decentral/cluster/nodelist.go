package cluster

import (
	"fmt"
	"strconv"
	"strings"
)

// maxHosts bounds the hosts a node list may expand to, so that a
// malformed range cannot exhaust memory.
const maxHosts = 1 << 16

// ExpandNodeList expands a Slurm host list in its compressed form, as
// `scontrol show hostnames` does: "node[01-04,07],gpu5" is node01, node02,
// node03, node04, node07 and gpu5. A name may carry several bracket groups
// ("rack[1-2]-n[1-2]" is rack1-n1, rack1-n2, rack2-n1, rack2-n2), and a
// range keeps the zero padding of its first bound.
func ExpandNodeList(list string) ([]string, error) {
	var hosts []string
	for _, item := range splitTop(list) {
		if item == "" {
			continue
		}
		expanded, err := expandName(item)
		if err != nil {
			return nil, fmt.Errorf("node list %q: %w", list, err)
		}
		hosts = append(hosts, expanded...)
		if len(hosts) > maxHosts {
			return nil, fmt.Errorf("node list %q: more than %d hosts", list, maxHosts)
		}
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("node list %q: no hosts", list)
	}
	return hosts, nil
}

// splitTop splits s at the commas outside brackets.
func splitTop(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(parts, strings.TrimSpace(s[start:]))
}

// expandName expands one name of a node list, bracket groups and all.
func expandName(name string) ([]string, error) {
	open := strings.IndexByte(name, '[')
	if open < 0 {
		if strings.ContainsAny(name, "]") {
			return nil, fmt.Errorf("%q: unmatched ]", name)
		}
		return []string{name}, nil
	}
	end := strings.IndexByte(name[open:], ']')
	if end < 0 {
		return nil, fmt.Errorf("%q: unmatched [", name)
	}
	end += open
	prefix, group, rest := name[:open], name[open+1:end], name[end+1:]
	if strings.ContainsAny(prefix, "]") {
		return nil, fmt.Errorf("%q: unmatched ]", name)
	}
	values, err := expandGroup(group)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", name, err)
	}
	tails, err := expandName(rest)
	if err != nil {
		return nil, err
	}
	if len(values)*len(tails) > maxHosts {
		return nil, fmt.Errorf("%q: more than %d hosts", name, maxHosts)
	}
	var out []string
	for _, v := range values {
		for _, t := range tails {
			out = append(out, prefix+v+t)
		}
	}
	return out, nil
}

// expandGroup expands the inside of one bracket group: "01-04,07".
func expandGroup(group string) ([]string, error) {
	var out []string
	for _, part := range strings.Split(group, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = lo
		}
		a, errA := strconv.ParseUint(lo, 10, 32)
		b, errB := strconv.ParseUint(hi, 10, 32)
		if lo == "" || hi == "" || errA != nil || errB != nil || b < a {
			return nil, fmt.Errorf("[%s]: %q is not a number or an increasing range N-M", group, part)
		}
		if b-a >= maxHosts || len(out)+int(b-a) >= maxHosts {
			return nil, fmt.Errorf("[%s]: more than %d hosts", group, maxHosts)
		}
		for v := a; v <= b; v++ {
			out = append(out, fmt.Sprintf("%0*d", len(lo), v))
		}
	}
	return out, nil
}

// ExpandTasksPerNode expands Slurm's compressed task counts per node,
// "2(x3),1" being 2, 2, 2 and 1.
func ExpandTasksPerNode(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		count, reps := part, "1"
		if c, r, ok := strings.Cut(part, "(x"); ok && strings.HasSuffix(r, ")") {
			count, reps = c, strings.TrimSuffix(r, ")")
		}
		n, errN := strconv.Atoi(count)
		k, errK := strconv.Atoi(reps)
		if errN != nil || errK != nil || n < 1 || k < 1 || len(out)+k > maxHosts {
			return nil, fmt.Errorf("tasks per node %q: %q is not N or N(xK) with N, K ≥ 1", s, part)
		}
		for range k {
			out = append(out, n)
		}
	}
	return out, nil
}
