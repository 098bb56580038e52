package transport

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gtstorm/gtstorm/decentral/cluster"
)

// TestKernelSets: every rank's kernel set reaches rank 0 with its input
// files, so that rank 0 can name them all; a rank that names none (an
// earlier build, or plain AgreeInputs) is listed as "".
func TestKernelSets(t *testing.T) {
	files := []cluster.Fingerprint{{Path: "/data/a1a", Size: 100, SHA256: "aa11"}}
	for _, tc := range []struct {
		name string
		sets []string // by rank; "-" calls AgreeInputs
		want []string
	}{
		{"same", []string{"avx2", "avx2", "avx2"}, []string{"avx2", "avx2", "avx2"}},
		{"mixed", []string{"avx512", "go", "neon"}, []string{"avx512", "go", "neon"}},
		{"one says none", []string{"avx2", "-", "go"}, []string{"avx2", "", "go"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := newCluster(t, 3, 3, func(i int) int { return i }, func(r int, c *Config) { c.PeerTimeout = 5 * time.Second })
			ctx := testCtx(t, 20*time.Second)
			errs := make([]error, 3)
			var wg sync.WaitGroup
			for r, x := range cl.xs {
				wg.Go(func() {
					if tc.sets[r] == "-" {
						errs[r] = x.Control().AgreeInputs(ctx, slices.Clone(files))
						return
					}
					errs[r] = x.Control().AgreeInputsKernels(ctx, slices.Clone(files), tc.sets[r])
				})
			}
			wg.Wait()
			for r, err := range errs {
				if err != nil {
					t.Fatalf("rank %d: %v", r, err)
				}
			}
			if got := cl.xs[0].Control().KernelSets(); !slices.Equal(got, tc.want) {
				t.Errorf("rank 0's kernel sets %q, want %q", got, tc.want)
			}
			if got := cl.xs[1].Control().KernelSets(); got != nil {
				t.Errorf("rank 1's kernel sets %q, want none (rank 0 gathers them)", got)
			}
		})
	}
}

// TestPackKernels: a kernel set's name travels in a HELLO's Round and back;
// a name that cannot travel is sent as none, and a Round that names none
// reads as "".
func TestPackKernels(t *testing.T) {
	for _, name := range []string{"avx512", "avx2", "neon", "go", "sve2-x_1"[:7]} {
		if got := unpackKernels(packKernels(name)); got != name {
			t.Errorf("%q travels as %q", name, got)
		}
	}
	for _, name := range []string{"", "avx512bw", "AVX2", "a b", "é"} {
		if r := packKernels(name); r != 0 {
			t.Errorf("%q packs to %#x, want 0 (none)", name, r)
		}
	}
	for _, r := range []uint64{0, 1, 0x00ff, 0x0061_0000_0000_0061, 1 << 63} {
		if got := unpackKernels(r); got != "" {
			t.Errorf("Round %#x reads as %q, want none", r, got)
		}
	}
}
