package transport

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"

	"github.com/gtstorm/gtstorm/decentral/cluster"
	"github.com/gtstorm/gtstorm/decentral/cluster/wire"
)

// Agreeing on the inputs: the config hash leaves out where the data lie,
// which may differ between hosts, so every rank tells rank 0, on its gather
// stream, the fingerprints of the files it read, in a HELLO frame with K =
// inputsK whose text has one line per file ("size sha256 name"); rank 0
// compares them with its own and answers "" when they agree, or the
// difference. The frame's Round, unused otherwise, carries the rank's
// kernel set (see packKernels).
const inputsK = 2

// AgreeInputs compares this rank's input files with rank 0's, file by file
// in order, by base name, size and SHA-256, and returns an error naming the
// first file that differs and both ranks. Rank 0 waits at most the peer
// timeout for every other rank's files and fails if any rank's differ;
// another rank waits for rank 0's answer at most twice the peer timeout.
func (c *Control) AgreeInputs(ctx context.Context, files []cluster.Fingerprint) error {
	return c.AgreeInputsKernels(ctx, files, "")
}

// AgreeInputsKernels is AgreeInputs that also tells rank 0 the kernel set
// this rank computes with (see kernels.go): rank 0's KernelSets then
// lists every rank's.
func (c *Control) AgreeInputsKernels(ctx context.Context, files []cluster.Fingerprint, kernels string) error {
	text := formatInputs(files)
	if len(text) > wire.MaxText {
		return fmt.Errorf("transport: rank %d: the fingerprints of %d input files take %d bytes, more than a frame's %d", c.cfg.Rank, len(files), len(text), wire.MaxText)
	}
	if c.cfg.Rank != 0 {
		return c.askInputs(ctx, text, kernels)
	}
	c.fileKernels(0, packKernels(kernels))
	g := &c.gather
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inputs == nil {
		g.inputs = make(map[int][]cluster.Fingerprint)
	}
	g.inputs[0] = files
	g.cond.Broadcast()
	deadline := time.Now().Add(c.timeout)
	err := c.waitGatherLocked(ctx, func() bool { return len(g.inputs) == len(c.cfg.Addrs) }, func() error {
		for r := range c.cfg.Addrs {
			if _, ok := g.inputs[r]; !ok && c.stopped(r) {
				return fmt.Errorf("transport: rank 0: input files: %w", c.stoppedErr(r))
			}
		}
		if time.Now().Before(deadline) {
			return nil
		}
		for r := range c.cfg.Addrs {
			if _, ok := g.inputs[r]; !ok {
				return fmt.Errorf("transport: rank 0: input files: %w",
					&PeerTimeoutError{Rank: r, Addr: c.cfg.Addrs[r], What: "its input files' fingerprints", Timeout: c.timeout, Last: c.lastOf(r)})
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var differ []int
	for r := 1; r < len(c.cfg.Addrs); r++ {
		if e := compareInputs(files, 0, g.inputs[r], r); e != nil {
			differ = append(differ, r)
			if err == nil {
				err = fmt.Errorf("transport: rank 0: %w", e)
			}
		}
	}
	if err != nil {
		c.awaitToldLocked(ctx, differ)
	}
	return err
}

// awaitToldLocked waits, at most the peer timeout, until every rank of
// ranks has been told how its input files differ and has closed its gather
// stream, having read the answer: rank 0, which stops next, would
// otherwise close its connections with the answer still on the way, and
// the rank would only see the connection drop. It holds c.gather.mu.
func (c *Control) awaitToldLocked(ctx context.Context, ranks []int) {
	g := &c.gather
	deadline := time.Now().Add(c.timeout)
	c.waitGatherLocked(ctx, func() bool {
		for _, r := range ranks {
			if s := g.told[r]; s == nil || s.Err() == nil {
				return false
			}
		}
		return true
	}, func() error {
		if time.Now().After(deadline) {
			return context.DeadlineExceeded
		}
		return nil
	})
}

// stopped reports whether rank r said BYE.
func (c *Control) stopped(r int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peers[r].stopped >= 0
}

// stoppedErr returns the *PeerStoppedError of rank r, which said BYE.
func (c *Control) stoppedErr(r int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stoppedError(r)
}

// askInputs sends this rank's input files (their text) and kernel set to
// rank 0 and returns the difference rank 0 answers, if any.
func (c *Control) askInputs(ctx context.Context, text, kernels string) error {
	h := wire.Header{Kind: wire.Hello, K: inputsK, Round: packKernels(kernels)}
	answer, err := c.askRank0As(ctx, h, "the comparison of input files", text)
	if err != nil {
		return err
	}
	if answer != "" {
		return fmt.Errorf("transport: rank %d: %s", c.cfg.Rank, answer)
	}
	return nil
}

// answerInputs files rank's input files (the text of an inputs frame),
// waits for rank 0's own and answers with the difference, if any.
func (c *Control) answerInputs(ss grpc.ServerStream, rank int, text string) error {
	files, err := parseInputs(text)
	if err != nil {
		return fmt.Errorf("input files from rank %d: %w", rank, err)
	}
	g := &c.gather
	g.mu.Lock()
	if g.inputs == nil {
		g.inputs = make(map[int][]cluster.Fingerprint)
	}
	g.inputs[rank] = files
	g.cond.Broadcast()
	deadline := time.Now().Add(c.timeout)
	err = c.waitGatherLocked(ss.Context(), func() bool { _, ok := g.inputs[0]; return ok }, func() error {
		if time.Now().After(deadline) {
			return fmt.Errorf("rank 0 did not compare input files within %v", c.timeout)
		}
		return nil
	})
	if err == nil {
		err = compareInputs(g.inputs[0], 0, files, rank)
	}
	g.mu.Unlock()
	answer := ""
	if err != nil {
		answer = err.Error()
		if len(answer) > wire.MaxText {
			answer = answer[:wire.MaxText]
		}
	}
	reply := wire.AppendText(nil, wire.Header{Kind: wire.Hello, K: inputsK}, answer)
	if err := ss.SendMsg(&reply); err != nil || answer == "" {
		return err
	}
	g.mu.Lock()
	if g.told == nil {
		g.told = make(map[int]context.Context)
	}
	g.told[rank] = ss.Context()
	g.cond.Broadcast()
	g.mu.Unlock()
	return nil
}

// compareInputs returns an error naming the first file whose fingerprint
// differs between rank a's files and rank b's, or nil.
func compareInputs(a []cluster.Fingerprint, ra int, b []cluster.Fingerprint, rb int) error {
	for k := range max(len(a), len(b)) {
		switch {
		case k >= len(a):
			return fmt.Errorf("input files differ: rank %d reads %s, which rank %d does not", rb, b[k].Path, ra)
		case k >= len(b):
			return fmt.Errorf("input files differ: rank %d reads %s, which rank %d does not", ra, a[k].Path, rb)
		}
		fa, fb := a[k], b[k]
		// By content: the same data under another name gives the same run.
		if fa.Size != fb.Size || fa.SHA256 != fb.SHA256 {
			return fmt.Errorf("input file %s differs: rank %d has %s (%d bytes, sha256 %.12s…), rank %d has %s (%d bytes, sha256 %.12s…)",
				filepath.Base(fa.Path), ra, fa.Path, fa.Size, fa.SHA256, rb, fb.Path, fb.Size, fb.SHA256)
		}
	}
	return nil
}

// formatInputs writes files one a line: size, SHA-256 and path.
func formatInputs(files []cluster.Fingerprint) string {
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "%d %s %s\n", f.Size, f.SHA256, f.Path)
	}
	return b.String()
}

// parseInputs reads formatInputs's text.
func parseInputs(text string) ([]cluster.Fingerprint, error) {
	var files []cluster.Fingerprint
	for line := range strings.Lines(text) {
		fields := strings.SplitN(strings.TrimSuffix(line, "\n"), " ", 3)
		if len(fields) != 3 {
			return nil, fmt.Errorf("line %q: want size, sha256 and path", line)
		}
		size, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || size < 0 {
			return nil, fmt.Errorf("line %q: size %q", line, fields[0])
		}
		files = append(files, cluster.Fingerprint{Path: fields[2], Size: size, SHA256: fields[1]})
	}
	if files == nil && text != "" {
		return nil, errors.New("no file")
	}
	return files, nil
}
