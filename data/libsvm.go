package data

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
)

// maxLibSVMLine bounds one LibSVM line (16 MiB); longer lines are an error.
const maxLibSVMLine = 1 << 24

// MaxInferredFeatures bounds the feature count LoadLibSVM infers from the
// largest index in a file: a stray index such as 2147483647 would otherwise
// make a model with 2³¹ parameters. A larger count must be given explicitly.
const MaxInferredFeatures = 10_000_000

// FeatureCountError reports a LibSVM file whose feature count, inferred from
// its largest index, exceeds Bound (MaxInferredFeatures). Passing the count
// explicitly lifts the bound; callers may add how their users do that.
type FeatureCountError struct {
	File     string // the file, "" if the data came from a reader
	Line     int    // the line holding the index
	Features int    // the count the index implies (the index itself)
	Bound    int    // the largest count inferred
}

func (e *FeatureCountError) Error() string {
	msg := fmt.Sprintf("line %d: feature index %d would make %d features, above %d, the most inferred from the data; "+
		"give the feature count explicitly if the data really has that many", e.Line, e.Features, e.Features, e.Bound)
	if e.File != "" {
		msg = "load " + e.File + ": " + msg
	}
	return msg
}

// LoadLibSVM reads a LibSVM text file (`label idx:val idx:val ...`, indices
// 1-based and increasing, labels ±1 or 0/1 mapped to {0, 1}) into a sparse
// Dataset with Shape [features] and Classes 2. With features == 0 the count
// is the largest index in the file, and an index above MaxInferredFeatures
// is a *FeatureCountError; otherwise an index above features is an error.
// Blank lines and `#` comments are skipped; gzip or bzip2 files are
// decompressed transparently.
func LoadLibSVM(path string, features int) (*Dataset, error) {
	s, err := openSource(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	defer s.Close()
	d, err := parseLibSVM(s, features)
	if err != nil {
		var fc *FeatureCountError
		if errors.As(err, &fc) {
			fc.File = path
			return nil, fc
		}
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	d.Name = filepath.Base(path)
	return d, nil
}

// parseLibSVM parses LibSVM text from r; see LoadLibSVM.
func parseLibSVM(r io.Reader, features int) (*Dataset, error) {
	if features < 0 {
		return nil, fmt.Errorf("feature count %d: want 0 (infer) or more", features)
	}
	if features > math.MaxInt32 {
		return nil, fmt.Errorf("feature count %d: more than %d", features, math.MaxInt32)
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), maxLibSVMLine)
	d := &Dataset{Classes: 2, RowPtr: []int{0}}
	maxIdx := 0
	line := 0
	for sc.Scan() {
		line++
		text := sc.Bytes()
		if i := bytes.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		label, rest, ok := nextField(text)
		if !ok {
			continue // blank or comment-only line
		}
		y, err := parseLabel(label)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		prev := 0
		for {
			var tok []byte
			if tok, rest, ok = nextField(rest); !ok {
				break
			}
			colon := bytes.IndexByte(tok, ':')
			if colon < 0 {
				return nil, fmt.Errorf("line %d: feature %q: want index:value", line, tok)
			}
			idx, ok := parseIndex(tok[:colon])
			if !ok {
				return nil, fmt.Errorf("line %d: feature %q: index is not an integer from 1 to %d", line, tok, math.MaxInt32)
			}
			if idx <= prev {
				return nil, fmt.Errorf("line %d: feature %q: index %d after %d, want increasing indices", line, tok, idx, prev)
			}
			if features > 0 && idx > features {
				return nil, fmt.Errorf("line %d: feature %q: index %d beyond the %d features", line, tok, idx, features)
			}
			if features == 0 && idx > MaxInferredFeatures {
				return nil, &FeatureCountError{Line: line, Features: idx, Bound: MaxInferredFeatures}
			}
			v, err := strconv.ParseFloat(string(tok[colon+1:]), 32)
			if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, fmt.Errorf("line %d: feature %q: value is not a finite number", line, tok)
			}
			prev = idx
			d.Cols = append(d.Cols, int32(idx-1))
			d.Vals = append(d.Vals, float32(v))
		}
		maxIdx = max(maxIdx, prev)
		d.Labels = append(d.Labels, y)
		d.RowPtr = append(d.RowPtr, len(d.Cols))
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("line %d: longer than %d bytes", line+1, maxLibSVMLine)
		}
		return nil, fmt.Errorf("after line %d: %w", line, readErr(err, -1))
	}
	if len(d.Labels) == 0 {
		return nil, errors.New("no samples (want lines of `label idx:val ...`)")
	}
	if features == 0 {
		features = max(maxIdx, 1)
	}
	d.Shape = []int{features}
	return d, nil
}

