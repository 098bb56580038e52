package transport

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral"
	"github.com/gtstorm/gtstorm/decentral/cluster/wire"
)

// TestGatherStateLargerThanAMessage: node states longer than one gRPC
// message (fedavg-cnn's 1.7 M parameters, 6.7 MB) reach rank 0 whole, bit
// for bit, in chunks, round after round; a small state beside them still
// travels in one frame.
func TestGatherStateLargerThanAMessage(t *testing.T) {
	owner := func(i int) int { return i / 2 }
	cl := newCluster(t, 2, 4, owner, nil)
	ctx := testCtx(t, 60*time.Second)
	big := func(node, n int) decentral.NodeState {
		x := make([]float32, n)
		for k := range x {
			x[k] = float32(node*n+k) * 0.5
		}
		return decentral.NodeState{Node: node, Samples: int64(node + 1), Evals: 2, Bytes: 3, Loss: float64(node), X: x}
	}
	sizes := []int{2*maxGatherWords + 17, 1, 2*maxGatherWords + 17, 1} // node 2 chunked, node 3 not
	for round := range 2 {
		var sent []decentral.NodeState
		for node, n := range sizes {
			sent = append(sent, big(node, n))
		}
		var wg sync.WaitGroup
		var err1 error
		wg.Go(func() {
			_, err1 = cl.xs[1].Control().Gather(ctx, round, sent[2:])
		})
		got, err := cl.xs[0].Control().Gather(ctx, round, sent[:2])
		wg.Wait()
		if err != nil || err1 != nil {
			t.Fatalf("round %d: rank 0 %v, rank 1 %v", round, err, err1)
		}
		for _, s := range got {
			w := sent[s.Node]
			if !slices.Equal(s.X, w.X) || s.Samples != w.Samples || s.Loss != w.Loss {
				t.Errorf("round %d: node %d's state of %d parameters arrived as %d, or changed", round, s.Node, len(w.X), len(s.X))
			}
		}
		if len(got) != 2 {
			t.Fatalf("round %d: rank 0 gathered %d states, want rank 1's 2", round, len(got))
		}
	}
}

// TestStateChunks: chunks of a state in order make it whole; one out of
// order, of another round or of another length is refused; a new state
// (offset 0) drops an unfinished one.
func TestStateChunks(t *testing.T) {
	frame := func(round uint64, off, total uint32, words ...uint32) wire.Frame {
		var b []byte
		for _, w := range words {
			b = append(b, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
		}
		return wire.Frame{Header: wire.Header{Kind: wire.Gather, Round: round, Offset: off, Total: total}, Payload: b}
	}
	type step struct {
		f       wire.Frame
		whole   bool
		err     string
		payload int // bytes of the whole state
	}
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"one frame", []step{{f: frame(1, 0, 2, 7, 8), whole: true, payload: 8}}},
		{"three chunks", []step{{f: frame(1, 0, 5, 1, 2)}, {f: frame(1, 2, 5, 3, 4)}, {f: frame(1, 4, 5, 5), whole: true, payload: 20}}},
		{"restart drops the unfinished", []step{{f: frame(1, 0, 4, 1, 2)}, {f: frame(2, 0, 3, 1, 2)}, {f: frame(2, 2, 3, 3), whole: true, payload: 12}}},
		{"gap", []step{{f: frame(1, 0, 5, 1, 2)}, {f: frame(1, 3, 5, 4, 5), err: "at word 3 of 5 of round 1, want word 2 of 5"}}},
		{"other round", []step{{f: frame(1, 0, 4, 1, 2)}, {f: frame(2, 2, 4, 3, 4), err: "of round 2, want word 2 of 4 of round 1"}}},
		{"other length", []step{{f: frame(1, 0, 4, 1, 2)}, {f: frame(1, 2, 6, 3, 4), err: "of 6 of round 1, want word 2 of 4"}}},
		{"no start", []step{{f: frame(1, 2, 4, 3, 4), err: "want word 0 of 0"}}},
	} {
		var p stateChunks
		for i, s := range c.steps {
			f := s.f
			whole, err := p.add(&f)
			switch {
			case s.err != "":
				if err == nil || !strings.Contains(err.Error(), s.err) {
					t.Errorf("%s: step %d: error %v, want one with %q", c.name, i, err, s.err)
				}
			case err != nil || whole != s.whole:
				t.Errorf("%s: step %d: whole %v, error %v; want whole %v", c.name, i, whole, err, s.whole)
			case whole && (len(f.Payload) != s.payload || f.Offset != 0):
				t.Errorf("%s: step %d: whole state of %d bytes at %d, want %d at 0", c.name, i, len(f.Payload), f.Offset, s.payload)
			}
		}
	}
}
