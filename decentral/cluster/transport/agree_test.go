package transport

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAgreeRound: ranks agree, through rank 0, on the latest round all of
// them keep, and fail naming it when there is none.
func TestAgreeRound(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rounds [][]int
		want   int
	}{
		{"a round behind", [][]int{{8, 12, 16, 20}, {4, 8, 12, 16}, {12, 16, 20, 24}}, 16},
		{"all equal", [][]int{{0}, {0}, {0}}, 0},
		{"none in common", [][]int{{4}, {8}, {4, 8}}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := newCluster(t, 3, 6, func(i int) int { return i / 2 }, func(r int, c *Config) { c.PeerTimeout = 5 * time.Second })
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			got := make([]int, 3)
			errs := make([]error, 3)
			var wg sync.WaitGroup
			for r, x := range cl.xs {
				wg.Go(func() { got[r], errs[r] = x.Control().AgreeRound(ctx, tc.rounds[r]) })
			}
			wg.Wait()
			for r := range got {
				switch {
				case tc.want < 0 && (errs[r] == nil || !strings.Contains(errs[r].Error(), "no round")):
					t.Errorf("rank %d: round %d, error %v; want no common round", r, got[r], errs[r])
				case tc.want >= 0 && (errs[r] != nil || got[r] != tc.want):
					t.Errorf("rank %d: round %d, error %v; want %d", r, got[r], errs[r], tc.want)
				}
			}
		})
	}
}