// nextField splits off the first space- or tab-separated field of s.
func nextField(s []byte) (field, rest []byte, ok bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i == len(s) {
		return nil, nil, false
	}
	j := i
	for j < len(s) && !isSpace(s[j]) {
		j++
	}
	return s[i:j], s[j:], true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' }

// parseLabel maps a LibSVM binary label to a class: -1 and 0 → 0, +1 → 1.
func parseLabel(tok []byte) (uint8, error) {
	v, err := strconv.ParseFloat(string(tok), 64)
	switch {
	case err != nil:
		return 0, fmt.Errorf("label %q is not a number", tok)
	case v == -1 || v == 0:
		return 0, nil
	case v == 1:
		return 1, nil
	}
	return 0, fmt.Errorf("label %q is out of range: want a binary label, ±1 or 0/1", tok)
}

// parseIndex parses a decimal feature index in [1, MaxInt32].
func parseIndex(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 10 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n >= 1 && n <= math.MaxInt32
}

// LibSVMCounts are what ScanLibSVM counts in a LibSVM file.
type LibSVMCounts struct {
	Samples  int64 // lines with a label
	NonZeros int64 // the features given (the colons)
	MaxIndex int64 // the largest feature index
	Approx   bool  // extrapolated from the file's first bytes
}

// ScanLibSVM counts the samples, the non-zeros and the largest feature
// index of a LibSVM file, plain, gzip or bzip2 (as LoadLibSVM opens it),
// without loading it: it reads at most budget bytes of text and
// extrapolates the counts of a longer file by its size on disk. It checks
// nothing of the format: a line with any token counts as a sample. Where
// reading fails midway, it returns the counts so far with the error.
func ScanLibSVM(path string, budget int64) (LibSVMCounts, error) {
	src, err := openSource(path)
	if err != nil {
		return LibSVMCounts{}, err
	}
	defer src.Close()
	var (
		s    LibSVMCounts
		cur  int64 // the digits of the current token, while it is a number
		buf  = make([]byte, 1<<20)
		read int64
		// Where the scan is: at a token's start; in a number; the line has
		// a token (a sample); in a comment; past a feature's colon.
		start, inNum, hasToken, inComment, inValue = true, false, false, false, false
	)
	for read < budget {
		k, err := src.Read(buf)
		read += int64(k)
		for _, b := range buf[:k] {
			switch {
			case b == '\n':
				if hasToken {
					s.Samples++
				}
				start, inNum, hasToken, inComment, inValue = true, false, false, false, false
			case inComment:
			case b == '#':
				inComment = true
			case isSpace(b):
				start, inNum, inValue = true, false, false
			case inValue:
			case b == ':':
				s.NonZeros++
				if inNum {
					s.MaxIndex = max(s.MaxIndex, cur)
				}
				inNum, inValue = false, true
			case b >= '0' && b <= '9':
				if start {
					cur, inNum = 0, true
				}
				if inNum {
					cur = min(cur*10+int64(b-'0'), math.MaxInt32)
				}
				start, hasToken = false, true
			default:
				start, inNum, hasToken = false, false, true
			}
		}
		if err == io.EOF {
			if hasToken {
				s.Samples++
			}
			return s, nil
		}
		if err != nil {
			return s, err
		}
	}
	// The budget ran out: scale by the share of the file read.
	if raw, err := src.f.Seek(0, io.SeekCurrent); err == nil && raw > 0 && src.size > raw {
		scale := float64(src.size) / float64(raw)
		s.Samples = int64(float64(s.Samples) * scale)
		s.NonZeros = int64(float64(s.NonZeros) * scale)
	}
	s.Approx = true
	return s, nil
}
