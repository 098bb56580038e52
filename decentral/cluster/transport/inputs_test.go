package transport

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/cluster"
)

// TestAgreeInputs: ranks whose input files agree by size and SHA-256
// (wherever they lie, whatever their name) start; a rank whose copy of a file differs
// is refused, and both it and rank 0 fail naming the file and both ranks.
func TestAgreeInputs(t *testing.T) {
	a1a := []cluster.Fingerprint{{Path: "/data/a1a", Size: 100, SHA256: "aa11"}, {Path: "/data/a1a.t", Size: 50, SHA256: "bb22"}}
	moved := []cluster.Fingerprint{{Path: "/elsewhere/a1a", Size: 100, SHA256: "aa11"}, {Path: "/elsewhere/a1a.t", Size: 50, SHA256: "bb22"}}
	flipped := []cluster.Fingerprint{{Path: "/data/a1a", Size: 100, SHA256: "ff99"}, {Path: "/data/a1a.t", Size: 50, SHA256: "bb22"}}
	renamed := []cluster.Fingerprint{{Path: "/data/train.svm", Size: 100, SHA256: "aa11"}, {Path: "/data/test.svm", Size: 50, SHA256: "bb22"}}
	for _, tc := range []struct {
		name  string
		files [][]cluster.Fingerprint // by rank
		want  []string                // in rank 0's and rank 1's errors; none: no error
	}{
		{"same", [][]cluster.Fingerprint{a1a, a1a, a1a}, nil},
		{"moved", [][]cluster.Fingerprint{a1a, moved, a1a}, nil},
		{"renamed", [][]cluster.Fingerprint{a1a, renamed, a1a}, nil},
		{"labels flipped", [][]cluster.Fingerprint{a1a, flipped, a1a}, []string{"input file a1a differs", "rank 0 has /data/a1a (100 bytes, sha256 aa11…)", "rank 1 has /data/a1a (100 bytes, sha256 ff99…)"}},
		{"a file missing", [][]cluster.Fingerprint{a1a, a1a[:1], a1a}, []string{"rank 0 reads /data/a1a.t, which rank 1 does not"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // a refused rank waits out its peer timeout
			cl := newCluster(t, 3, 3, func(i int) int { return i }, func(r int, c *Config) { c.PeerTimeout = 5 * time.Second })
			ctx := testCtx(t, 20*time.Second)
			errs := make([]error, 3)
			var wg sync.WaitGroup
			for r, x := range cl.xs {
				wg.Go(func() { errs[r] = x.Control().AgreeInputs(ctx, slices.Clone(tc.files[r])) })
			}
			wg.Wait()
			for r := range 2 {
				switch {
				case tc.want == nil && errs[r] != nil:
					t.Errorf("rank %d: %v", r, errs[r])
				case tc.want != nil && errs[r] == nil:
					t.Errorf("rank %d agreed to differing input files", r)
				case tc.want != nil:
					wantIn(t, "an error", errs[r].Error(), tc.want...)
				}
			}
			if errs[2] != nil {
				t.Errorf("rank 2, whose files agree with rank 0's: %v", errs[2])
			}
		})
	}
}
