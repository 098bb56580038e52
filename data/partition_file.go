package data

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gtstorm/gtstorm/internal/inputfile"
)

// A partition file (--partition file:PATH) is a text file with one line
// per training sample, in the samples' order: line k holds the node, a
// whole number in [0, m), that holds sample k−1. Spaces around the number
// and a final newline are allowed (and \r\n line ends); nothing else is:
// no blank lines, no comments. It must have exactly as many lines as the
// training set has samples, and give every node at least one sample.

// maxPartitionLine bounds a line of a partition file (a node id is at most
// a few digits).
const maxPartitionLine = 64

// ReadPartitionFile reads the partition file at path for n samples over m
// nodes and returns the node of each sample. It refuses, in one line
// naming the file, anything that is not a regular file, a line that is
// not a node id or names a node ≥ m, and a count of lines other than n.
func ReadPartitionFile(path string, n, m int) ([]int, error) {
	f, _, err := inputfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("partition file: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, maxPartitionLine), maxPartitionLine)
	nodes := make([]int, 0, n)
	for sc.Scan() {
		line := len(nodes) + 1
		if line > n {
			return nil, fmt.Errorf("partition file %s: more than %d lines, want one per training sample (%d)", path, n, n)
		}
		text := strings.TrimSpace(sc.Text())
		id, err := strconv.Atoi(text)
		switch {
		case err != nil:
			return nil, fmt.Errorf("partition file %s: line %d: %q is not a node id (want a whole number in [0, %d))", path, line, text, m)
		case id < 0 || id >= m:
			return nil, fmt.Errorf("partition file %s: line %d: node %d, but there are %d nodes (want 0..%d)", path, line, id, m, m-1)
		}
		nodes = append(nodes, id)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("partition file %s: line %d: longer than %d bytes, not a node id", path, len(nodes)+1, maxPartitionLine)
		}
		return nil, fmt.Errorf("partition file %s: %w", path, err)
	}
	if len(nodes) != n {
		return nil, fmt.Errorf("partition file %s: %d lines, want one per training sample (%d)", path, len(nodes), n)
	}
	return nodes, nil
}

// PartitionFile gives sample k of d to the node that line k+1 of the
// partition file at path names (see ReadPartitionFile); a node left
// without samples is an error.
func PartitionFile(d *Dataset, m int, path string) (*Partition, error) {
	what := "file:" + path
	if err := checkNodes(d, m, what); err != nil {
		return nil, err
	}
	of, err := ReadPartitionFile(path, d.Len(), m)
	if err != nil {
		return nil, err
	}
	nodes := make([][]int, m)
	for k, i := range of {
		nodes[i] = append(nodes[i], k)
	}
	return newPartition(d, nodes, what)
}

// PartitionFileSizes returns how many samples the partition file at path
// gives each of m nodes, for n samples.
func PartitionFileSizes(path string, n, m int) ([]int, error) {
	of, err := ReadPartitionFile(path, n, m)
	if err != nil {
		return nil, err
	}
	sizes := make([]int, m)
	for _, i := range of {
		sizes[i]++
	}
	return sizes, nil
}
