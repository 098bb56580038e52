package data

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPartitionFile reads partition files in the documented format (one
// node id per line, in sample order) and checks each node's samples and
// class histogram against counts made here from the file's lines.
func TestPartitionFile(t *testing.T) {
	labels := []uint8{0, 1, 2, 0, 1, 2, 0, 1}
	d := labelsOnly(3, labels)
	cases := []struct {
		name string
		text string
		m    int
	}{
		{"plain", "0\n1\n2\n0\n1\n2\n0\n1\n", 3},
		{"no final newline, spaces, CRLF", " 2\r\n2 \r\n1\r\n1\r\n0\r\n0\r\n2\r\n1", 3},
		{"one node", strings.Repeat("0\n", 8), 1},
		{"every sample its own node", "7\n6\n5\n4\n3\n2\n1\n0\n", 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "part.txt", []byte(c.text))
			spec, err := ParsePartition("file:" + path)
			if err != nil || spec.Kind != "file" || spec.Path != path || spec.String() != "file:"+path {
				t.Fatalf("parse: %+v, %v", spec, err)
			}
			p, err := spec.Apply(d, c.m, 99)
			if err != nil {
				t.Fatal(err)
			}
			// The expected shares, from the file's lines.
			want := make([][]int, c.m)
			hist := make([][]int, c.m)
			for i := range hist {
				hist[i] = make([]int, 3)
			}
			for k, line := range strings.Split(strings.TrimRight(c.text, "\n"), "\n") {
				var node int
				fmt.Sscan(strings.TrimSpace(line), &node)
				want[node] = append(want[node], k)
				hist[node][labels[k]]++
			}
			for i := range c.m {
				if !slices.Equal(p.Nodes[i], want[i]) || !slices.Equal(p.Hist[i], hist[i]) {
					t.Fatalf("node %d: samples %v hist %v, want %v and %v", i, p.Nodes[i], p.Hist[i], want[i], hist[i])
				}
			}
			sizes, err := PartitionFileSizes(path, d.Len(), c.m)
			if err != nil || !slices.Equal(sizes, p.Sizes()) {
				t.Fatalf("sizes %v, %v; partition's %v", sizes, err, p.Sizes())
			}
		})
	}
}

// TestPartitionFileRefusals refuses, in one line naming the file, every
// way a partition file can be wrong.
func TestPartitionFileRefusals(t *testing.T) {
	d := labelsOnly(2, []uint8{0, 1, 0, 1})
	dir := t.TempDir()
	cases := []struct {
		name, text string
		m          int
		parts      []string
	}{
		{"too few lines", "0\n1\n0\n", 2, []string{"3 lines, want one per training sample (4)"}},
		{"too many lines", "0\n1\n0\n1\n0\n", 2, []string{"more than 4 lines, want one per training sample (4)"}},
		{"empty file", "", 2, []string{"0 lines, want one per training sample (4)"}},
		{"node id = m", "0\n1\n2\n1\n", 2, []string{"line 3: node 2, but there are 2 nodes (want 0..1)"}},
		{"negative node id", "0\n-1\n0\n1\n", 2, []string{"line 2: node -1"}},
		{"not a number", "0\n1\nx\n1\n", 2, []string{`line 3: "x" is not a node id`}},
		{"blank line", "0\n\n0\n1\n", 2, []string{`line 2: "" is not a node id`}},
		{"sample and node pairs", "0 0\n1 1\n2 0\n3 1\n", 2, []string{`line 1: "0 0" is not a node id`}},
		{"long line", strings.Repeat("1", 100) + "\n", 2, []string{"line 1: longer than 64 bytes"}},
		{"a node left empty", "0\n0\n2\n2\n", 3, []string{"node 1 would get no samples"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, dir, strings.ReplaceAll(c.name, " ", "-"), []byte(c.text))
			_, err := PartitionSpec{Kind: "file", Path: path}.Apply(d, c.m, 1)
			wantErr(t, err, append([]string{path}, c.parts...)...)
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of several lines: %q", err)
			}
		})
	}
	_, err := PartitionFile(d, 2, dir)
	wantErr(t, err, dir, "a directory, want a regular file")
	_, err = PartitionFile(d, 2, filepath.Join(dir, "none"))
	wantErr(t, err, filepath.Join(dir, "none"), "no such file")
	if _, err := ParsePartition("file:"); err == nil || !strings.Contains(err.Error(), "path") {
		t.Fatalf("file without a path: %v", err)
	}
}
